package io.gantry.placement.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A node as placement sees it at one instant: what it offers, whether it may be placed on, and which job holds
 * each GPU.
 *
 * @param allocatedTo         GPU index to the job id holding it; absent indices are free
 * @param eligible            healthy and served by the active backend, i.e. placement may put tasks here
 * @param freeSocketCpuMillis free CPU per NUMA socket (index = socket)
 */
public record NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                       int freeCpuMillis, long freeMemoryMiB, List<Integer> freeSocketCpuMillis) {
    public NodeView {
        Objects.requireNonNull(spec, "spec");
        allocatedTo = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(allocatedTo));
        freeSocketCpuMillis = freeSocketCpuMillis == null ? List.of(freeCpuMillis) : List.copyOf(freeSocketCpuMillis);
    }

    public NodeView(NodeSpec spec, boolean healthy, boolean eligible, SortedMap<Integer, String> allocatedTo,
                    int freeCpuMillis, long freeMemoryMiB) {
        this(spec, healthy, eligible, allocatedTo, freeCpuMillis, freeMemoryMiB, null);
    }

    public String nodeId() {
        return spec.nodeId();
    }

    public List<Gpu> freeGpus() {
        return spec.gpus().stream().filter(g -> !allocatedTo.containsKey(g.index())).toList();
    }

    public int freeGpuCount() {
        return freeGpus().size();
    }

    public Map<String, String> labels() {
        return spec.labels();
    }
}
