package io.gantry.queue.core;

/** Where a job is in its lifecycle, for its current attempt. */
public enum JobState {
    /** In its tenant's queue (possibly parked after a deferral). */
    QUEUED,
    /** Offered to placement; its GPUs are reserved (it may be placed and running by now). */
    DISPATCHED,
    /** Its allocation was released because a node failed; recovery decides whether it runs again. */
    INTERRUPTED,
    SUCCEEDED,
    FAILED,
    CANCELLED;

    public boolean terminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
