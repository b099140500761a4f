package io.gantry.queue.core;

import java.util.Comparator;

/**
 * Priority class first; then, across queues, the lower weighted dominant share (current allocation plus decayed
 * usage, see {@code docs/design/fair-share.md}); FIFO by original submit time, then job id, within equal standing.
 * Inside a queue {@code JobSpec.priority} breaks ties within a class, then the service level (least attained service
 * first, in a queue ordered so), before FIFO; neither orders jobs of different queues, so a tenant cannot buy a better
 * fair share by raising them.
 */
public final class FairSharePolicy implements DispatchPolicy {
    private static final Comparator<PendingJob> QUEUE_ORDER = Comparator
            .comparingInt(PendingJob::classValue).reversed()
            .thenComparing(Comparator.comparingInt(PendingJob::priority).reversed())
            .thenComparingInt(PendingJob::level)
            .thenComparing(PendingJob::submittedAt)
            .thenComparing(PendingJob::jobId);

    private static final Comparator<Candidate> CROSS = Comparator
            .comparingInt((Candidate c) -> c.job().classValue()).reversed()
            .thenComparingDouble(Candidate::weightedShare)
            .thenComparing(c -> c.job().submittedAt())
            .thenComparing(c -> c.job().jobId());

    @Override
    public Comparator<PendingJob> queueOrder() {
        return QUEUE_ORDER;
    }

    @Override
    public Comparator<Candidate> crossQueueOrder() {
        return CROSS;
    }
}
