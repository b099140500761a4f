package io.gantry.queue.core;

/** Why a queued job is not dispatched; mirrors the wire enum of the same name (the detail is in the message). */
public enum WaitReason {
    /** It does not fit its queue's quota now (own nominal, borrowing limit, or what its cohort has free). */
    QUOTA,
    /** Placement deferred it; it is parked until cluster capacity changes. */
    CAPACITY,
    /** It could not be admitted even if its cohort tree were idle, or it has no queue, class or flavour. */
    NEVER_FITS,
    /** A job it depends on has not ended as its condition asks; it is kept out of the queue order meanwhile. */
    DEPENDENCY,
    /** It was submitted suspended or its owner suspended it; it is not dispatched until resumed. */
    SUSPENDED,
    /**
     * A money budget of its tenant or queue is exhausted for the month with action HOLD: kept out of dispatch until
     * billing announces it is no longer exhausted or the month ends.
     */
    BUDGET,
    /** Its last run failed by its own fault and it waits out its retry backoff before it is offered again. */
    BACKOFF
}
