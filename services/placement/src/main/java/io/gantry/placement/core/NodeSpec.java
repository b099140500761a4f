package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/** What a node offers, as its backend registered it. Immutable; GPUs are kept sorted by index. */
public record NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                       Map<String, String> labels) {
    public NodeSpec {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(backend, "backend");
        if (nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
        if (cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("node " + nodeId + ": cpuMillis and memoryMiB must be >= 0");
        }
        List<Gpu> sorted = new ArrayList<>(gpus);
        sorted.sort(Comparator.comparingInt(Gpu::index));
        Set<Integer> seen = new HashSet<>();
        for (Gpu g : sorted) {
            if (!seen.add(g.index())) {
                throw new IllegalArgumentException("node " + nodeId + ": gpu index " + g.index() + " appears twice");
            }
        }
        gpus = List.copyOf(sorted);
        labels = Map.copyOf(new TreeMap<>(labels == null ? Map.of() : labels));
    }

    public int gpuCount() {
        return gpus.size();
    }

    /** How many GPUs of {@code model} the node has; {@code null} counts the largest group of one model. */
    public int gpuCount(String model) {
        if (model != null) {
            return (int) gpus.stream().filter(g -> g.model().equals(model)).count();
        }
        Map<String, Integer> byModel = new TreeMap<>();
        gpus.forEach(g -> byModel.merge(g.model(), 1, Integer::sum));
        return byModel.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    }
}
