package io.gantry.placement.backend;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.RdmaNic;
import io.gantry.placement.core.TraceClusters;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The simulated cluster, from YAML:
 *
 * <pre>
 * nodes:
 *   - id: sim             # node id; with count: N the nodes are sim-0 .. sim-(N-1)
 *     count: 4            # optional, default 1
 *     gpus:               # one group, or a list of groups (indices continue across groups)
 *       count: 8
 *       model: H100
 *       memoryMiB: 81920
 *     cpuMillis: 96000
 *     memoryMiB: 1048576
 *     sockets: 2          # optional, default 1: NUMA sockets, CPU split evenly unless numaCpuMillis is given
 *     numaMemoryMiB: [...] # optional: memory per socket (adds up to memoryMiB); tasks then take memory from the
 *                         # socket of their GPUs. Default: memory per node only
 *     rack: rack-0        # optional: labels rack / spine (the switch hierarchy)
 *     spine: spine-0
 *     rdmaNics:           # optional: RDMA NICs, each on a socket the node has
 *       - {name: mlx5_0, numaNode: 0, pcieSwitch: 0, gbps: 400}
 * </pre>
 *
 * <p>Per GPU group, {@code migCapable: true} lets its GPUs host MIG instances, and {@code numaNode},
 * {@code pcieSwitch} and {@code nvlinkDomain} (-1 = no NVLink) set the
 * place of every GPU of the group; without them GPU {@code i} of {@code n} sits on socket
 * {@code i * sockets / n}, PCIe switch {@code i / 2}, NVLink domain 0.
 */
public final class ClusterFile {
    private ClusterFile() {
    }

