package io.gantry.recovery.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A device fault a backend reported (through placement).
 *
 * @param eventId    the report's event id: each report is decided at most once
 * @param gpuIndex   null for a fault of the whole node
 * @param xid        the Xid code for {@link FaultKind#XID}, else null
 * @param reportedAt when placement published it, on placement's clock (the drain window and which runs were hit are
 *                   measured on that clock, never against recovery's)
 */
public record DeviceFaultReport(String eventId, String nodeId, Integer gpuIndex, FaultKind kind, Integer xid,
                                String message, Instant reportedAt) {
    public DeviceFaultReport {
        if (eventId == null || eventId.isBlank()) {
            throw new IllegalArgumentException("eventId must not be blank");
        }
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(reportedAt, "reportedAt");
        if (gpuIndex != null && gpuIndex < 0) {
            throw new IllegalArgumentException("gpuIndex must be >= 0, was " + gpuIndex);
        }
        if (kind == FaultKind.XID && xid == null) {
            throw new IllegalArgumentException("an XID report needs its xid code");
        }
        message = message == null ? "" : message;
    }
}
