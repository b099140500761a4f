package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/**
 * Free whole GPUs of one model on eligible nodes, the most free on any one of them, and how many nodes have each
 * number free ({@code nodesWithFree.get(k)} = nodes with exactly k free): enough for a reader to tell whether a gang
 * of tasks of {@code s} GPUs each could fit at all (the sum over k of count x floor(k / s)), a necessary condition.
 */
public record FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode, List<Integer> nodesWithFree) {
    public FreeCapacity {
        Objects.requireNonNull(gpuModel, "gpuModel");
        nodesWithFree = List.copyOf(nodesWithFree);
    }

    /** Without the per-node counts. */
    public FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode) {
        this(gpuModel, freeGpus, largestFreeOnNode, List.of());
    }
}
