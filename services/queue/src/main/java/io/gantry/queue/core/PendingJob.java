package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job as a {@link DispatchPolicy} orders it.
 *
 * @param gpuMilli   what it asks of its quota, in thousandths of a GPU
 * @param classValue the value of its priority class (higher first)
 * @param priority   {@code JobSpec.priority}: a tiebreak within the class, inside one queue only
 */
public record PendingJob(String jobId, String tenant, String queue, int attempt, long gpuMilli, Instant submittedAt,
                         int classValue, int priority) {
}
