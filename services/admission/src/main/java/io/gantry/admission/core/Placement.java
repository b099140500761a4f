package io.gantry.admission.core;

import java.util.List;

/** Where one task replica runs: the node and the GPU indices on it. */
public record Placement(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices) {
    public Placement {
        gpuIndices = List.copyOf(gpuIndices);
    }
}
