package io.gantry.queue.core;

/** Why a queued job is not dispatched; mirrors the wire enum of the same name. */
public enum WaitReason {
    /** Dispatching it would take the tenant over its GPU quota (strict FIFO: the tenant waits behind it). */
    QUOTA,
    /** Placement deferred it; it is parked until cluster capacity changes. */
    CAPACITY,
    /** It needs more GPUs than the tenant's whole quota; it is skipped and never blocks the tenant. */
    NEVER_FITS
}
