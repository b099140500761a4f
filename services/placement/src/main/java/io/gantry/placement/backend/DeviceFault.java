package io.gantry.placement.backend;

import java.util.Objects;

/**
 * A fault an execution backend observed on a GPU or a whole node; placement publishes it on
 * {@code placement.device-events} and recovery decides what follows.
 *
 * @param gpuIndex null for a fault of the whole node
 * @param xid      the Xid code for {@link Kind#XID}, else null
 * @param source   where the backend learned it ({@code simulated}, {@code admin}, {@code fault-file},
 *                 {@code nvidia-smi}, {@code kernel-log}, {@code preflight})
 */
public record DeviceFault(String nodeId, Integer gpuIndex, Kind kind, Integer xid, String source, String message) {
    /** Mirrors the wire enum {@code DeviceFaultKind}. */
    public enum Kind { XID, ECC_DOUBLE_BIT, NVLINK_DOWN, PCIE_LINK_DOWN, GPU_LOST, THERMAL, PREFLIGHT_FAILED, UNKNOWN }

    public DeviceFault {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(source, "source");
        if (nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
        if (gpuIndex != null && gpuIndex < 0) {
            throw new IllegalArgumentException("gpuIndex must be >= 0, was " + gpuIndex);
        }
        if (kind == Kind.XID && xid == null) {
            throw new IllegalArgumentException("an XID fault needs its xid code");
        }
        if (kind != Kind.XID) {
            xid = null;
        }
        if (message == null || message.isBlank()) {
            message = describe(nodeId, gpuIndex, kind, xid);
        }
    }

    /** The default sentence: {@code Xid 79 on GPU 3 of sim-1}, {@code ECC_DOUBLE_BIT on node sim-2}. */
    static String describe(String nodeId, Integer gpuIndex, Kind kind, Integer xid) {
        String what = kind == Kind.XID ? "Xid " + xid : kind.name();
        return what + (gpuIndex == null ? " on node " + nodeId : " on GPU " + gpuIndex + " of " + nodeId);
    }

    /** Same fault, as far as a flood goes: same node, GPU, kind and code. */
    String floodKey() {
        return gpuIndex + "/" + kind + "/" + xid;
    }
}
