package io.gantry.recovery.core;

/** Health of a node as recovery sees it. */
public enum NodeState {
    /** Seen within the heartbeat timeout (or not yet overdue). */
    HEALTHY,
    /** Declared failed; stays so until it shows a sign of life again. */
    FAILED
}
