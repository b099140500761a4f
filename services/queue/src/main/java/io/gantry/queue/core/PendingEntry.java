package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job as the tenant sees it: its place in the queue and why it waits (null reason: not said yet);
 * {@code gpuMilli}: what it asks of its quota, in thousandths of a GPU; {@code quotaWait} (with QUOTA) and
 * {@code deferral} (with CAPACITY): the wait's typed cause, null when not known.
 */
public record PendingEntry(String jobId, String tenant, String queue, int attempt, long gpuMilli, Instant submittedAt,
                           boolean parked, WaitReason waitReason, String message, QuotaWait quotaWait,
                           DeferralCause deferral) {
}
