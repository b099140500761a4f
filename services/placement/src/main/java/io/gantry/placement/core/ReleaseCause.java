package io.gantry.placement.core;

/** Why an allocation ended (mirrors the wire enum {@code ReleaseReason}). */
public enum ReleaseCause {
    RUN_SUCCEEDED,
    RUN_FAILED,
    CANCELLED,
    NODE_FAILED
}
