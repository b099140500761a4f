package io.gantry.placement.core;

/**
 * A level of the topology tree, tightest first (mirrors the wire enum {@code TopologyLevel}). A gang "within one
 * domain of level L" has all its GPUs under one NVLink domain, node, top-of-rack switch, spine, or anywhere.
 */
public enum TopologyLevel {
    NVLINK("one NVLink domain"),
    NODE("one node"),
    RACK("one rack"),
    SPINE("one spine"),
    CLUSTER("the cluster");

    private final String phrase;

    TopologyLevel(String phrase) {
        this.phrase = phrase;
    }

    /** For messages: "within one rack". */
    public String phrase() {
        return phrase;
    }

    public boolean tighterThan(TopologyLevel other) {
        return ordinal() < other.ordinal();
    }
}
