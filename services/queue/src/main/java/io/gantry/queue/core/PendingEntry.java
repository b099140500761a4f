package io.gantry.queue.core;

import java.time.Instant;

/**
 * A queued job as the tenant sees it: its place in the queue and why it waits (null reason: not said yet);
 * {@code gpuMilli}: what it asks of its quota, in thousandths of a GPU; {@code quotaWait} (with QUOTA) and
 * {@code deferral} (with CAPACITY): the wait's typed cause, null when not known; {@code serviceLevel}: the level it
 * stands at in an attained-service queue (0 first, after a promotion too; always 0 in a FIFO queue) and
 * {@code attainedMilliGpuMillis}: the service its ended runs received, thousandths of a GPU x milliseconds.
 */
public record PendingEntry(String jobId, String tenant, String queue, int attempt, long gpuMilli, Instant submittedAt,
                           boolean parked, WaitReason waitReason, String message, QuotaWait quotaWait,
                           DeferralCause deferral, int serviceLevel, long attainedMilliGpuMillis) {
}
