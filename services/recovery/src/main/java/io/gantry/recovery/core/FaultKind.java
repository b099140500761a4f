package io.gantry.recovery.core;

/** What a backend observed (mirrors the wire enum {@code DeviceFaultKind}). */
public enum FaultKind {
    XID, ECC_DOUBLE_BIT, NVLINK_DOWN, PCIE_LINK_DOWN, GPU_LOST, THERMAL,
    /** Placement cordoned the node itself before a gang started; recovery only records it. */
    PREFLIGHT_FAILED,
    UNKNOWN
}
