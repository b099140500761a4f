package io.gantry.admission.core;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The GPUs, and the CPU and memory of the largest NUMA socket, of every registered node, as far as admission needs
 * them. A node that registers again replaces its earlier registration (its hardware may have changed); nodes are
 * never forgotten, because a failed node is expected back and a spec that fits it is still placeable.
 */
public final class NodeCatalog {
    private final Map<String, Hardware> byNode = new LinkedHashMap<>();

    private record Hardware(List<String> gpuModels, long socketCpuMillis, long socketMemoryMiB, long cpuMillis,
                            long memoryMiB, Map<String, List<String>> migProfiles) {
    }

    /**
     * A node whose CPU and memory are not known.
     *
     * @param gpuModels the model of each GPU of the node, one entry per device
     */
    public void register(String nodeId, List<String> gpuModels) {
        register(nodeId, gpuModels, 0, 0, 0, 0);
    }

    /**
     * @param gpuModels       the model of each GPU of the node, one entry per device
     * @param socketCpuMillis the CPU of its largest NUMA socket (the whole node's when it has one), 0 if not known
     * @param socketMemoryMiB the memory of its largest NUMA socket (the whole node's where memory is not per
     *                        socket), 0 if not known
     * @param cpuMillis       the CPU of the whole node, 0 if not known
     * @param memoryMiB       the memory of the whole node, 0 if not known
     */
    public void register(String nodeId, List<String> gpuModels, long socketCpuMillis, long socketMemoryMiB,
                         long cpuMillis, long memoryMiB) {
        register(nodeId, gpuModels, socketCpuMillis, socketMemoryMiB, cpuMillis, memoryMiB, null);
    }

    /**
     * {@link #register(String, List, long, long, long, long)} with the MIG profiles its GPUs can host, by model
     * ({@code migProfiles}; null when the registration did not say).
     */
    public void register(String nodeId, List<String> gpuModels, long socketCpuMillis, long socketMemoryMiB,
                         long cpuMillis, long memoryMiB, Map<String, List<String>> migProfiles) {
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("node id must not be blank");
        }
        byNode.put(nodeId, new Hardware(List.copyOf(gpuModels), socketCpuMillis, socketMemoryMiB, cpuMillis,
                memoryMiB, migProfiles == null ? null : Map.copyOf(migProfiles)));
    }

    public ClusterLimits limits() {
        int maxGpus = 0;
        long maxCpu = 0;
        long maxMemory = 0;
        long totalCpu = 0;
        long totalMemory = 0;
        Map<String, Integer> maxByModel = new HashMap<>();
        Map<String, Integer> totalByModel = new HashMap<>();
        Map<String, java.util.Set<String>> mig = new HashMap<>();
        for (Hardware node : byNode.values()) {
            if (node.migProfiles() == null) {
                mig = null; // a node that did not say makes the whole cluster's offer not known
            } else if (mig != null) {
                for (Map.Entry<String, List<String>> e : node.migProfiles().entrySet()) {
                    mig.computeIfAbsent(e.getKey(), k -> new java.util.HashSet<>()).addAll(e.getValue());
                }
            }
            List<String> models = node.gpuModels();
            models.forEach(m -> totalByModel.merge(m, 1, Integer::sum));
            maxGpus = Math.max(maxGpus, models.size());
            Map<String, Integer> onNode = new HashMap<>();
            models.forEach(m -> onNode.merge(m, 1, Integer::sum));
            onNode.forEach((m, n) -> maxByModel.merge(m, n, Math::max));
            maxCpu = Math.max(maxCpu, node.socketCpuMillis());
            maxMemory = Math.max(maxMemory, node.socketMemoryMiB());
            // a node whose size is not known makes the whole cluster's not known
            totalCpu = totalCpu < 0 || node.cpuMillis() <= 0 ? -1 : totalCpu + node.cpuMillis();
            totalMemory = totalMemory < 0 || node.memoryMiB() <= 0 ? -1 : totalMemory + node.memoryMiB();
        }
        return new ClusterLimits(byNode.size(), maxGpus, maxByModel, totalByModel, maxCpu, maxMemory,
                Math.max(0, totalCpu), Math.max(0, totalMemory), byNode.isEmpty() ? null : mig);
    }
}
