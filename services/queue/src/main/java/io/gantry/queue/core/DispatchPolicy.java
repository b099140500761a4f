package io.gantry.queue.core;

import java.util.Comparator;

/**
 * The replaceable ordering rule. The core owns admission (quotas, borrowing and lending limits, backfill,
 * starvation reservations); a policy only says which of the admissible jobs goes first:
 * {@link #queueOrder()} inside one queue, {@link #crossQueueOrder()} between the best candidates of different
 * queues. {@link FairSharePolicy} is the default.
 */
public interface DispatchPolicy {

    /** The order of one queue's pending jobs (also the order {@code GET /v1/queues/{name}/pending} shows). */
    Comparator<PendingJob> queueOrder();

    /** The order between candidates of different queues; {@code weightedShare} is the candidate queue's. */
    Comparator<Candidate> crossQueueOrder();

    /** A queue's best admissible job and the queue's weighted dominant share at the time of the cycle. */
    record Candidate(PendingJob job, double weightedShare) {
    }
}
