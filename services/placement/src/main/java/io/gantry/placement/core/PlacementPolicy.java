package io.gantry.placement.core;

/**
 * How small jobs are spread over the pool. Gangs are always packed as tightly as the topology allows; the policy
 * only decides which of the domains that fit is taken.
 */
public enum PlacementPolicy {
    /** The fitting node / NVLink domain / PCIe switch / rack with the fewest free GPUs: keeps whole nodes and racks free. */
    BINPACK,
    /** The fitting domain with the most free GPUs: spreads load (and heat), fragments the pool faster. */
    SPREAD
}
