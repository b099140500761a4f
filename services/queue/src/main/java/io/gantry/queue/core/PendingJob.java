package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job as a {@link DispatchPolicy} orders it.
 *
 * @param gpuMilli   what it asks of its quota, in thousandths of a GPU
 * @param classValue the value of its priority class (higher first)
 * @param priority   {@code JobSpec.priority}: a tiebreak within the class, inside one queue only
 * @param level      its service level in an attained-service queue (0 first; always 0 in a FIFO queue): a tiebreak
 *                   after the priority, inside one queue only
 */
public record PendingJob(String jobId, String tenant, String queue, int attempt, long gpuMilli, Instant submittedAt,
                         int classValue, int priority, int level) {
    public PendingJob(String jobId, String tenant, String queue, int attempt, long gpuMilli, Instant submittedAt,
                      int classValue, int priority) {
        this(jobId, tenant, queue, attempt, gpuMilli, submittedAt, classValue, priority, 0);
    }
}
