package io.gantry.queue.core;

import java.time.Instant;

/** A queued job as the tenant sees it: its place in the queue and why it waits (null reason: not said yet). */
public record PendingEntry(String jobId, String tenant, String queue, int attempt, int gpus, Instant submittedAt,
                           boolean parked, WaitReason waitReason, String message) {
}
