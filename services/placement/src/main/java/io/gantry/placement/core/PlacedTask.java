package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/** Where one replica of a task was bound: the node and its exact GPU indices. */
public record PlacedTask(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices,
                         int cpuMillis, long memoryMiB) {
    public PlacedTask {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(nodeId, "nodeId");
        gpuIndices = List.copyOf(gpuIndices);
    }
}
