package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/**
 * Capacity being drained for a starving gang: {@code nodes} take no new work except backfill that ends before the
 * drain does, and the gang is placed there when it is dispatched after the drain. Recorded as control labels on
 * the nodes' registrations ({@link NodeSpec#RESERVED_FOR_LABEL} and friends), so a restart rebuilds it exactly.
 *
 * @param domain the drained domain as the tenant reads it, e.g. {@code rack P1/S3}
 */
public record CapacityReservation(String jobId, String tenant, int attempt, String domain, List<String> nodes) {
    public CapacityReservation {
        Objects.requireNonNull(jobId, "jobId");
        nodes = List.copyOf(nodes);
    }
}
