package io.gantry.placement.core;

/** What recovery decided about a device fault (mirrors the wire enum {@code FaultAction}). */
public enum DeviceAction {
    /** An application fault: the runs that held the device fail; the device stays in service. */
    FAIL_RUNS,
    /** A hardware fault: the GPU gets no new work; the runs holding it are released {@code DEVICE_FAULT}. */
    CORDON_DEVICE,
    /** A hardware fault, node-wide by policy: the node gets no new work; the runs holding the GPU are released. */
    CORDON_NODE,
    /** Too many faults within the window: node and GPU cordoned for repair; the runs holding the GPU are released. */
    DRAIN_NODE
}
