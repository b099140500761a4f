package io.gantry.recovery.core;

import java.util.List;
import java.util.Objects;

/**
 * A run that placement released because a node of its allocation failed.
 *
 * @param nodeIds the nodes the allocation held (recovery names the failed ones among them)
 */
public record InterruptedRun(String jobId, String tenant, int attempt, List<String> nodeIds) {
    public InterruptedRun {
        if (jobId == null || jobId.isBlank()) {
            throw new IllegalArgumentException("jobId must not be blank");
        }
        if (tenant == null || tenant.isBlank()) {
            throw new IllegalArgumentException("tenant must not be blank");
        }
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        }
        nodeIds = List.copyOf(Objects.requireNonNull(nodeIds, "nodeIds"));
    }
}
