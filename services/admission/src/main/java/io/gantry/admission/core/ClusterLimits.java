package io.gantry.admission.core;

import java.util.Map;
import java.util.TreeMap;

/**
 * What the registered nodes can hold at most, so that a spec that could never be placed is refused at the door
 * instead of waiting forever.
 *
 * @param nodes                 how many nodes are registered
 * @param maxGpusPerNode        the most GPUs any one node has
 * @param maxGpusPerNodeByModel per GPU model, the most GPUs of that model any one node has
 * @param totalGpusByModel      per GPU model, how many GPUs of it the whole cluster has (failed and cordoned
 *                              nodes included: they are expected back)
 * @param maxSocketCpuMillis    the most CPU (millicores) on one NUMA socket of any node (placement puts a task's
 *                              CPUs on its GPUs' socket), 0 when not known
 * @param maxSocketMemoryMiB    the most memory on one NUMA socket of any node (the whole node's where memory is not
 *                              registered per socket), 0 when not known
 * @param totalCpuMillis        the CPU (millicores) of every node together, 0 when not known
 * @param totalMemoryMiB        the memory of every node together, 0 when not known
 * @param migProfilesByModel    per GPU model, the MIG profiles some registered GPU of it can host (placement's
 *                              registrations say); null when a node did not say (an older placement): not judged
 */
public record ClusterLimits(int nodes, int maxGpusPerNode, Map<String, Integer> maxGpusPerNodeByModel,
                            Map<String, Integer> totalGpusByModel, long maxSocketCpuMillis, long maxSocketMemoryMiB,
                            long totalCpuMillis, long totalMemoryMiB,
                            Map<String, java.util.Set<String>> migProfilesByModel) {
    public ClusterLimits {
        maxGpusPerNodeByModel = Map.copyOf(maxGpusPerNodeByModel);
        totalGpusByModel = Map.copyOf(totalGpusByModel);
        if (migProfilesByModel != null) {
            Map<String, java.util.Set<String>> copy = new TreeMap<>();
            migProfilesByModel.forEach((m, p) -> copy.put(m, java.util.Set.copyOf(p)));
            migProfilesByModel = java.util.Collections.unmodifiableMap(copy);
        }
    }

    /** Without what MIG profiles the GPUs offer (not judged). */
    public ClusterLimits(int nodes, int maxGpusPerNode, Map<String, Integer> maxGpusPerNodeByModel,
                         Map<String, Integer> totalGpusByModel, long maxSocketCpuMillis, long maxSocketMemoryMiB,
                         long totalCpuMillis, long totalMemoryMiB) {
        this(nodes, maxGpusPerNode, maxGpusPerNodeByModel, totalGpusByModel, maxSocketCpuMillis, maxSocketMemoryMiB,
                totalCpuMillis, totalMemoryMiB, null);
    }

    /** Limits of GPUs only: CPU and memory not known. */
    public ClusterLimits(int nodes, int maxGpusPerNode, Map<String, Integer> maxGpusPerNodeByModel,
                         Map<String, Integer> totalGpusByModel) {
        this(nodes, maxGpusPerNode, maxGpusPerNodeByModel, totalGpusByModel, 0, 0, 0, 0);
    }

    /** No node registered yet: nothing that needs a GPU can be admitted. */
    public static ClusterLimits none() {
        return new ClusterLimits(0, 0, Map.of(), Map.of());
    }

    /** Every GPU of the cluster, of any model. */
    public long totalGpus() {
        return totalGpusByModel.values().stream().mapToLong(Integer::longValue).sum();
    }

    /** Known GPU models in a stable order, for messages. */
    public String knownModels() {
        return String.join(", ", new TreeMap<>(maxGpusPerNodeByModel).keySet());
    }
}
