package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * First fit: tasks in spec order, replicas 0..n-1, each on the first eligible node (by node id) with enough free
 * GPUs of one model plus CPU and memory, taking its lowest free GPU indices. Any task that fits nowhere defers
 * the whole gang, with the reason {@link Deferrals} finds.
 */
public final class FirstFitPlacer implements GangPlacer {
    private final GpuTiers tiers;

    public FirstFitPlacer() {
        this(Map.of());
    }

    /** @param tiers GPU tier name to its models in order of preference */
    public FirstFitPlacer(Map<String, List<String>> tiers) {
        this.tiers = new GpuTiers(tiers);
    }

    @Override
    public GpuTiers tiers() {
        return tiers;
    }

    @Override
    public PlacementDecision place(InventorySnapshot inventory, GangRequest gang) {
        for (TaskGroup t : gang.tasks()) {
            if (t.shared()) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, "task " + t.name()
                        + " asks for part of a GPU; the first-fit placer places whole GPUs only (use the topology placer)");
            }
        }
        List<List<String>> accepted = new ArrayList<>();
        for (TaskGroup t : gang.tasks()) {
            List<String> a = tiers.accepted(t);
            if (a == null) {
                return new PlacementDecision.Deferred(DeferralCause.NO_MATCHING_GPU_MODEL, tiers.whyNone(t));
            }
            accepted.add(a);
        }
        List<Free> nodes = new ArrayList<>();
        for (NodeView n : inventory.eligible()) {
            nodes.add(new Free(n));
        }
        List<PlacedTask> placed = new ArrayList<>();
        for (int ti = 0; ti < gang.tasks().size(); ti++) {
            TaskGroup task = gang.tasks().get(ti);
            for (int replica = 0; replica < task.replicas(); replica++) {
                PlacedTask p = null;
                for (Free node : nodes) {
                    p = node.take(task, replica, accepted.get(ti));
                    if (p != null) {
                        break;
                    }
                }
                if (p == null) {
                    return Deferrals.diagnose(inventory, gang);
                }
                placed.add(p);
            }
        }
        return new PlacementDecision.Placed(placed);
    }

    /** The free capacity of one node while a gang is being fitted onto it. */
    private static final class Free {
        private final String nodeId;
        private final TreeMap<Integer, String> gpus = new TreeMap<>();
        private int cpuMillis;
        private long memoryMiB;

        Free(NodeView n) {
            this.nodeId = n.nodeId();
            n.freeGpus().forEach(g -> gpus.put(g.index(), g.model()));
            this.cpuMillis = n.freeCpuMillis();
            this.memoryMiB = n.freeMemoryMiB();
        }

        /** @param accepted the models the task accepts in order of preference; empty = any */
        PlacedTask take(TaskGroup task, int replica, List<String> accepted) {
            if (cpuMillis < task.cpuMillis() || memoryMiB < task.memoryMiB()) {
                return null;
            }
            String model = null;
            List<Integer> indices = List.of();
            if (task.gpus() > 0) {
                Set<String> candidates = new LinkedHashSet<>();
                if (!accepted.isEmpty()) {
                    candidates.addAll(accepted);
                } else {
                    candidates.addAll(gpus.values()); // in order of each model's lowest free index
                }
                for (String m : candidates) {
                    List<Integer> free = lowest(m, task.gpus());
                    if (free != null) {
                        model = m;
                        indices = free;
                        break;
                    }
                }
                if (model == null) {
                    return null;
                }
            }
            indices.forEach(gpus::remove);
            cpuMillis -= task.cpuMillis();
            memoryMiB -= task.memoryMiB();
            return new PlacedTask(task.name(), replica, nodeId, model, indices, task.cpuMillis(), task.memoryMiB());
        }

        private List<Integer> lowest(String model, int count) {
            List<Integer> out = new ArrayList<>();
            for (Map.Entry<Integer, String> e : gpus.entrySet()) {
                if (e.getValue().equals(model)) {
                    out.add(e.getKey());
                    if (out.size() == count) {
                        return out;
                    }
                }
            }
            return null;
        }
    }

    @Override
    public String toString() {
        return "first-fit";
    }
}
