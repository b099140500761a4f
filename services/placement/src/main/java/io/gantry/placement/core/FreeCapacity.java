package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/**
 * Free whole GPUs of one model on eligible nodes, the most free on any one of them, and how many nodes have each
 * number free ({@code nodesWithFree.get(k)} = nodes with exactly k free): enough for a reader to tell whether a gang
 * of tasks of {@code s} GPUs each could fit at all (the sum over k of count x floor(k / s)), a necessary condition;
 * {@code largestFreeMilli}, the most thousandths of one GPU free on a single device (1000 when a whole GPU is
 * free), what a fractional task can get at most; and the most free CPU on one socket and memory on one node next to
 * such a GPU, what one task there can get at most (so a gang short of CPU is not woken by free GPUs alone).
 */
public record FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode, List<Integer> nodesWithFree,
                           int largestFreeMilli, long largestFreeCpuMillis, long largestFreeMemoryMiB) {
    public FreeCapacity {
        Objects.requireNonNull(gpuModel, "gpuModel");
        nodesWithFree = List.copyOf(nodesWithFree);
    }

    /** Without the CPU and memory next to free GPUs (-1: not known). */
    public FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode, List<Integer> nodesWithFree,
                        int largestFreeMilli) {
        this(gpuModel, freeGpus, largestFreeOnNode, nodesWithFree, largestFreeMilli, -1, -1);
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
