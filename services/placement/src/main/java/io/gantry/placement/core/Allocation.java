package io.gantry.placement.core;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/** A granted run: the devices every task of one job attempt holds from {@code grantedAt} until released. */
public record Allocation(String allocationId, String jobId, String tenant, int attempt, List<PlacedTask> placements,
                         Instant grantedAt, String backend) {
    public Allocation {
        Objects.requireNonNull(allocationId, "allocationId");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(grantedAt, "grantedAt");
        Objects.requireNonNull(backend, "backend");
        placements = List.copyOf(placements);
    }

    public boolean touches(String nodeId) {
        return placements.stream().anyMatch(p -> p.nodeId().equals(nodeId));
    }

    public int totalGpus() {
        return placements.stream().mapToInt(p -> p.gpuIndices().size()).sum();
    }
}
