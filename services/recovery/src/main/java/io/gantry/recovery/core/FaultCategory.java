package io.gantry.recovery.core;

/** Whose fault a device fault is (mirrors the wire enum {@code FaultCategory}). */
public enum FaultCategory {
    /** The program on the GPU: the run fails as a user failure; the device stays in service. */
    APPLICATION,
    /** The device or node: cordoned; the runs on it are stopped and requeued as an infrastructure failure. */
    HARDWARE
}
