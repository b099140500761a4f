package io.gantry.placement.core;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A granted run: the devices every task of one job attempt holds from {@code grantedAt} until released.
 * {@code timeLimitSeconds} is the job's time limit (null: none), counted from the run's start.
 */
public record Allocation(String allocationId, String jobId, String tenant, int attempt, List<PlacedTask> placements,
                         Instant grantedAt, String backend, Long timeLimitSeconds) {
    public Allocation {
        Objects.requireNonNull(allocationId, "allocationId");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(grantedAt, "grantedAt");
        Objects.requireNonNull(backend, "backend");
        placements = List.copyOf(placements);
        // a limit written by an older or buggy writer must not make a restore throw: no limit then
        timeLimitSeconds = timeLimitSeconds != null && timeLimitSeconds <= 0 ? null : timeLimitSeconds;
    }

    /** Without a time limit. */
    public Allocation(String allocationId, String jobId, String tenant, int attempt, List<PlacedTask> placements,
                      Instant grantedAt, String backend) {
        this(allocationId, jobId, tenant, attempt, placements, grantedAt, backend, null);
    }

    public boolean touches(String nodeId) {
        return placements.stream().anyMatch(p -> p.nodeId().equals(nodeId));
    }

    public int totalGpus() {
        return placements.stream().mapToInt(p -> p.gpuIndices().size()).sum();
    }
}
