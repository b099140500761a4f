package io.gantry.queue.core;

/**
 * Why placement released an attempt's devices (placement's {@code ReleaseReason}, symbol for symbol). The queue
 * decides on it: an infrastructure failure waits for recovery's decision, a preemption is explained, the rest end
 * or free the attempt.
 */
public enum ReleaseCause {
    RUN_SUCCEEDED,
    RUN_FAILED,
    CANCELLED,
    NODE_FAILED,
    PREEMPTED,
    TIME_LIMIT,
    /** A hardware fault on a device the run held (recovery stopped the run and decides whether it runs again). */
    DEVICE_FAULT,
    /** The queue stopped the run for idling (JobPreempted reason IDLE): the job ends, reason IDLE. */
    IDLE,
    /** The queue stopped the run because its job was suspended (JobPreempted reason SUSPENDED): requeued, suspended. */
    SUSPENDED;

    /** The queue's own stop of a run it requeues (a preemption, or a suspension). */
    public boolean stoppedToRequeue() {
        return this == PREEMPTED || this == SUSPENDED;
    }

    /** Whether recovery decides what happens next (requeue or give up), not the queue. */
    public boolean recoveryDecides() {
        return this == NODE_FAILED || this == DEVICE_FAULT;
    }
}
