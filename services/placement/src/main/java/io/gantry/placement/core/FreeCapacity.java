package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/**
 * Free whole GPUs of one model on eligible nodes, the most free on any one of them, and how many nodes have each
 * number free ({@code nodesWithFree.get(k)} = nodes with exactly k free): enough for a reader to tell whether a gang
 * of tasks of {@code s} GPUs each could fit at all (the sum over k of count x floor(k / s)), a necessary condition;
 * and {@code largestFreeMilli}, the most thousandths of one GPU free on a single device (1000 when a whole GPU is
 * free), what a fractional task can get at most.
 */
public record FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode, List<Integer> nodesWithFree,
                           int largestFreeMilli) {
    public FreeCapacity {
        Objects.requireNonNull(gpuModel, "gpuModel");
        nodesWithFree = List.copyOf(nodesWithFree);
    }

    /** Without the largest free share (-1: not known). */
    public FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode, List<Integer> nodesWithFree) {
        this(gpuModel, freeGpus, largestFreeOnNode, nodesWithFree, -1);
    }

    /** Without the per-node counts. */
    public FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode) {
        this(gpuModel, freeGpus, largestFreeOnNode, List.of(), -1);
    }
}
