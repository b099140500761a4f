package io.gantry.admission.core;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the queue's and placement's configurations accept, as admission learns it from their events: a spec that
 * names a queue, priority class or GPU tier they do not have would otherwise be accepted and wait forever (or,
 * worse, run somewhere it did not ask for).
 *
 * <p>Each part may be unknown (null) while its configuration has not been read yet, or was published before it
 * carried that part; admission then accepts what it cannot judge and the owning service decides.
 *
 * @param queueTenants    every queue's tenant by queue name; null when every tenant has exactly one queue named
 *                        after it (the queue's implicit configuration) or when the queues are unknown
 * @param priorityClasses the configured priority class names, or null when unknown
 * @param tiers           GPU tier name to its models in order of preference, or null when unknown
 * @param pools           placement's pools, or null when unknown (no placement configuration read yet)
 */
public record SchedulingCatalog(Map<String, String> queueTenants, Set<String> priorityClasses,
                                Map<String, List<String>> tiers, boolean queuesKnown, Set<String> pools) {
    public SchedulingCatalog {
        queueTenants = queueTenants == null ? null : Map.copyOf(queueTenants);
        priorityClasses = priorityClasses == null ? null : Set.copyOf(priorityClasses);
        tiers = tiers == null ? null : Map.copyOf(tiers);
        pools = pools == null ? null : Set.copyOf(pools);
    }

    /** Pools unknown. */
    public SchedulingCatalog(Map<String, String> queueTenants, Set<String> priorityClasses,
                             Map<String, List<String>> tiers, boolean queuesKnown) {
        this(queueTenants, priorityClasses, tiers, queuesKnown, null);
    }

    /** An explicit queue configuration (queues known). */
    public SchedulingCatalog(Map<String, String> queueTenants, Set<String> priorityClasses,
                             Map<String, List<String>> tiers) {
        this(queueTenants, priorityClasses, tiers, true);
    }

    /** Nothing known yet: nothing is refused for naming a queue, class or tier. */
    public static SchedulingCatalog unknown() {
        return new SchedulingCatalog(null, null, null, false);
    }

    /** Every tenant has one queue named after it; classes and tiers unknown. */
    public static SchedulingCatalog implicitQueues() {
        return new SchedulingCatalog(null, null, null, true);
    }

    public SchedulingCatalog withQueues(Map<String, String> queueTenants, Set<String> priorityClasses) {
        return new SchedulingCatalog(queueTenants, priorityClasses, tiers, true, pools);
    }

    public SchedulingCatalog withTiers(Map<String, List<String>> tiers) {
        return new SchedulingCatalog(queueTenants, priorityClasses, tiers, queuesKnown, pools);
    }

    /**
     * Placement's pools as it published them; empty (a configuration published before pools) stands for the one
     * pool {@code default}.
     */
    public SchedulingCatalog withPools(Set<String> pools) {
        return new SchedulingCatalog(queueTenants, priorityClasses, tiers, queuesKnown,
                pools.isEmpty() ? Set.of(DEFAULT_POOL) : pools);
    }

    /** The pool of a placement configured without pools. */
    public static final String DEFAULT_POOL = "default";

    /**
     * Why a job of {@code tenant} asking for queue {@code requested} (null: the queue named after the tenant, as the
     * queue resolves it) cannot be queued, or null when it can (or the queues are not known).
     */
    String queueProblem(String tenant, String requested) {
        if (!queuesKnown || tenant == null) {
            return null;
        }
        String name = requested == null ? tenant : requested;
        if (queueTenants == null) {
            return name.equals(tenant) ? null
                    : "tenant " + tenant + " has no queue '" + name + "'; its queues: " + tenant;
        }
        if (tenant.equals(queueTenants.get(name))) {
            return null;
        }
        TreeSet<String> own = new TreeSet<>();
        queueTenants.forEach((q, t) -> {
            if (t.equals(tenant)) {
                own.add(q);
            }
        });
        if (own.isEmpty()) {
            return "tenant " + tenant + " has no queue in the current configuration (ask an operator to add one)";
        }
        return requested == null
                ? "tenant " + tenant + " has no default queue '" + tenant + "'; name one of its queues: "
                        + String.join(", ", own)
                : "tenant " + tenant + " has no queue '" + requested + "'; its queues: " + String.join(", ", own);
    }

    /** Why {@code priorityClass} (non-null) is refused, or null. */
    String priorityClassProblem(String priorityClass) {
        if (priorityClasses == null || priorityClasses.contains(priorityClass)) {
            return null;
        }
        return "unknown priority class '" + priorityClass + "'; classes: "
                + (priorityClasses.isEmpty() ? "none are configured" : String.join(", ", new TreeSet<>(priorityClasses)));
    }

    /** Why {@code pool} (non-null) is refused, or null. */
    String poolProblem(String pool) {
        if (pools == null || pools.contains(pool)) {
            return null;
        }
        return "unknown pool '" + pool + "'; pools: " + String.join(", ", new TreeSet<>(pools));
    }

    /** Why {@code tier} (non-null) is refused, or null. */
    String tierProblem(String tier) {
        if (tiers == null || tiers.containsKey(tier)) {
            return null;
        }
        return "unknown GPU tier '" + tier + "'; tiers: "
                + (tiers.isEmpty() ? "none are configured" : String.join(", ", new TreeMap<>(tiers).keySet()));
    }
}
