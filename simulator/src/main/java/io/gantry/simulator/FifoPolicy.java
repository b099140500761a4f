package io.gantry.simulator;

import io.gantry.queue.core.DispatchPolicy;
import io.gantry.queue.core.PendingJob;

import java.util.Comparator;

/**
 * First come, first served through the queue core's ordering seam: original submit time, then job id, inside a
 * queue and across queues, ignoring shares and priorities. The core still admits any job that fits (its backfill),
 * so on its own this is FIFO + backfill; {@link Simulation} adds the head-of-line gate for strict FIFO.
 */
public final class FifoPolicy implements DispatchPolicy {
    private static final Comparator<PendingJob> ORDER = Comparator.comparing(PendingJob::submittedAt)
            .thenComparing(PendingJob::jobId);
    private static final Comparator<Candidate> CROSS = Comparator.comparing((Candidate c) -> c.job().submittedAt())
            .thenComparing(c -> c.job().jobId());

    @Override
    public Comparator<PendingJob> queueOrder() {
        return ORDER;
    }

    @Override
    public Comparator<Candidate> crossQueueOrder() {
        return CROSS;
    }
}
