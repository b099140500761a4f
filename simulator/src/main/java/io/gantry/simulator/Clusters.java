package io.gantry.simulator;

import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TraceClusters;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Cluster inventories: generated, the Lingjun Clos (through placement's own parser), or placement's YAML file. */
public final class Clusters {
    public static final String BACKEND = SimulatedBackend.NAME;
    private static final Pattern UNIFORM = Pattern.compile("uniform:(\\d+)x(\\d+)");
    private static final Pattern RACKS = Pattern.compile("racks:(\\d+)x(\\d+)x(\\d+)");

    private Clusters() {
    }

    /** {@code nodes} servers of {@code gpusPerNode} GPUs, 16 nodes per rack, 16 racks per spine. */
    public static List<NodeSpec> uniform(int nodes, int gpusPerNode) {
        return uniform(nodes, gpusPerNode, 16);
    }

    /** {@code nodes} servers of {@code gpusPerNode} GPUs, {@code perRack} nodes per rack, 16 racks per spine. */
    public static List<NodeSpec> uniform(int nodes, int gpusPerNode, int perRack) {
        if (nodes < 1 || gpusPerNode < 1 || gpusPerNode > NodeSpec.MAX_GPUS) {
            throw new IllegalArgumentException("uniform cluster: need >= 1 node and 1.." + NodeSpec.MAX_GPUS + " GPUs");
        }
        List<NodeSpec> out = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            Map<String, String> labels = Map.of(NodeSpec.RACK_LABEL, String.format("rack-%03d", i / perRack),
                    NodeSpec.SPINE_LABEL, String.format("spine-%02d", i / (perRack * 16)));
            String id = String.format("node-%05d", i);
            if (gpusPerNode == 8) {
                out.add(TraceClusters.eightGpuServer(id, BACKEND, "H100", 81_920, 96_000, 1_048_576, labels));
            } else {
                List<io.gantry.placement.core.Gpu> gpus = new ArrayList<>();
                for (int g = 0; g < gpusPerNode; g++) {
                    gpus.add(new io.gantry.placement.core.Gpu(g, "H100", 81_920));
                }
                out.add(new NodeSpec(id, BACKEND, gpus, 96_000, 1_048_576, labels));
            }
        }
        return out;
    }

    /**
     * {@code uniform:NxG}, {@code lingjun} (from {@code traces}/lingjun-topology/topo.csv), or a cluster YAML file in
     * placement's format.
     */
    public static List<NodeSpec> resolve(String spec, Path traces) throws IOException {
        Matcher m = UNIFORM.matcher(spec);
        if (m.matches()) {
            return uniform(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
        }
        Matcher rk = RACKS.matcher(spec);
        if (rk.matches()) {
            int racks = Integer.parseInt(rk.group(1));
            int perRack = Integer.parseInt(rk.group(2));
            return uniform(racks * perRack, Integer.parseInt(rk.group(3)), perRack);
        }
        if (spec.equals("alibaba")) {
            Path list = traces.resolve("alibaba-openb/openb_node_list_all_node.csv");
            return TraceClusters.alibabaOpenb(Files.readAllLines(list, StandardCharsets.UTF_8), BACKEND);
        }
        if (spec.equals("lingjun")) {
            Path topo = traces.resolve("lingjun-topology/topo.csv");
            return TraceClusters.lingjun(Files.readAllLines(topo, StandardCharsets.UTF_8), BACKEND, "A100");
        }
        Path file = Path.of(spec);
        if (Files.isRegularFile(file)) {
            // placement's parser names the simulated backend for every node
            return ClusterFile.load(file);
        }
        throw new IllegalArgumentException("--cluster: expected uniform:NxG, racks:RxNxG, lingjun, alibaba or a"
                + " cluster YAML file, got "
                + spec);
    }

    public static int totalGpus(List<NodeSpec> nodes) {
        return nodes.stream().mapToInt(NodeSpec::gpuCount).sum();
    }

    /** The rack a node sits in, scoped by its spine (rack names repeat under different spines). */
    public static String rackOf(NodeSpec n) {
        return n.spine() + "/" + n.rack();
    }
}
