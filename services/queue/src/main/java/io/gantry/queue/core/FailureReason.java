package io.gantry.queue.core;

/** Why a job failed; mirrors the wire enum of the same name. */
public enum FailureReason {
    /** A task exited non-zero or could not start. */
    RUN_FAILED,
    /** The run reached the job's time limit and placement stopped it. */
    TIME_LIMIT,
    /** The run was interrupted by a failure and recovery will not run it again. */
    RECOVERY_ABANDONED,
    /** The queue stopped the run because its GPUs stayed idle for its queue's idle timeout; not requeued. */
    IDLE
}
