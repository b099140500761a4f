package io.gantry.placement.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Real clusters as node inventories, parsed from the lines of public trace files (the caller reads the files):
 * the Alibaba Lingjun three-tier Clos ({@code lingjun-topology/topo.csv}: {@code ip,DSW,PSW,ASW}) and the
 * Alibaba GPU-sharing cluster's node list ({@code alibaba-openb/openb_node_list_all_node.csv}:
 * {@code sn,cpu_milli,memory_mib,gpu,model}).
 */
public final class TraceClusters {
    private TraceClusters() {
    }

    /**
     * An 8-GPU server: GPUs 0-3 on socket 0, 4-7 on socket 1, two GPUs per PCIe switch (switches 0-3), all eight
     * in one NVLink domain; CPU split evenly over the two sockets.
     */
    public static NodeSpec eightGpuServer(String nodeId, String backend, String model, long gpuMemoryMiB,
                                          int cpuMillis, long memoryMiB, Map<String, String> labels) {
        List<Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            gpus.add(new Gpu(i, model, gpuMemoryMiB, i / 4, i / 2, 0));
        }
        int half = cpuMillis / 2;
        return new NodeSpec(nodeId, backend, gpus, cpuMillis, memoryMiB, labels, List.of(half, cpuMillis - half));
    }

    /**
     * The Lingjun Clos: every host becomes an 8 x {@code model} server ({@link #eightGpuServer}, 96 cores, 1 TiB)
     * named {@code lj-<first 12 hex digits of its hashed ip>}, with label {@code spine} = its PSW and {@code rack}
     * = its ASW. ASW names repeat under different PSWs (S1 sits under P8, P10 and P12), so a rack is the pair
     * (PSW, ASW) — which {@link NodeSpec} does anyway, as rack names are scoped by spine. Label {@code core} = DSW.
     */
    public static List<NodeSpec> lingjun(List<String> lines, String backend, String model) {
        List<NodeSpec> nodes = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("ip,"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != 4 || f[0].length() < 12) {
                throw new IllegalArgumentException("line " + (i + 1) + ": expected ip,DSW,PSW,ASW, got " + line);
            }
            String id = "lj-" + f[0].substring(0, 12);
            if (!ids.add(id)) {
                throw new IllegalArgumentException("line " + (i + 1) + ": host " + id + " appears twice");
            }
            nodes.add(eightGpuServer(id, backend, model, 81_920, 96_000, 1_048_576,
                    Map.of(NodeSpec.SPINE_LABEL, f[2], NodeSpec.RACK_LABEL, f[3], "core", f[1])));
        }
        return nodes;
    }

    /**
     * The Alibaba openb inventory: one node per row, {@code gpu} GPUs of {@code model} (0-8; no model when 0),
     * CPU and memory as listed. The trace says nothing about racks or the inside of a node, so every node is
     * unlabelled (one flat rack) with one socket, one PCIe switch and no NVLink.
     */
    public static List<NodeSpec> alibabaOpenb(List<String> lines, String backend) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("sn,"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != 5) {
                throw new IllegalArgumentException("line " + (i + 1) + ": expected sn,cpu_milli,memory_mib,gpu,model, got "
                        + line);
            }
            int gpuCount;
            int cpu;
            long memory;
            try {
                cpu = Integer.parseInt(f[1]);
                memory = Long.parseLong(f[2]);
                gpuCount = Integer.parseInt(f[3]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("line " + (i + 1) + ": " + e.getMessage(), e);
            }
            if (gpuCount > 0 && f[4].isBlank()) {
                throw new IllegalArgumentException("line " + (i + 1) + ": " + gpuCount + " GPUs without a model");
            }
            List<Gpu> gpus = new ArrayList<>();
            for (int g = 0; g < gpuCount; g++) {
                gpus.add(new Gpu(g, f[4], 0, 0, 0, Gpu.NO_NVLINK));
            }
            nodes.add(new NodeSpec(f[0], backend, gpus, cpu, memory, Map.of()));
        }
        return nodes;
    }
}
