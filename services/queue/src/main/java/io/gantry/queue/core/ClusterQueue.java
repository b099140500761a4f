package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One queue of the {@link QuotaTree} (Kueue's ClusterQueue): its quota per resource, its usage and decayed usage
 * history, the pending jobs the {@link PendingIndex} files under it and the runs the {@link QuotaLedger} charges to
 * it. Resources are indexes into {@link QuotaTree#resources}; a limit of {@code -1} means unlimited.
 */
final class ClusterQueue {
    final FairShareConfig.QueueDef def;
    /** Its cohort, or null: then it neither borrows nor lends. */
    final Cohort parent;
    /** The name of its cohort tree: the root cohort's, or {@code queue:<name>} on its own. */
    final String tree;

    // ---------------------------------------------------------------- quota (per resource)
    /** Whether it has a quota for the resource (without one: cpu/memory unlimited, a GPU flavour unavailable). */
    final boolean[] has;
    final long[] nominal;
    final long[] borrowingLimit;
    final long[] lendingLimit;
    /** The part of its nominal quota it never lends: nominal - lending limit. */
    final long[] guaranteed;
    /** The GPU flavours it has a quota for, in fungibility order. */
    final int[] gpuFlavours;

    // ---------------------------------------------------------------- ordering inside the queue
    /** Attained service (millionths of a GPU-second) starting each level after the first; empty: a FIFO queue. */
    final long[] levels;
    /** How long a job waits before it stands at the first level again; -1: never. */
    final long promoteAfterMillis;
    /** Attained service (millionths of a GPU-second) a run's job needs before it yields by service level. */
    final long preemptAfter;

    // ---------------------------------------------------------------- usage
    final long[] usage;
    /** Decayed usage history up to {@link #historyAt}. */
    final double[] history;
    long historyAt = Long.MIN_VALUE;

    // ---------------------------------------------------------------- standing during a cycle (AdmissionCycle's heap)
    double cycleShare;
    int cycleClass;

    // ---------------------------------------------------------------- pending jobs (kept by the PendingIndex)
    /** Its pending jobs in the policy's queue order. */
    final TreeSet<PendingJobEntry> pendingInOrder;
    /** The same jobs by request shape, each shape in queue order. */
    final TreeMap<RequestShape, TreeSet<PendingJobEntry>> pendingByShape = new TreeMap<>();

    // ---------------------------------------------------------------- running (kept by the QuotaLedger)
    final Set<QuotaCharge> running = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Running charges per priority (class, then job priority), so "any lower-priority run?" is O(log n). */
    final TreeMap<Long, Integer> runningByPriority = new TreeMap<>();
    /** Running charges oldest first, so the runs past the minimum run time are a head set. */
    final TreeSet<QuotaCharge> runningByStart = new TreeSet<>(QuotaCharge.BY_START);

    ClusterQueue(FairShareConfig.QueueDef def, Cohort parent, List<String> resources, int gpuCount,
                 Comparator<PendingJobEntry> order, FairShareConfig.Ordering ordering,
                 FairShareConfig.OrderingPolicy policy) {
        int r = resources.size();
        boolean las = policy == FairShareConfig.OrderingPolicy.LAS;
        this.levels = las ? ordering.levels().stream().mapToLong(s -> s * 1_000_000L).toArray() : new long[0];
        this.promoteAfterMillis = las && ordering.promoteAfter() != null ? ordering.promoteAfter().toMillis() : -1;
        this.preemptAfter = ordering.preemptAfter() * 1_000_000L;
        this.def = def;
        this.parent = parent;
        this.tree = parent == null ? "queue:" + def.name() : parent.tree;
        this.has = new boolean[r];
        this.nominal = new long[r];
        this.borrowingLimit = new long[r];
        this.lendingLimit = new long[r];
        this.guaranteed = new long[r];
        this.usage = new long[r];
        this.history = new double[r];
        this.pendingInOrder = new TreeSet<>(order);
        Arrays.fill(borrowingLimit, -1);
        Arrays.fill(lendingLimit, -1);
        List<Integer> gpu = new ArrayList<>();
        for (int i = 0; i < r; i++) {
            FairShareConfig.ResourceQuota rq = def.quotas().get(resources.get(i));
            if (rq == null) {
                continue;
            }
            has[i] = true;
            nominal[i] = rq.nominal();
            borrowingLimit[i] = rq.borrowingLimit() == null ? -1 : rq.borrowingLimit();
            lendingLimit[i] = rq.lendingLimit() == null ? -1 : rq.lendingLimit();
            guaranteed[i] = rq.lendingLimit() == null ? 0 : Math.max(0, rq.nominal() - rq.lendingLimit());
            if (i < gpuCount) {
                gpu.add(i);
            }
        }
        this.gpuFlavours = gpu.stream().mapToInt(Integer::intValue).toArray();
    }

    String name() {
        return def.name();
    }

    /** The root cohort's name (the queue has a cohort). */
    String cohortRootName() {
        return parent.root().name;
    }

    /** The best-standing pending job (the queue has one). */
    PendingJobEntry head() {
        return pendingInOrder.first();
    }

    void started(QuotaCharge c) {
        running.add(c);
        runningByStart.add(c);
        runningByPriority.merge(priorityKey(c.classValue(), c.priority()), 1, Integer::sum);
    }

    void stopped(QuotaCharge c) {
        if (running.remove(c)) {
            runningByStart.remove(c);
            runningByPriority.merge(priorityKey(c.classValue(), c.priority()), -1,
                    (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    /** Whether a run of this queue has run at least until {@code cutoff}. */
    boolean hasRunSince(long cutoff) {
        return !runningByStart.isEmpty() && runningByStart.first().dispatchedMillis() <= cutoff;
    }

    /** The runs dispatched at or before {@code cutoff}. */
    Iterable<QuotaCharge> runningSince(long cutoff) {
        return runningByStart.headSet(new QuotaCharge("\uffff", Integer.MAX_VALUE, null, 0, 0, 0, 0, cutoff, null,
                0, 0, 0), true);
    }

    /** Whether a run of this queue stands below {@code job} (lower class, or same class and lower priority). */
    boolean runsBelow(PendingJob job) {
        return !runningByPriority.isEmpty()
                && runningByPriority.firstKey() < priorityKey(job.classValue(), job.priority());
    }

    /** The service level of {@code attained} (millionths of a GPU-second) in this queue: 0 in a FIFO queue. */
    int level(long attained) {
        int l = 0;
        while (l < levels.length && attained >= levels[l]) {
            l++;
        }
        return l;
    }

    /** The level the run {@code c} has reached by {@code t}, counting its service so far. */
    int level(QuotaCharge c, long t) {
        return levels.length == 0 ? 0 : level(attained(c, t));
    }

    private static long attained(QuotaCharge c, long t) {
        return c.attainedBefore() + c.gpuMilli() * Math.max(0, t - c.dispatchedMillis());
    }

    /**
     * Whether the run {@code c} would yield to a job at service level {@code level} of its queue by {@code t}: it
     * reached a higher level, and its job received at least {@link #preemptAfter} (its class and priority, its
     * checkpoint and minimum run time are the preemptor's to check).
     */
    boolean yieldsByServiceLevel(QuotaCharge c, int level, long t) {
        if (levels.length == 0) {
            return false;
        }
        long attained = attained(c, t);
        return level(attained) > level && attained >= preemptAfter;
    }

    /**
     * Whether a run of this queue dispatched by {@code cutoff}, of {@code job}'s class and priority or below, would
     * yield to {@code job} by service level by {@code t} ({@link #yieldsByServiceLevel}).
     */
    boolean runsAboveLevel(PendingJob job, long cutoff, long t) {
        if (levels.length == 0) {
            return false;
        }
        for (QuotaCharge c : runningSince(cutoff)) {
            if (priorityKey(c.classValue(), c.priority()) <= priorityKey(job.classValue(), job.priority())
                    && yieldsByServiceLevel(c, job.level(), t)) {
                return true;
            }
        }
        return false;
    }

    static long priorityKey(int classValue, int priority) {
        return ((long) classValue << 32) + ((long) priority - Integer.MIN_VALUE);
    }
}
