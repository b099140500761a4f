package io.gantry.queue.core;

/** Why the queue preempts a run; mirrors the wire enum of the same name. */
public enum PreemptionReason {
    /** A queue below its nominal quota takes back quota the victim's queue borrowed. */
    RECLAIM,
    /** A higher-priority job of the same queue needs the quota. */
    PRIORITY,
    /** The victim's queue is above its fair share and a queue below its own needs the quota. */
    FAIR_SHARE,
    /**
     * In a queue ordered by attained service, a job of the same priority at a lower service level needs the quota of
     * a run that has reached a higher one.
     */
    SERVICE_LEVEL,
    /** Its owner (or an admin) suspended the running job: stopped like a preemption and kept queued until resumed. */
    SUSPENDED,
    /**
     * The run's GPUs stayed idle for its queue's idle timeout (an interactive job): stopped like a preemption, then the
     * job fails with reason IDLE instead of being requeued.
     */
    IDLE
}
