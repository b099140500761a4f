package io.gantry.placement.backend;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
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
 *     labels: {rack: rack-0}
 * </pre>
 */
public final class ClusterFile {
    private ClusterFile() {
    }

    /** Four nodes sim-0..sim-3, each 8 x H100 80 GiB, 96 cores, 1 TiB; two per rack. */
    public static List<NodeSpec> defaultCluster() {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            List<Gpu> gpus = new ArrayList<>();
            for (int g = 0; g < 8; g++) {
                gpus.add(new Gpu(g, "H100", 81_920));
            }
            nodes.add(new NodeSpec("sim-" + i, SimulatedBackend.NAME, gpus, 96_000, 1_048_576,
                    Map.of("rack", "rack-" + (i / 2))));
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
            List<Gpu> gpus = gpus(m.get("gpus"), at + ".gpus");
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
            for (int n = 0; n < count; n++) {
                String nodeId = m.containsKey("count") ? id + "-" + n : id;
                if (!ids.add(nodeId)) {
                    throw new IllegalArgumentException(at + ".id: node id " + nodeId + " appears twice");
                }
                nodes.add(new NodeSpec(nodeId, SimulatedBackend.NAME, gpus, (int) cpu, memory, labels));
            }
        }
        return List.copyOf(nodes);
    }

    private static List<Gpu> gpus(Object value, String at) {
        List<Gpu> gpus = new ArrayList<>();
        if (value == null) {
            return gpus;
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
            for (int i = 0; i < count; i++) {
                gpus.add(new Gpu(gpus.size(), model, memory));
            }
        }
        return gpus;
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
