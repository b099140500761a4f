package io.gantry.billing.kafka;

import jakarta.inject.Singleton;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * GPU models registered nodes have (from {@code placement.node-events}), so a price book naming a model no node has
 * is refused, and their GPU count (the capacity FinOps shares are measured against). Written by the event loop, read by HTTP threads; empty until a node is known (then not judged).
 */
@Singleton
public class KnownModels {
    private final Set<String> models = ConcurrentHashMap.newKeySet();
    private final java.util.Map<String, Integer> gpusByNode = new ConcurrentHashMap<>();

    void add(String model) {
        if (model != null && !model.isBlank()) {
            models.add(model);
        }
    }

    void node(String nodeId, int gpus) {
        gpusByNode.put(nodeId, gpus);
    }

    /** Registered GPU capacity in thousandths of a GPU (failed nodes included: they are expected back). */
    public long clusterGpuMilli() {
        return gpusByNode.values().stream().mapToLong(g -> 1000L * g).sum();
    }

    public Set<String> snapshot() {
        return Set.copyOf(models);
    }
}
