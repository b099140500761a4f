package io.gantry.queue.core;

/**
 * What holds a job that quota keeps out ({@link WaitReason#QUOTA}); mirrors the wire enum of the same name. The
 * {@link Explainer}'s sentence says it with the numbers; this says it for programs (integrators, the simulator's
 * report).
 */
public enum QuotaWait {
    /** Any other quota wait. */
    OTHER,
    /** Its quota fits; jobs ahead of it in its queue go first. */
    TURN,
    /** Its queue (or its tenant's implicit quota) uses its own nominal quota. */
    OWN_QUOTA,
    /** Its queue would exceed nominal plus borrowing limit. */
    BORROWING_LIMIT,
    /** Its cohort tree has not enough free quota. */
    COHORT_FULL,
    /** Part of its queue's nominal quota is lent to other queues. */
    NOMINAL_LENT,
    /** The free quota is reserved for a starving job of its cohort tree. */
    HELD_FOR_STARVING_JOB,
    /** The free quota is reserved for a job that preempted runs to get it. */
    HELD_FOR_PREEMPTOR,
    /** It is the starving job and holds the reservation while it waits. */
    STARVING,
    /** Runs are being stopped for it. */
    PREEMPTING
}
