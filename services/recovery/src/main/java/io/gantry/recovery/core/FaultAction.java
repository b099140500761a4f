package io.gantry.recovery.core;

/** What placement does about a decided device fault (mirrors the wire enum {@code FaultAction}). */
public enum FaultAction {
    /** The runs that held the device fail; the device stays in service. */
    FAIL_RUNS,
    /** The GPU is cordoned; the runs holding it are stopped and released DEVICE_FAULT. */
    CORDON_DEVICE,
    /** The node is cordoned; the runs holding the faulty GPU (all its runs for a node-wide fault) are stopped. */
    CORDON_NODE,
    /** Too many faults within the window: node and GPU cordoned for repair; the runs holding the GPU are stopped. */
    DRAIN_NODE
}
