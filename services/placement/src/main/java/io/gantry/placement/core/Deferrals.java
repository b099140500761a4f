package io.gantry.placement.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Names why a gang that a placer could not fit does not fit, from the most permanent reason to the most
 * transient. The queue parks the job on any of them; the message is what the tenant reads, so it says the
 * numbers.
 */
public final class Deferrals {
    private Deferrals() {
    }

    public static PlacementDecision.Deferred diagnose(InventorySnapshot inventory, GangRequest gang) {
        List<NodeView> nodes = inventory.eligible();
        if (nodes.isEmpty()) {
            String why = inventory.nodes().isEmpty() ? "no node has registered"
                    : "none of the " + inventory.nodes().size() + " known nodes is healthy";
            return new PlacementDecision.Deferred(DeferralCause.NO_HEALTHY_NODES, why);
        }
        TreeSet<String> models = new TreeSet<>();
        nodes.forEach(n -> n.spec().gpus().forEach(g -> models.add(g.model())));
        for (TaskGroup t : gang.tasks()) {
            if (t.gpus() > 0 && t.gpuModel() != null && !models.contains(t.gpuModel())) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL,
                        "task " + t.name() + " needs GPU model " + t.gpuModel() + "; healthy nodes have "
                                + (models.isEmpty() ? "no GPUs" : String.join(", ", models)));
            }
        }
        for (TaskGroup t : gang.tasks()) {
            boolean fitsSomeNode = nodes.stream().anyMatch(n -> n.spec().gpuCount(t.gpuModel()) >= t.gpus()
                    && n.spec().cpuMillis() >= t.cpuMillis() && n.spec().memoryMiB() >= t.memoryMiB());
            if (!fitsSomeNode) {
                int gpus = nodes.stream().mapToInt(n -> n.spec().gpuCount(t.gpuModel())).max().orElse(0);
                int cpu = nodes.stream().mapToInt(n -> n.spec().cpuMillis()).max().orElse(0);
                long mem = nodes.stream().mapToLong(n -> n.spec().memoryMiB()).max().orElse(0);
                return new PlacementDecision.Deferred(DeferralCause.TASK_LARGER_THAN_ANY_NODE,
                        "task " + t.name() + " needs " + t.gpus() + gpuWord(t.gpuModel()) + ", " + t.cpuMillis()
                                + " mCPU and " + t.memoryMiB() + " MiB on one node; the largest healthy node has "
                                + gpus + gpuWord(t.gpuModel()) + ", " + cpu + " mCPU and " + mem + " MiB");
            }
        }
        int clusterGpus = inventory.eligibleGpus();
        if (gang.totalGpus() > clusterGpus) {
            return new PlacementDecision.Deferred(DeferralCause.GANG_LARGER_THAN_CLUSTER,
                    "needs " + gang.totalGpus() + " GPUs as " + gang.shape() + ", the cluster has " + clusterGpus
                            + " healthy GPUs");
        }
        Map<String, Integer> neededByModel = new TreeMap<>();
        gang.tasks().stream().filter(t -> t.gpuModel() != null && t.gpus() > 0)
                .forEach(t -> neededByModel.merge(t.gpuModel(), t.totalGpus(), Integer::sum));
        for (Map.Entry<String, Integer> e : neededByModel.entrySet()) {
            int have = nodes.stream().mapToInt(n -> n.spec().gpuCount(e.getKey())).sum();
            if (e.getValue() > have) {
                return new PlacementDecision.Deferred(DeferralCause.GANG_LARGER_THAN_CLUSTER,
                        "needs " + e.getValue() + " " + e.getKey() + " GPUs, the cluster has " + have + " healthy "
                                + e.getKey() + " GPUs");
            }
        }
        int free = inventory.eligibleFreeGpus();
        String message = "needs " + gang.totalGpus() + " GPUs, " + free + " free";
        if (free >= gang.totalGpus()) {
            message += ", but not in a shape that fits every task with its CPU and memory";
        }
        return new PlacementDecision.Deferred(DeferralCause.INSUFFICIENT_FREE_GPUS, message);
    }

    private static String gpuWord(String model) {
        return model == null ? " GPUs" : " " + model + " GPUs";
    }
}
