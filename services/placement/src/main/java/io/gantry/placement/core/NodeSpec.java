package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a node offers, as its backend registered it. Immutable; GPUs are kept sorted by index.
 *
 * <p>{@code numaCpuMillis} is the allocatable CPU per NUMA socket (index = socket); empty means one socket with
 * all of {@code cpuMillis}. When given, it must add up to {@code cpuMillis} and every GPU's {@code numaNode} must
 * name one of its sockets. The node's place in the switch hierarchy comes from the labels {@code rack} (its
 * top-of-rack switch) and {@code spine} (its aggregation switch / block); a missing label means
 * {@value #UNLABELLED}. Rack names are scoped by spine: rack {@code r1} under spine {@code a} and rack {@code r1}
 * under spine {@code b} are two racks.
 */
public record NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                       Map<String, String> labels, List<Integer> numaCpuMillis) {
    public static final String RACK_LABEL = "rack";
    public static final String SPINE_LABEL = "spine";
    public static final String UNLABELLED = "-";
    /** Devices are indexed in 64-bit masks by the placer. */
    public static final int MAX_GPUS = 64;

    public NodeSpec {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(backend, "backend");
        if (nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
        if (cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("node " + nodeId + ": cpuMillis and memoryMiB must be >= 0");
        }
        List<Gpu> sorted = new ArrayList<>(gpus == null ? List.of() : gpus);
        sorted.sort(Comparator.comparingInt(Gpu::index));
        if (sorted.size() > MAX_GPUS) {
            throw new IllegalArgumentException("node " + nodeId + ": at most " + MAX_GPUS + " GPUs, has " + sorted.size());
        }
        Set<Integer> seen = new HashSet<>();
        for (Gpu g : sorted) {
            if (!seen.add(g.index())) {
                throw new IllegalArgumentException("node " + nodeId + ": gpu index " + g.index() + " appears twice");
            }
        }
        numaCpuMillis = List.copyOf(numaCpuMillis == null ? List.of() : numaCpuMillis);
        long sum = 0;
        for (int s = 0; s < numaCpuMillis.size(); s++) {
            if (numaCpuMillis.get(s) < 0) {
                throw new IllegalArgumentException("node " + nodeId + ": numaCpuMillis[" + s + "] must be >= 0, was "
                        + numaCpuMillis.get(s));
            }
            sum += numaCpuMillis.get(s);
        }
        if (!numaCpuMillis.isEmpty() && sum != cpuMillis) {
            throw new IllegalArgumentException("node " + nodeId + ": numaCpuMillis adds up to " + sum
                    + " but cpuMillis is " + cpuMillis);
        }
        int sockets = Math.max(1, numaCpuMillis.size());
        for (Gpu g : sorted) {
            if (g.numaNode() >= sockets) {
                throw new IllegalArgumentException("node " + nodeId + ": gpu " + g.index() + " is on NUMA socket "
                        + g.numaNode() + " but the node has " + sockets + " socket" + (sockets == 1 ? "" : "s")
                        + " (numaCpuMillis)");
            }
        }
        gpus = List.copyOf(sorted);
        labels = Map.copyOf(new TreeMap<>(labels == null ? Map.of() : labels));
    }

    /** One socket holding all the CPU. */
    public NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                    Map<String, String> labels) {
        this(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, List.of());
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

    public int sockets() {
        return Math.max(1, numaCpuMillis.size());
    }

    public int socketCpuMillis(int socket) {
        return numaCpuMillis.isEmpty() ? cpuMillis : numaCpuMillis.get(socket);
    }

    /** Whole cores of a socket, rounded up: what a task on it may be pinned to. */
    public int socketCores(int socket) {
        return (socketCpuMillis(socket) + 999) / 1000;
    }

    /** Core ids of a socket: sockets number their cores one after the other, socket 0 first. */
    public List<Integer> socketCoreIds(int socket) {
        int first = 0;
        for (int s = 0; s < socket; s++) {
            first += socketCores(s);
        }
        List<Integer> ids = new ArrayList<>(socketCores(socket));
        for (int c = 0; c < socketCores(socket); c++) {
            ids.add(first + c);
        }
        return ids;
    }

    /** The socket a core id belongs to, or -1 when the node has no such core. */
    public int socketOfCore(int core) {
        int first = 0;
        for (int s = 0; s < sockets(); s++) {
            first += socketCores(s);
            if (core < first) {
                return core < 0 ? -1 : s;
            }
        }
        return -1;
    }

    public String rack() {
        return labels.getOrDefault(RACK_LABEL, UNLABELLED);
    }

    public String spine() {
        return labels.getOrDefault(SPINE_LABEL, UNLABELLED);
    }
}
