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
 * name one of its sockets. {@code numaMemoryMiB}, when given, is the memory per socket (adding up to
 * {@code memoryMiB}): a task's memory then comes from the socket of its GPUs, like its CPU. The node's place in the switch hierarchy comes from the labels {@code rack} (its
 * top-of-rack switch) and {@code spine} (its aggregation switch / block); a missing label means
 * {@value #UNLABELLED}. Rack names are scoped by spine: rack {@code r1} under spine {@code a} and rack {@code r1}
 * under spine {@code b} are two racks.
 */
public record NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                       Map<String, String> labels, List<Integer> numaCpuMillis, List<RdmaNic> rdmaNics,
                       List<Long> numaMemoryMiB) {
    public static final String RACK_LABEL = "rack";
    /**
     * Labels under this prefix are placement's own control state, re-published on {@code placement.node-events}
     * so a restart rebuilds it: a re-registration by the backend keeps the previous registration's values.
     */
    public static final String CONTROL_PREFIX = "gantry.io/";
    /** {@code true}: an operator cordoned the node; it gets no new work. */
    public static final String CORDONED_LABEL = "gantry.io/cordoned";
    /**
     * GPU indices taken out of service after a hardware fault, comma-separated ({@code 0,3}): they get no new work
     * (whole or shared) while the rest of the node stays in use. Cleared by an operator after repair.
     */
    public static final String CORDONED_GPUS_LABEL = "gantry.io/cordoned-gpus";
    /** Why the node or some of its GPUs were cordoned, as a sentence (pre-flight failure, device fault, drain). */
    public static final String CORDON_REASON_LABEL = "gantry.io/cordon-reason";
    /** The job whose capacity reservation drains this node. */
    public static final String RESERVED_FOR_LABEL = "gantry.io/reserved-for";
    public static final String RESERVED_TENANT_LABEL = "gantry.io/reserved-tenant";
    public static final String RESERVED_ATTEMPT_LABEL = "gantry.io/reserved-attempt";
    /** The drained domain as the tenant reads it, e.g. {@code rack P1/S3}. */
    public static final String RESERVED_DOMAIN_LABEL = "gantry.io/reserved-domain";
    /**
     * When the reservation began, in epoch milliseconds: runs granted on the node since then borrowed it while it
     * drained (they declared checkpoints) and are stopped when the gang is due. Absent (older reservations): no
     * such borrowing.
     */
    public static final String RESERVED_AT_LABEL = "gantry.io/reserved-at";
    /** How long the reservation's drain waits for runs to end by themselves, in seconds; absent: only wait. */
    public static final String RESERVED_MAX_DRAIN_LABEL = "gantry.io/reserved-max-drain";
    /**
     * GPUs of the node held by workloads Gantry did not start (a pod of another scheduler, a Slurm job outside
     * Gantry), as the backend last counted them: taken off the free count until the backend sees them gone.
     */
    public static final String FOREIGN_GPUS_LABEL = "gantry.io/foreign-gpus";
    /** Who holds the foreign GPUs, as a short sentence for operators (e.g. {@code pod ml/train-7 (2 GPUs)}). */
    public static final String FOREIGN_HOLDERS_LABEL = "gantry.io/foreign-holders";
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
        rdmaNics = List.copyOf(rdmaNics == null ? List.of() : rdmaNics);
        numaMemoryMiB = List.copyOf(numaMemoryMiB == null ? List.of() : numaMemoryMiB);
        if (!numaMemoryMiB.isEmpty()) {
            if (numaMemoryMiB.size() != sockets) {
                throw new IllegalArgumentException("node " + nodeId + ": numaMemoryMiB lists " + numaMemoryMiB.size()
                        + " sockets but the node has " + sockets + " (numaCpuMillis)");
            }
            long mem = 0;
            for (int s = 0; s < numaMemoryMiB.size(); s++) {
                if (numaMemoryMiB.get(s) < 0) {
                    throw new IllegalArgumentException("node " + nodeId + ": numaMemoryMiB[" + s
                            + "] must be >= 0, was " + numaMemoryMiB.get(s));
                }
                mem += numaMemoryMiB.get(s);
            }
            if (mem != memoryMiB) {
                throw new IllegalArgumentException("node " + nodeId + ": numaMemoryMiB adds up to " + mem
                        + " but memoryMiB is " + memoryMiB);
            }
        }
        Set<String> nicNames = new HashSet<>();
        for (RdmaNic nic : rdmaNics) {
            if (!nicNames.add(nic.name())) {
                throw new IllegalArgumentException("node " + nodeId + ": RDMA NIC " + nic.name() + " appears twice");
            }
            if (nic.numaNode() >= sockets) {
                throw new IllegalArgumentException("node " + nodeId + ": RDMA NIC " + nic.name() + " is on NUMA socket "
                        + nic.numaNode() + " but the node has " + sockets + " socket" + (sockets == 1 ? "" : "s")
                        + " (numaCpuMillis)");
            }
        }
    }

    /** Memory per node only (not per NUMA socket). */
    public NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                    Map<String, String> labels, List<Integer> numaCpuMillis, List<RdmaNic> rdmaNics) {
        this(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, numaCpuMillis, rdmaNics, List.of());
    }

    /** Without RDMA NICs. */
    public NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                    Map<String, String> labels, List<Integer> numaCpuMillis) {
        this(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, numaCpuMillis, List.of());
    }

    /** One socket holding all the CPU. */
    public NodeSpec(String nodeId, String backend, List<Gpu> gpus, int cpuMillis, long memoryMiB,
                    Map<String, String> labels) {
        this(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, List.of());
    }

    public NodeSpec withLabels(Map<String, String> newLabels) {
        return new NodeSpec(nodeId, backend, gpus, cpuMillis, memoryMiB, newLabels, numaCpuMillis, rdmaNics,
                numaMemoryMiB);
    }

    public NodeSpec withRdmaNics(List<RdmaNic> nics) {
        return new NodeSpec(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, numaCpuMillis, nics, numaMemoryMiB);
    }

    /** This spec with {@code key} set to {@code value} ({@code null}: removed). */
    public NodeSpec withLabel(String key, String value) {
        Map<String, String> l = new TreeMap<>(labels);
        if (value == null) {
            l.remove(key);
        } else {
            l.put(key, value);
        }
        return withLabels(l);
    }

    /** This spec with its control labels replaced by those of {@code previous} (a re-registration keeps them). */
    public NodeSpec withControlOf(NodeSpec previous) {
        Map<String, String> l = new TreeMap<>(labels);
        l.keySet().removeIf(k -> k.startsWith(CONTROL_PREFIX));
        previous.labels().forEach((k, v) -> {
            if (k.startsWith(CONTROL_PREFIX)) {
                l.put(k, v);
            }
        });
        return l.equals(labels) ? this : withLabels(l);
    }

    /**
     * The GPUs cordoned by {@link #CORDONED_GPUS_LABEL}, ascending. A part that is not a number is skipped: a label is
     * control state placement writes itself, and a stray value must not make the node unreadable.
     */
    public java.util.SortedSet<Integer> cordonedGpus() {
        java.util.TreeSet<Integer> out = new java.util.TreeSet<>();
        String v = labels.get(CORDONED_GPUS_LABEL);
        if (v != null) {
            for (String part : v.split(",")) {
                try {
                    out.add(Integer.parseInt(part.trim()));
                } catch (NumberFormatException ignored) {
                    // skipped, see above
                }
            }
        }
        return out;
    }

    /** This spec with exactly {@code gpus} cordoned (none: the label is removed). */
    public NodeSpec withCordonedGpus(java.util.Collection<Integer> gpus) {
        java.util.TreeSet<Integer> sorted = new java.util.TreeSet<>(gpus);
        return withLabel(CORDONED_GPUS_LABEL, sorted.isEmpty() ? null
                : String.join(",", sorted.stream().map(String::valueOf).toList()));
    }

    /**
     * The GPUs held outside Gantry ({@link #FOREIGN_GPUS_LABEL}), at most the node's GPUs; 0 when absent or not a
     * number (a control label is placement's own state, a stray value must not make the node unreadable).
     */
    public int foreignGpus() {
        String v = labels.get(FOREIGN_GPUS_LABEL);
        if (v == null) {
            return 0;
        }
        try {
            return Math.max(0, Math.min(gpus.size(), Integer.parseInt(v.trim())));
        } catch (NumberFormatException ignored) {
            return 0;
        }
    }

    /** Who holds the foreign GPUs, or null. */
    public String foreignHolders() {
        return labels.get(FOREIGN_HOLDERS_LABEL);
    }

    /** This spec with {@code count} GPUs held outside Gantry by {@code holders} (0: both labels removed). */
    public NodeSpec withForeign(int count, String holders) {
        return withLabel(FOREIGN_GPUS_LABEL, count <= 0 ? null : String.valueOf(count))
                .withLabel(FOREIGN_HOLDERS_LABEL, count <= 0 || holders == null || holders.isBlank() ? null : holders);
    }

    public boolean cordoned() {
        return "true".equals(labels.get(CORDONED_LABEL));
    }

    /** The job a capacity reservation drains this node for, or null. */
    public String reservedFor() {
        return labels.get(RESERVED_FOR_LABEL);
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

    /** Whether memory is registered per NUMA socket (a task's memory must then come from its GPUs' socket). */
    public boolean memoryPerSocket() {
        return !numaMemoryMiB.isEmpty();
    }

    /** What one task can get: the largest socket's memory, or the node's when memory is not per socket. */
    public long maxSocketMemoryMiB() {
        return numaMemoryMiB.isEmpty() ? memoryMiB : numaMemoryMiB.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Memory of a socket; the whole node's when memory is not registered per socket. */
    public long socketMemoryMiB(int socket) {
        return numaMemoryMiB.isEmpty() ? memoryMiB : numaMemoryMiB.get(socket);
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
