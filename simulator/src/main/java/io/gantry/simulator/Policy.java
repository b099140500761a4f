package io.gantry.simulator;

import io.gantry.model.GpuShares;
import io.gantry.queue.core.DispatchPolicy;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.FairSharePolicy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A policy under test: the production queue's dispatch policy and configuration, and whether the simulator holds
 * back every job behind the oldest unplaced one (strict FIFO, which the core's seam cannot express).
 */
public enum Policy {
    /** The production FairSharePolicy with the configured half-life. */
    GANTRY("gantry"),
    /** Strict FIFO: head-of-line blocking, no backfill. */
    FIFO("fifo"),
    /** FIFO order; the core's admission backfills whatever fits behind a blocked head. */
    FIFO_BACKFILL("fifo-backfill"),
    /** FairSharePolicy with a half-life so long that usage never decays: plain DRF on accumulated usage. */
    DRF_NODECAY("drf-nodecay");

    private final String label;

    Policy(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static List<Policy> parse(String list) {
        List<Policy> out = new ArrayList<>();
        for (String s : list.split(",")) {
            String want = s.strip().toLowerCase(Locale.ROOT);
            if (want.equals("all")) {
                return List.of(values());
            }
            Policy found = null;
            for (Policy p : values()) {
                if (p.label.equals(want)) {
                    found = p;
                }
            }
            if (found == null) {
                throw new IllegalArgumentException("--policy: unknown policy '" + s + "' (gantry, fifo, fifo-backfill,"
                        + " drf-nodecay, all)");
            }
            if (!out.contains(found)) {
                out.add(found);
            }
        }
        return out;
    }

    public DispatchPolicy dispatchPolicy() {
        return this == GANTRY || this == DRF_NODECAY ? new FairSharePolicy() : new FifoPolicy();
    }

    public boolean headOfLineGate() {
        return this == FIFO;
    }

    /**
     * The configuration for this policy: the base one for Gantry (with its preemption, ordering and bounded drains);
     * the baselines do not preempt, keep FIFO order inside queues and let capacity reservations only wait (the
     * classic drain), and drf-nodecay also switches usage decay off.
     */
    public FairShareConfig config(FairShareConfig base) {
        if (this == GANTRY) {
            return base;
        }
        if (this != DRF_NODECAY) {
            return base.withPreemption(FairShareConfig.Preemption.OFF).withOrdering(FairShareConfig.Ordering.FIFO)
                    .withMaxDrain(null);
        }
        return new FairShareConfig(base.flavours(), base.cohorts(), base.queues(), base.priorityClasses(),
                base.defaultPriorityClass(), Duration.ofDays(365L * 1000), base.starvationWait(),
                base.implicitQuotas(), FairShareConfig.Preemption.OFF, FairShareConfig.Ordering.FIFO, null);
    }

    /**
     * Queues for a workload on a cluster of {@code clusterGpus}: one queue per tenant with a nominal GPU quota in
     * proportion to its weight (largest remainder, summing to the cluster), all in one cohort with no borrowing
     * limit, so idle quota is lent. With {@code cohorts > 0} and a fixed nominal (the Kueue baseline), tenants are
     * spread round-robin over that many cohorts with the given nominal and borrowing limit.
     */
    public static FairShareConfig queues(Map<String, Double> weights, int clusterGpus, int cohorts, Long nominal,
                                         Long borrowingLimit) {
        List<String> tenants = new ArrayList<>(new java.util.TreeSet<>(weights.keySet()));
        Map<String, String> cohortMap = new LinkedHashMap<>();
        int nCohorts = cohorts > 0 ? cohorts : 1;
        for (int c = 0; c < nCohorts; c++) {
            cohortMap.put("cohort-" + c, null);
        }
        long[] share = new long[tenants.size()];
        if (nominal == null) {
            double total = weights.values().stream().mapToDouble(Double::doubleValue).sum();
            double[] exact = new double[tenants.size()];
            long given = 0;
            for (int i = 0; i < tenants.size(); i++) {
                exact[i] = clusterGpus * weights.get(tenants.get(i)) / total;
                share[i] = (long) Math.floor(exact[i]);
                given += share[i];
            }
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < tenants.size(); i++) {
                order.add(i);
            }
            order.sort((a, b) -> Double.compare(exact[b] - share[b], exact[a] - share[a]));
            for (int k = 0; given < clusterGpus; k = (k + 1) % order.size()) {
                share[order.get(k)]++;
                given++;
            }
        } else {
            java.util.Arrays.fill(share, nominal);
        }
        List<FairShareConfig.QueueDef> defs = new ArrayList<>();
        for (int i = 0; i < tenants.size(); i++) {
            // the queue keeps GPU quota in thousandths of a GPU
            defs.add(new FairShareConfig.QueueDef(tenants.get(i), tenants.get(i), "cohort-" + (i % nCohorts), 1.0,
                    Map.of(FairShareConfig.ANY_GPU, new FairShareConfig.ResourceQuota(share[i] * GpuShares.WHOLE,
                            borrowingLimit == null ? null : borrowingLimit * GpuShares.WHOLE, null))));
        }
        return new FairShareConfig(List.of(FairShareConfig.ANY_GPU), cohortMap, defs,
                Map.of(FairShareConfig.DEFAULT_CLASS, 0), FairShareConfig.DEFAULT_CLASS, Duration.ofDays(7),
                Duration.ofMinutes(30), null);
    }
}
