package io.gantry.placement.core;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What holds across the pools of a cluster before anything is placed. A pool is a scheduling island with its own
 * backend, inventory and {@link ClusterState}; a gang never spans pools. Node ids are unique across pools, so a
 * node's id alone says which pool's state it belongs to (recovery's node events carry no pool).
 */
public final class Pools {
    /** The one pool of a configuration without pools, and the pool of records written before pools. */
    public static final String DEFAULT = "default";
    private static final Pattern NAME = Pattern.compile("[a-z0-9-]{1,32}");

    private Pools() {
    }

    /** {@code name} when it is a valid pool name; else an IllegalArgumentException saying what one is. */
    public static String checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("pool name `" + name + "` must be 1-32 characters of a-z, 0-9 and -");
        }
        return name;
    }

    /**
     * The first node id listed by two pools (pools in the map's order), as the sentence that refuses the start;
     * empty when every node id is in one pool only.
     */
    public static Optional<String> duplicateNode(Map<String, List<String>> nodeIdsByPool) {
        Map<String, String> poolOf = new HashMap<>();
        for (Map.Entry<String, List<String>> pool : nodeIdsByPool.entrySet()) {
            for (String nodeId : new LinkedHashSet<>(pool.getValue())) {
                String other = poolOf.putIfAbsent(nodeId, pool.getKey());
                if (other != null) {
                    return Optional.of("node " + nodeId + " is in pools " + other + " and " + pool.getKey()
                            + ": node ids must be unique across pools");
                }
            }
        }
        return Optional.empty();
    }
}
