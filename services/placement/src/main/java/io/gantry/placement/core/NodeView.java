package io.gantry.placement.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A node as placement sees it at one instant: what it offers, whether it may be placed on, and which job holds
 * each GPU (whole, or in shares).
 *
 * @param allocatedTo         GPU index to the job id holding it whole; absent indices are free or shared
 * @param shares              GPU index to the fractions / MIG instances held on it (a shared GPU is not free)
 * @param eligible            healthy and served by the active backend, i.e. placement may put tasks here
 * @param freeSocketCpuMillis free CPU per NUMA socket (index = socket)
 * @param foreignGpus         GPU indices counted as held by workloads outside Gantry (see
 *                            {@link NodeSpec#FOREIGN_GPUS_LABEL}): neither free nor Gantry's
 */
public record NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                       int freeCpuMillis, long freeMemoryMiB, List<Integer> freeSocketCpuMillis,
                       SortedMap<Integer, List<Inventory.ShareHolder>> shares, List<Long> freeSocketMemoryMiB,
                       java.util.SortedSet<Integer> foreignGpus) {
    public NodeView {
        foreignGpus = java.util.Collections.unmodifiableSortedSet(
                foreignGpus == null ? new java.util.TreeSet<>() : new java.util.TreeSet<>(foreignGpus));
        freeSocketMemoryMiB = freeSocketMemoryMiB == null ? List.of() : List.copyOf(freeSocketMemoryMiB);
        Objects.requireNonNull(spec, "spec");
        allocatedTo = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(allocatedTo));
        freeSocketCpuMillis = freeSocketCpuMillis == null ? List.of(freeCpuMillis) : List.copyOf(freeSocketCpuMillis);
        TreeMap<Integer, List<Inventory.ShareHolder>> copy = new TreeMap<>();
        if (shares != null) {
            shares.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        }
        shares = java.util.Collections.unmodifiableSortedMap(copy);
    }

    public NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                    int freeCpuMillis, long freeMemoryMiB, List<Integer> freeSocketCpuMillis,
                    SortedMap<Integer, List<Inventory.ShareHolder>> shares, List<Long> freeSocketMemoryMiB) {
        this(spec, healthy, eligible, allocatedTo, freeCpuMillis, freeMemoryMiB, freeSocketCpuMillis, shares,
                freeSocketMemoryMiB, null);
    }

    public NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                    int freeCpuMillis, long freeMemoryMiB, List<Integer> freeSocketCpuMillis,
                    SortedMap<Integer, List<Inventory.ShareHolder>> shares) {
        this(spec, healthy, eligible, allocatedTo, freeCpuMillis, freeMemoryMiB, freeSocketCpuMillis, shares, null);
    }

    public NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                    int freeCpuMillis, long freeMemoryMiB, List<Integer> freeSocketCpuMillis) {
        this(spec, healthy, eligible, allocatedTo, freeCpuMillis, freeMemoryMiB, freeSocketCpuMillis, null, null);
    }

    public NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                    int freeCpuMillis, long freeMemoryMiB) {
        this(spec, healthy, eligible, allocatedTo, freeCpuMillis, freeMemoryMiB, null, null, null);
    }

    public String nodeId() {
        return spec.nodeId();
    }

    /** GPUs neither held (whole or shared), nor cordoned after a fault, nor held outside Gantry. */
    public List<Gpu> freeGpus() {
        java.util.Set<Integer> cordoned = spec.cordonedGpus();
        return spec.gpus().stream().filter(g -> !allocatedTo.containsKey(g.index()) && !shares.containsKey(g.index())
                && !cordoned.contains(g.index()) && !foreignGpus.contains(g.index())).toList();
    }

    public int freeGpuCount() {
        return freeGpus().size();
    }

    public Map<String, String> labels() {
        return spec.labels();
    }
}