    /**
     * Four nodes sim-0..sim-3, each 8 x H100 80 GiB, 96 cores on two sockets, 1 TiB; GPUs 0-3 on socket 0 (PCIe
     * switches 0-1), 4-7 on socket 1 (switches 2-3), one NVLink domain; two nodes per rack, one spine.
     */
    public static List<NodeSpec> defaultCluster() {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            nodes.add(TraceClusters.eightGpuServer("sim-" + i, SimulatedBackend.NAME, "H100", 81_920, 96_000,
                    1_048_576, Map.of(NodeSpec.RACK_LABEL, "rack-" + (i / 2), NodeSpec.SPINE_LABEL, "spine-0")));
        }
        return nodes;
    }

    public static List<NodeSpec> load(Path file) throws IOException {
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    public static List<NodeSpec> parse(String yaml) {
        Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        if (!(root instanceof Map<?, ?> map) || !(map.get("nodes") instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalArgumentException("nodes: expected a non-empty top-level `nodes:` list");
        }
        List<NodeSpec> nodes = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String at = "nodes[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(at + ": must be a mapping");
            }
            String id = string(m, "id", at);
            int count = (int) number(m, "count", at, 1);
            if (count < 1) {
                throw new IllegalArgumentException(at + ".count: must be >= 1");
            }
            long sockets = number(m, "sockets", at, 1);
            if (sockets < 1 || sockets > 64) {
                throw new IllegalArgumentException(at + ".sockets: must be 1..64");
            }
            List<Gpu> gpus = gpus(m.get("gpus"), at + ".gpus", (int) sockets);
            long cpu = number(m, "cpuMillis", at, -1);
            long memory = number(m, "memoryMiB", at, -1);
            if (cpu < 0 || cpu > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(at + ".cpuMillis: required, 0.." + Integer.MAX_VALUE);
            }
            if (memory < 0) {
                throw new IllegalArgumentException(at + ".memoryMiB: required, >= 0");
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.get("labels") instanceof Map<?, ?> l) {
                l.forEach((k, v) -> labels.put(String.valueOf(k), String.valueOf(v)));
            } else if (m.get("labels") != null) {
                throw new IllegalArgumentException(at + ".labels: must be a mapping");
            }
            for (String key : List.of(NodeSpec.RACK_LABEL, NodeSpec.SPINE_LABEL)) {
                if (m.get(key) != null) {
                    labels.put(key, String.valueOf(m.get(key)));
                }
            }
            List<Integer> numa = new ArrayList<>();
            if (m.get("numaCpuMillis") instanceof List<?> l) {
                for (Object v : l) {
                    if (!(v instanceof Number n)) {
                        throw new IllegalArgumentException(at + ".numaCpuMillis: must be a list of numbers");
                    }
                    numa.add(n.intValue());
                }
                if (m.get("sockets") != null && numa.size() != sockets) {
                    throw new IllegalArgumentException(at + ".numaCpuMillis: has " + numa.size()
                            + " entries but sockets is " + sockets);
                }
            } else if (m.get("numaCpuMillis") != null) {
                throw new IllegalArgumentException(at + ".numaCpuMillis: must be a list of millicores per socket");
            } else if (sockets > 1) {
                for (int s = 0; s < sockets; s++) {
                    numa.add((int) (cpu / sockets + (s < cpu % sockets ? 1 : 0)));
                }
            }
            List<RdmaNic> nics = nics(m.get("rdmaNics"), at + ".rdmaNics");
            List<Long> numaMemory = new ArrayList<>();
            if (m.get("numaMemoryMiB") instanceof List<?> l) {
                for (Object v : l) {
                    if (!(v instanceof Number n)) {
                        throw new IllegalArgumentException(at + ".numaMemoryMiB: must be a list of numbers");
                    }
                    numaMemory.add(n.longValue());
                }
            } else if (m.get("numaMemoryMiB") != null) {
                throw new IllegalArgumentException(at + ".numaMemoryMiB: must be a list of MiB per socket");
            }
            for (int n = 0; n < count; n++) {
                String nodeId = m.containsKey("count") ? id + "-" + n : id;
                if (!ids.add(nodeId)) {
                    throw new IllegalArgumentException(at + ".id: node id " + nodeId + " appears twice");
                }
                try {
                    nodes.add(new NodeSpec(nodeId, SimulatedBackend.NAME, gpus, (int) cpu, memory, labels, numa, nics,
                            numaMemory));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(at + ": " + e.getMessage(), e);
                }
            }
        }
        return List.copyOf(nodes);
    }

    /** {@code rdmaNics: [{name: mlx5_0, numaNode: 0, pcieSwitch: 0, gbps: 400}]}; socket 0, no switch, 0 by default. */
    private static List<RdmaNic> nics(Object value, String at) {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list)) {
            throw new IllegalArgumentException(at + ": must be a list of {name, numaNode, pcieSwitch, gbps}");
        }
        List<RdmaNic> nics = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            String where = at + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(where + ": must be a mapping with name, numaNode, pcieSwitch, gbps");
            }
            String name = string(m, "name", where);
            long numa = number(m, "numaNode", where, 0);
            long pcie = number(m, "pcieSwitch", where, RdmaNic.NO_SWITCH);
            long gbps = number(m, "gbps", where, 0);
            try {
                nics.add(new RdmaNic(name, (int) numa, (int) pcie, (int) gbps));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
        }
        return nics;
    }

    private record RawGpu(String model, long memoryMiB, long numa, long pcie, long nvlink, boolean mig, String at) {
    }

    private static List<Gpu> gpus(Object value, String at, int sockets) {
        List<RawGpu> gpus = new ArrayList<>();
        if (value == null) {
            return List.of();
        }
        List<?> groups = value instanceof List<?> l ? l : List.of(value);
        for (int g = 0; g < groups.size(); g++) {
            String where = value instanceof List<?> ? at + "[" + g + "]" : at;
            if (!(groups.get(g) instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(where + ": must be a mapping with count, model, memoryMiB");
            }
            long count = number(m, "count", where, -1);
            if (count < 0) {
                throw new IllegalArgumentException(where + ".count: required, >= 0");
            }
            String model = string(m, "model", where);
            long memory = number(m, "memoryMiB", where, 0);
            long numa = number(m, "numaNode", where, -1);
            long pcie = number(m, "pcieSwitch", where, -1);
            long nvlink = number(m, "nvlinkDomain", where, 0);
            Object migValue = m.get("migCapable");
            if (migValue != null && !(migValue instanceof Boolean)) {
                throw new IllegalArgumentException(where + ".migCapable: must be true or false");
            }
            boolean mig = Boolean.TRUE.equals(migValue);
            for (int i = 0; i < count; i++) {
                gpus.add(new RawGpu(model, memory, numa, pcie, nvlink, mig, where));
            }
        }
        // defaults need the node's GPU count: spread evenly over the sockets, two GPUs per PCIe switch
        List<Gpu> placed = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            RawGpu g = gpus.get(i);
            int numa = g.numa() >= 0 ? (int) g.numa() : (int) ((long) i * sockets / gpus.size());
            int pcie = g.pcie() >= 0 ? (int) g.pcie() : i / 2;
            try {
                placed.add(new Gpu(i, g.model(), g.memoryMiB(), numa, pcie, (int) g.nvlink(), g.mig()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(g.at() + ": " + e.getMessage(), e);
            }
        }
        return placed;
    }

    private static String string(Map<?, ?> m, String key, String at) {
        if (!(m.get(key) instanceof String s) || s.isBlank()) {
            throw new IllegalArgumentException(at + "." + key + ": required, a non-empty string");
        }
        return s;
    }

    private static long number(Map<?, ?> m, String key, String at, long fallback) {
        Object v = m.get(key);
        if (v == null) {
            return fallback;
        }
        if (!(v instanceof Number n)) {
            throw new IllegalArgumentException(at + "." + key + ": must be a number");
        }
        return n.longValue();
    }
}
