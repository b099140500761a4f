package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job a policy may dispatch. {@code unparking} marks a job placement had deferred and that this cycle
 * (after a capacity change) gets one chance to be dispatched again.
 */
public record PendingJob(String jobId, String tenant, int attempt, int gpus, Instant submittedAt, int priority,
                         boolean unparking) {
}
