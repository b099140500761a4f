package io.gantry.placement.core;

import io.gantry.model.GpuShares;

import java.util.List;
import java.util.Objects;

/**
 * Where one replica of a task was bound: the node, its exact GPU indices, and the CPU cores it is pinned to (the
 * cores of the NUMA socket its CPU was taken from; empty when the placer does not pin). {@code runSeconds} is
 * the simulated run time from the spec, kept so a restarted placement can re-create the run from its own topic.
 * {@code gpuShares} are the parts of GPUs it holds (a fraction or a MIG instance); whole GPUs are in
 * {@code gpuIndices}.
 */
public record PlacedTask(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices,
                         int cpuMillis, long memoryMiB, List<Integer> cpuSet, Long runSeconds,
                         List<GpuShare> gpuShares, List<String> rdmaNics) {
    public PlacedTask {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(nodeId, "nodeId");
        gpuIndices = List.copyOf(gpuIndices);
        cpuSet = cpuSet == null ? List.of() : List.copyOf(cpuSet);
        gpuShares = gpuShares == null ? List.of() : List.copyOf(gpuShares);
        rdmaNics = rdmaNics == null ? List.of() : List.copyOf(rdmaNics);
    }

    /** Without RDMA NICs. */
    public PlacedTask(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices,
                      int cpuMillis, long memoryMiB, List<Integer> cpuSet, Long runSeconds,
                      List<GpuShare> gpuShares) {
        this(task, replica, nodeId, gpuModel, gpuIndices, cpuMillis, memoryMiB, cpuSet, runSeconds, gpuShares,
                List.of());
    }

    public PlacedTask(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices,
                      int cpuMillis, long memoryMiB, List<Integer> cpuSet, Long runSeconds) {
        this(task, replica, nodeId, gpuModel, gpuIndices, cpuMillis, memoryMiB, cpuSet, runSeconds, List.of());
    }

    /** Thousandths of a GPU held: 1000 per whole GPU plus every share's {@code milli} (the shared rule). */
    public long gpuMilli() {
        return GpuShares.held(gpuIndices.size(), gpuShares.stream().mapToLong(GpuShare::milli).sum());
    }

    public PlacedTask(String task, int replica, String nodeId, String gpuModel, List<Integer> gpuIndices,
                      int cpuMillis, long memoryMiB) {
        this(task, replica, nodeId, gpuModel, gpuIndices, cpuMillis, memoryMiB, List.of(), null);
    }

    public PlacedTask withRunSeconds(Long seconds) {
        return new PlacedTask(task, replica, nodeId, gpuModel, gpuIndices, cpuMillis, memoryMiB, cpuSet, seconds,
                gpuShares, rdmaNics);
    }

    public PlacedTask withRdmaNics(List<String> nics) {
        return new PlacedTask(task, replica, nodeId, gpuModel, gpuIndices, cpuMillis, memoryMiB, cpuSet, runSeconds,
                gpuShares, nics);
    }

    /**
     * The NICs closest to this task's devices on {@code spec}: those on a PCIe switch of its GPUs, else those on
     * its socket, else every NIC of the node (RDMA still works across the socket link, only slower); empty when
     * the node has none.
     */
    public List<String> closestNics(NodeSpec spec) {
        if (spec.rdmaNics().isEmpty()) {
            return List.of();
        }
        java.util.Set<Integer> switches = new java.util.HashSet<>();
        for (Gpu g : spec.gpus()) {
            if (gpuIndices.contains(g.index()) || gpuShares.stream().anyMatch(s -> s.index() == g.index())) {
                switches.add(g.pcieSwitch());
            }
        }
        List<String> same = spec.rdmaNics().stream().filter(n -> switches.contains(n.pcieSwitch()))
                .map(RdmaNic::name).toList();
        if (!same.isEmpty()) {
            return same;
        }
        int socket = socket(spec);
        List<String> onSocket = spec.rdmaNics().stream().filter(n -> n.numaNode() == socket)
                .map(RdmaNic::name).toList();
        return !onSocket.isEmpty() ? onSocket : spec.rdmaNics().stream().map(RdmaNic::name).toList();
    }

    /**
     * The NUMA socket whose CPU this task holds: the socket of its first pinned core; without a cpu set, the
     * socket holding most of its GPUs (ties: the lowest); without GPUs, socket 0.
     */
    public int socket(NodeSpec spec) {
        if (!cpuSet.isEmpty()) {
            int s = spec.socketOfCore(cpuSet.get(0));
            if (s >= 0) {
                return s;
            }
        }
        int[] count = new int[spec.sockets()];
        for (Gpu g : spec.gpus()) {
            if (gpuIndices.contains(g.index()) || gpuShares.stream().anyMatch(s -> s.index() == g.index())) {
                count[g.numaNode()]++;
            }
        }
        int best = 0;
        for (int s = 1; s < count.length; s++) {
            if (count[s] > count[best]) {
                best = s;
            }
        }
        return best;
    }
}
