package io.gantry.placement.core;

/** Why a run failed (mirrors the wire enum {@code FailureReason}). */
public enum FailureCause {
    /** A task exited non-zero or could not start. */
    RUN_FAILED,
    /** The run reached its job's time limit and was stopped. */
    TIME_LIMIT
}
