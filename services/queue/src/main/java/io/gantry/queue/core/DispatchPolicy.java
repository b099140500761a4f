package io.gantry.queue.core;

import java.util.Comparator;

/**
 * The replaceable ordering rule: given an immutable snapshot, which jobs go to placement now and in what order.
 *
 * <p>A policy is a pure function. It does not emit facts and it cannot break the quota: {@link QueueCore} drops any
 * proposal that is not an eligible job or that would take its tenant over quota. Fair-share policies (cohorts,
 * DRF, preemption, backfill) implement this interface; {@link FifoRoundRobinPolicy} is the one in use.
 */
public interface DispatchPolicy {

    DispatchPlan plan(QueueSnapshot snapshot);

    /** The order in which a tenant's pending jobs are shown (and, for FIFO, dispatched). */
    Comparator<PendingJob> queueOrder();
}
