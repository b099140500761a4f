package io.gantry.placement.core;

/** Why an allocation ended (mirrors the wire enum {@code ReleaseReason}). */
public enum ReleaseCause {
    RUN_SUCCEEDED,
    RUN_FAILED,
    CANCELLED,
    NODE_FAILED,
    /** The queue preempted the run: its grace period ended, or its tasks stopped during it. */
    PREEMPTED,
    /** The run reached its job's time limit and was stopped. */
    TIME_LIMIT,
    /** Recovery found a hardware fault on a GPU (or node) the run held; recovery decides whether it runs again. */
    DEVICE_FAULT,
    /**
     * The queue stopped the run because its GPUs stayed idle for its queue's idle timeout (JobPreempted reason IDLE):
     * its grace period ended, or its tasks stopped during it.
     */
    IDLE,
    /**
     * The queue stopped the run because its job was suspended (JobPreempted reason SUSPENDED): its grace period
     * ended, or its tasks stopped during it.
     */
    SUSPENDED
}
