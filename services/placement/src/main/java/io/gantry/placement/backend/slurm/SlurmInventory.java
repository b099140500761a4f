package io.gantry.placement.backend.slurm;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns {@code scontrol show node} (and {@code scontrol show topology}) into Gantry's node inventory: the nodes of
 * the Gantry partition, their GPUs from gres, CPU, memory, sockets and their place in the switch hierarchy.
 *
 * <ul>
 *   <li>GPUs: every gres of name {@code gresName}, numbered 0.. in the order Slurm lists them (its device order);
 *       the model is the gres type mapped by {@code gpu-models}. A gres line's socket affinity ({@code (S:0)})
 *       puts its GPUs on that socket; a line spanning several sockets spreads its GPUs over them in index order.
 *       The PCIe switch is the socket; all GPUs of a node are one NVLink domain (Slurm does not print NVLink).</li>
 *   <li>CPU: {@code CPUEfctv} (else {@code CPUTot}) × 1000 split evenly over {@code Boards × Sockets}; memory:
 *       {@code RealMemory − MemSpecLimit} MiB.</li>
 *   <li>Topology: a feature {@code <rack-feature-prefix><rack>} / {@code <spine-feature-prefix><spine>} names the
 *       rack / spine; without one, the level-0 switch of {@code topology.conf} holding the node is its rack and
 *       that switch's parent its spine.</li>
 * </ul>
 */
public final class SlurmInventory {
    /** Label carrying the node's Slurm features, comma-separated. */
    public static final String FEATURES_LABEL = "slurm/features";

    private SlurmInventory() {
    }

    /** The nodes of {@code config.partition()}, sorted by name. */
    public static List<NodeSpec> nodes(List<SlurmOutput.Node> nodes, List<SlurmOutput.Switch> switches,
                                       SlurmConfig config) {
        List<NodeSpec> out = new ArrayList<>();
        for (SlurmOutput.Node n : nodes) {
            if (n.partitions().contains(config.partition())) {
                out.add(node(n, switches, config));
            }
        }
        out.sort(java.util.Comparator.comparing(NodeSpec::nodeId));
        return out;
    }

    static NodeSpec node(SlurmOutput.Node n, List<SlurmOutput.Switch> switches, SlurmConfig config) {
        int sockets = Math.max(1, n.sockets());
        List<Gpu> gpus = new ArrayList<>();
        int index = 0;
        int total = n.gres().stream().filter(g -> g.name().equals(config.gresName()))
                .mapToInt(SlurmOutput.Gres::count).sum();
        for (SlurmOutput.Gres g : n.gres()) {
            if (!g.name().equals(config.gresName())) {
                continue;
            }
            for (int j = 0; j < g.count() && index < NodeSpec.MAX_GPUS; j++, index++) {
                int socket;
                if (!g.sockets().isEmpty()) {
                    socket = g.sockets().get(j * g.sockets().size() / g.count());
                } else {
                    socket = index * sockets / Math.max(1, total);
                }
                socket = socket < sockets ? socket : 0;
                gpus.add(new Gpu(index, config.modelOf(g.type()), 0, socket, socket, 0));
            }
        }
        int cpuMillis = n.cpus() * 1000;
        List<Integer> numa = new ArrayList<>();
        if (sockets > 1) {
            int each = cpuMillis / sockets;
            for (int s = 0; s < sockets; s++) {
                numa.add(s == sockets - 1 ? cpuMillis - each * (sockets - 1) : each);
            }
        }
        Map<String, String> labels = new TreeMap<>();
        String rack = feature(n, config.rackFeaturePrefix());
        String spine = feature(n, config.spineFeaturePrefix());
        SlurmOutput.Switch leaf = switches.stream().filter(s -> s.level() == 0 && s.nodes().contains(n.name()))
                .findFirst().orElse(null);
        if (rack == null && leaf != null) {
            rack = leaf.name();
        }
        if (spine == null && leaf != null) {
            spine = switches.stream().filter(s -> s.switches().contains(leaf.name())).map(SlurmOutput.Switch::name)
                    .findFirst().orElse(null);
        }
        if (rack != null) {
            labels.put(NodeSpec.RACK_LABEL, rack);
        }
        if (spine != null) {
            labels.put(NodeSpec.SPINE_LABEL, spine);
        }
        if (!n.features().isEmpty()) {
            labels.put(FEATURES_LABEL, String.join(",", n.features()));
        }
        return new NodeSpec(n.name(), SlurmBackend.NAME, gpus, cpuMillis,
                Math.max(0, n.realMemoryMiB() - n.memSpecLimitMiB()), labels, numa);
    }

    private static String feature(SlurmOutput.Node n, String prefix) {
        if (prefix.isEmpty()) {
            return null;
        }
        return n.features().stream().filter(f -> f.startsWith(prefix) && f.length() > prefix.length())
                .map(f -> f.substring(prefix.length())).findFirst().orElse(null);
    }

    /** The gres type to ask Slurm for a GPU of {@code model} on {@code node} (null: untyped gres). */
    public static String gresType(SlurmOutput.Node node, String model, SlurmConfig config) {
        for (SlurmOutput.Gres g : node.gres()) {
            if (g.name().equals(config.gresName()) && config.modelOf(g.type()).equals(model)) {
                return g.type();
            }
        }
        return null;
    }
}
