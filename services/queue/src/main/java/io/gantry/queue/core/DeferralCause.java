package io.gantry.queue.core;

/**
 * Why placement could not place an attempt now (placement's {@code DeferralReason}, symbol for symbol); shown to the
 * tenant with placement's sentence.
 */
public enum DeferralCause {
    INSUFFICIENT_FREE_GPUS,
    GANG_LARGER_THAN_CLUSTER,
    TASK_LARGER_THAN_ANY_NODE,
    NO_MATCHING_GPU_MODEL,
    NO_HEALTHY_NODES,
    TOPOLOGY_UNSATISFIABLE,
    FRAGMENTED,
    DRAINING,
    RESERVED,
    CORDONED
}
