package io.gantry.placement.core;

/** Why a gang was not placed, most specific first (mirrors the wire enum {@code DeferralReason}). */
public enum DeferralCause {
    /** No node is registered, healthy and served by this placement's backend. */
    NO_HEALTHY_NODES,
    /** A task asks for a GPU model that no healthy node has. */
    NO_MATCHING_GPU_MODEL,
    /** One task needs more GPUs, CPU or memory than any single healthy node has in total. */
    TASK_LARGER_THAN_ANY_NODE,
    /** The whole gang needs more GPUs than all healthy nodes have together. */
    GANG_LARGER_THAN_CLUSTER,
    /** It would fit an empty cluster, but not the free devices now. */
    INSUFFICIENT_FREE_GPUS,
    /** Enough GPUs are free, but not within one domain of the required topology level (or no domain is that big). */
    TOPOLOGY_UNSATISFIABLE,
    /** Enough GPUs are free in total, but scattered so that no node can host some task. */
    FRAGMENTED,
    /** Capacity is being drained for this very gang (its capacity reservation); it is placed when the drain ends. */
    DRAINING,
    /** It would fit only on capacity reserved (being drained) for another gang. */
    RESERVED,
    /** It would fit only on nodes an operator cordoned. */
    CORDONED
}
