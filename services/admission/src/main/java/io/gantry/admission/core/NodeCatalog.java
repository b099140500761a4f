package io.gantry.admission.core;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The GPUs of every registered node, as far as admission needs them. A node that registers again replaces its
 * earlier registration (its hardware may have changed); nodes are never forgotten, because a failed node is
 * expected back and a spec that fits it is still placeable.
 */
public final class NodeCatalog {
    private final Map<String, List<String>> gpuModelsByNode = new LinkedHashMap<>();

    /**
     * @param gpuModels the model of each GPU of the node, one entry per device
     */
    public void register(String nodeId, List<String> gpuModels) {
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("node id must not be blank");
        }
        gpuModelsByNode.put(nodeId, List.copyOf(gpuModels));
    }

    public ClusterLimits limits() {
        int maxGpus = 0;
        Map<String, Integer> maxByModel = new HashMap<>();
        Map<String, Integer> totalByModel = new HashMap<>();
        for (List<String> models : gpuModelsByNode.values()) {
            models.forEach(m -> totalByModel.merge(m, 1, Integer::sum));
            maxGpus = Math.max(maxGpus, models.size());
            Map<String, Integer> onNode = new HashMap<>();
            models.forEach(m -> onNode.merge(m, 1, Integer::sum));
            onNode.forEach((m, n) -> maxByModel.merge(m, n, Math::max));
        }
        return new ClusterLimits(gpuModelsByNode.size(), maxGpus, maxByModel, totalByModel);
    }
}
