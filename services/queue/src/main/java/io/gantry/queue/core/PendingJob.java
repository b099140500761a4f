package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job as a {@link DispatchPolicy} orders it.
 *
 * @param classValue the value of its priority class (higher first)
 * @param priority   {@code JobSpec.priority}: a tiebreak within the class, inside one queue only
 */
public record PendingJob(String jobId, String tenant, String queue, int attempt, int gpus, Instant submittedAt,
                         int classValue, int priority) {
}
