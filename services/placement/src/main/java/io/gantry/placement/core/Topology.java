package io.gantry.placement.core;

/**
 * A gang's topology constraint: {@code required} is never violated (the gang waits instead); {@code preferred}
 * is tried first. The placer tries every level from the tightest up anyway, so a preference looser than what
 * fits costs nothing; a preference looser than the requirement is clamped to it.
 */
public record Topology(TopologyLevel required, TopologyLevel preferred) {
    public static final Topology ANYWHERE = new Topology(TopologyLevel.CLUSTER, TopologyLevel.CLUSTER);

    public Topology {
        required = required == null ? TopologyLevel.CLUSTER : required;
        preferred = preferred == null ? required : preferred;
        if (required.tighterThan(preferred)) {
            preferred = required;
        }
    }

    public static Topology required(TopologyLevel level) {
        return new Topology(level, level);
    }

    public static Topology preferred(TopologyLevel level) {
        return new Topology(TopologyLevel.CLUSTER, level);
    }
}
