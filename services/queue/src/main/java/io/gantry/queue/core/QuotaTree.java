package io.gantry.queue.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The quota tree (Kueue semantics): cohorts and queues, each queue's nominal quota, borrowing and lending limits per
 * resource, usage and decayed usage history; what a queue could take now ({@link #available}) or in an idle tree
 * ({@link #maxAvailable}), and the weighted dominant share the fair-share order uses.
 *
 * <p>Resources are indexes into {@link #resources}: the GPU flavours first (up to {@link #cpu}), then cpu and memory.
 * Usage changes only through {@link #add(QuotaCharge, int, boolean)}; real changes are remembered until the next
 * cycle ({@link #usageChanged}, {@link #freedTrees}).
 */
final class QuotaTree {
    /** No GPU flavour: the job needs no GPUs. */
    static final int NO_GPU = -1;
    /** Not admissible now. */
    static final int NO_FIT = -2;
    /** What a queue without a quota for cpu or memory may take of it. */
    private static final long UNTRACKED = Long.MAX_VALUE / 4;

    final FairShareConfig config;
    final List<String> resources;
    private final Map<String, Integer> resourceIndex = new HashMap<>();
    /** Index of cpu millicores; every index below it is a GPU flavour. */
    final int cpu;
    /** Index of memory MiB. */
    final int mem;
    /** Index of the "any model" GPU flavour, or -1. */
    final int anyGpu;
    private final double halfLifeSeconds;
    private final java.util.Comparator<PendingJobEntry> queueOrder;

    private final Map<String, Cohort> cohorts = new LinkedHashMap<>();
    /** Queues by name, in configured order (implicit queues in order of first use). */
    final Map<String, ClusterQueue> queues = new LinkedHashMap<>();
    /** The queues of each cohort tree, by tree name. */
    final Map<String, List<ClusterQueue>> trees = new TreeMap<>();
    private final Map<String, long[]> treeNominal = new HashMap<>();

    /** Queues whose usage changed since the last cycle (the preemptor looks at them between ticks). */
    final Set<ClusterQueue> usageChanged = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Cohort trees whose usage went down since the last cycle (anything in them may fit now). */
    final Set<String> freedTrees = new TreeSet<>();

    QuotaTree(FairShareConfig config, java.util.Comparator<PendingJobEntry> queueOrder) {
        this.config = config;
        this.queueOrder = queueOrder;
        this.resources = config.resources();
        for (int i = 0; i < resources.size(); i++) {
            resourceIndex.put(resources.get(i), i);
        }
        this.cpu = resourceIndex.get(FairShareConfig.CPU);
        this.mem = resourceIndex.get(FairShareConfig.MEMORY);
        this.anyGpu = resourceIndex.getOrDefault(FairShareConfig.ANY_GPU, -1);
        this.halfLifeSeconds = config.halfLife().toMillis() / 1000.0;
        for (Map.Entry<String, String> c : config.cohorts().entrySet()) {
            cohort(c.getKey());
        }
        for (FairShareConfig.QueueDef def : config.queues()) {
            addQueue(def);
        }
    }

    // ------------------------------------------------------------------ structure

    private Cohort cohort(String name) {
        Cohort c = cohorts.get(name);
        if (c != null) {
            return c;
        }
        c = new Cohort(name, resources.size());
        cohorts.put(name, c);
        String parent = config.cohorts().get(name);
        if (parent != null) {
            c.parent = cohort(parent);
            c.tree = c.parent.tree;
        } else {
            c.tree = "cohort:" + name;
        }
        return c;
    }

    private ClusterQueue addQueue(FairShareConfig.QueueDef def) {
        int r = resources.size();
        Cohort parent = def.cohort() == null ? null : cohort(def.cohort());
        ClusterQueue q = new ClusterQueue(def, parent, resources, cpu, queueOrder, config.ordering(),
                config.orderingOf(def));
        // a cohort without limits of its own passes its whole subtree on to its parent
        for (Cohort c = parent; c != null; c = c.parent) {
            for (int i = 0; i < r; i++) {
                c.subtree[i] += q.nominal[i] - q.guaranteed[i];
            }
        }
        queues.put(def.name(), q);
        trees.computeIfAbsent(q.tree, t -> new ArrayList<>()).add(q);
        long[] total = treeNominal.computeIfAbsent(q.tree, t -> new long[r]);
        for (int i = 0; i < r; i++) {
            total[i] += q.nominal[i];
        }
        return q;
    }

    /** The queue a job of {@code tenant} asking for {@code requested} goes to, or null. */
    ClusterQueue queueFor(String tenant, String requested) {
        String name = requested == null ? tenant : requested;
        ClusterQueue q = queues.get(name);
        if (q == null && config.isImplicit() && name.equals(tenant)) {
            q = addQueue(config.implicitQueue(tenant));
        }
        return q != null && q.def.tenant().equals(tenant) ? q : null;
    }

    String queueNameOf(QueuedJob job) {
        ClusterQueue q = queueFor(job.tenant(), job.spec().queue());
        return q == null ? null : q.name();
    }

    /** The resource index of a resource name, or null if this configuration has no such resource. */
    Integer resourceIndex(String name) {
        return name == null ? null : resourceIndex.get(name);
    }

    /** The GPU flavour {@code model} is charged to in {@code q} (the model's own, else "any"), or -1. */
    int gpuResource(ClusterQueue q, String model) {
        Integer i = resourceIndex(model);
        if (i != null && i < cpu && q.has[i]) {
            return i;
        }
        return anyGpu >= 0 && q.has[anyGpu] ? anyGpu : -1;
    }

    /** Whether {@code r} of {@code q} is an implicit queue's plain GPU quota (explained per tenant). */
    boolean isImplicit(ClusterQueue q, int r) {
        return config.isImplicit() && r == anyGpu && q.parent == null;
    }

    // ------------------------------------------------------------------ available

    /** What {@code q} could still take of resource {@code r} now (Kueue's hierarchical "available"). */
    long available(ClusterQueue q, int r) {
        if (!q.has[r]) {
            return UNTRACKED;
        }
        if (q.parent == null) {
            return q.nominal[r] - q.usage[r];
        }
        long local = Math.max(0, q.guaranteed[r] - q.usage[r]);
        Cohort root = q.parent.root();
        long fromParent = root.subtree[r] - root.usage[r];
        if (q.borrowingLimit[r] >= 0) {
            long stored = q.nominal[r] - q.guaranteed[r];
            long usedInParent = Math.max(0, q.usage[r] - q.guaranteed[r]);
            fromParent = Math.min(fromParent, stored - usedInParent + q.borrowingLimit[r]);
        }
        return local + Math.max(0, fromParent);
    }

    /** What {@code q} could take of {@code r} if nothing in its cohort tree were in use. */
    long maxAvailable(ClusterQueue q, int r) {
        if (!q.has[r]) {
            return UNTRACKED;
        }
        if (q.parent == null) {
            return q.nominal[r];
        }
        Cohort root = q.parent.root();
        long fromParent = root.subtree[r];
        if (q.borrowingLimit[r] >= 0) {
            fromParent = Math.min(fromParent, q.nominal[r] - q.guaranteed[r] + q.borrowingLimit[r]);
        }
        return q.guaranteed[r] + fromParent;
    }

    /** The first candidate flavour with room for the job's GPUs, NO_GPU if it needs none, else NO_FIT. */
    int gpuFlavour(PendingJobEntry p) {
        if (p.gpuMilli() == 0) {
            return NO_GPU;
        }
        for (int f : p.candidates()) {
            if (p.gpuMilli() <= available(p.queue(), f)) {
                return f;
            }
        }
        return NO_FIT;
    }

    /** The flavour the job's quota fits on now (reservations aside), NO_GPU if it needs no GPUs, else NO_FIT. */
    int quotaFit(PendingJobEntry p) {
        int f = gpuFlavour(p);
        if (f == NO_FIT || p.cpu() > available(p.queue(), cpu) || p.mem() > available(p.queue(), mem)) {
            return NO_FIT;
        }
        return f;
    }

    /** Whether {@code p} would stay within its queue's nominal quota on some candidate flavour, CPU and memory. */
    boolean withinNominal(PendingJobEntry p) {
        ClusterQueue q = p.queue();
        if (q.has[cpu] && q.usage[cpu] + p.cpu() > q.nominal[cpu]
                || q.has[mem] && q.usage[mem] + p.mem() > q.nominal[mem]) {
            return false;
        }
        if (p.gpuMilli() == 0) {
            return true;
        }
        for (int f : p.candidates()) {
            if (q.usage[f] + p.gpuMilli() <= q.nominal[f]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code p} would stay within its queue's nominal quota on flavour {@code f} (a GPU flavour, or
     * {@link #NO_GPU}), CPU and memory.
     */
    boolean withinNominal(PendingJobEntry p, int f) {
        ClusterQueue q = p.queue();
        if (q.has[cpu] && q.usage[cpu] + p.cpu() > q.nominal[cpu]
                || q.has[mem] && q.usage[mem] + p.mem() > q.nominal[mem]) {
            return false;
        }
        return p.gpuMilli() == 0 || f >= 0 && q.usage[f] + p.gpuMilli() <= q.nominal[f];
    }

    /** Whether {@code q} uses more than its nominal quota of anything. */
    boolean borrowsAnything(ClusterQueue q) {
        for (int r = 0; r < q.usage.length; r++) {
            if (q.has[r] && q.usage[r] > q.nominal[r]) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code q} uses more than its nominal quota of something the run {@code c} holds. */
    boolean borrowing(ClusterQueue q, QuotaCharge c) {
        return c.flavour() >= 0 && c.gpuMilli() > 0 && q.usage[c.flavour()] > q.nominal[c.flavour()]
                || c.cpu() > 0 && q.has[cpu] && q.usage[cpu] > q.nominal[cpu]
                || c.mem() > 0 && q.has[mem] && q.usage[mem] > q.nominal[mem];
    }

    // ------------------------------------------------------------------ usage

    /**
     * Adds ({@code sign} 1) or removes (-1) what {@code c} holds to its queue's usage and up its cohorts. A
     * {@code real} change (a charge, not a what-if) is remembered for the next cycle.
     */
    void add(QuotaCharge c, int sign, boolean real) {
        if (c.flavour() >= 0) {
            addUsage(c.queue(), c.flavour(), sign * c.gpuMilli(), real);
        }
        addUsage(c.queue(), cpu, sign * c.cpu(), real);
        addUsage(c.queue(), mem, sign * c.mem(), real);
    }

    private void addUsage(ClusterQueue q, int r, long delta, boolean real) {
        if (delta == 0 || !q.has[r]) {
            return;
        }
        long before = Math.max(0, q.usage[r] - q.guaranteed[r]);
        q.usage[r] += delta;
        long d = Math.max(0, q.usage[r] - q.guaranteed[r]) - before;
        for (Cohort c = q.parent; c != null && d != 0; c = c.parent) {
            c.usage[r] += d;
        }
        if (real) {
            usageChanged.add(q);
            if (delta < 0) {
                freedTrees.add(q.tree);
            }
        }
    }

    /** Accrues {@code q}'s usage history up to {@code t} (before its usage changes). */
    void accrue(ClusterQueue q, long t) {
        if (halfLifeSeconds > 0 && q.historyAt != Long.MIN_VALUE && t > q.historyAt) {
            double decay = Math.pow(2, -(t - q.historyAt) / 1000.0 / halfLifeSeconds);
            double gain = halfLifeSeconds / Math.log(2) * (1 - decay);
            for (int r = 0; r < q.history.length; r++) {
                q.history[r] = q.history[r] * decay + q.usage[r] * gain;
            }
        }
        if (q.historyAt == Long.MIN_VALUE || t > q.historyAt) {
            q.historyAt = t;
        }
    }

    /** Takes over the usage history of the previous configuration's queues (matched by queue and resource name). */
    void adoptHistory(QuotaTree previous) {
        for (ClusterQueue oq : previous.queues.values()) {
            ClusterQueue nq = queueFor(oq.def.tenant(), oq.name());
            if (nq == null) {
                continue;
            }
            for (int r = 0; r < previous.resources.size(); r++) {
                Integer nr = resourceIndex.get(previous.resources.get(r));
                if (nr != null && nq.has[nr]) {
                    nq.history[nr] = oq.history[r];
                }
            }
            nq.historyAt = oq.historyAt;
        }
    }

    /** Every queue's decayed usage history, in the order the queues were made (for {@link QueueMemory}). */
    List<QueueMemory.QueueUsage> usageHistories() {
        List<QueueMemory.QueueUsage> out = new ArrayList<>(queues.size());
        for (ClusterQueue q : queues.values()) {
            Map<String, Double> h = new java.util.HashMap<>();
            for (int r = 0; r < resources.size(); r++) {
                if (q.has[r] && q.history[r] != 0) {
                    h.put(resources.get(r), q.history[r]);
                }
            }
            out.add(new QueueMemory.QueueUsage(q.def.tenant(), q.name(), h, q.historyAt));
        }
        return out;
    }

    /**
     * Makes each remembered queue (an implicit one too), in order, and gives it its history; matched by queue and
     * resource name as after a reconfiguration. Queues this configuration no longer has are skipped.
     */
    void restoreUsageHistories(List<QueueMemory.QueueUsage> histories) {
        for (QueueMemory.QueueUsage u : histories) {
            ClusterQueue q = queueFor(u.tenant(), u.queue());
            if (q == null) {
                continue;
            }
            u.history().forEach((resource, value) -> {
                Integer r = resourceIndex.get(resource);
                if (r != null && q.has[r]) {
                    q.history[r] = value;
                }
            });
            q.historyAt = u.atMillis();
        }
    }

    // ------------------------------------------------------------------ shares

    /** The weighted dominant share of {@code q} at {@code t} (see docs/design/fair-share.md). */
    double weightedShare(ClusterQueue q, long t) {
        long[] cap = treeNominal.get(q.tree);
        double decay = 1;
        double gain = 0;
        if (halfLifeSeconds > 0 && q.historyAt != Long.MIN_VALUE && t > q.historyAt) {
            decay = Math.pow(2, -(t - q.historyAt) / 1000.0 / halfLifeSeconds);
            gain = halfLifeSeconds / Math.log(2) * (1 - decay);
        }
        double k = halfLifeSeconds > 0 ? Math.log(2) / halfLifeSeconds : 0;
        double dominant = 0;
        for (int r = 0; r < cap.length; r++) {
            if (!q.has[r] || cap[r] <= 0) {
                continue;
            }
            double history = q.history[r] * decay + q.usage[r] * gain;
            dominant = Math.max(dominant, (q.usage[r] + k * history) / cap[r]);
        }
        return dominant / q.def.weight();
    }

    /** The queue's weight over the sum of the weights of its tree. */
    double fairShare(ClusterQueue q) {
        double sum = 0;
        for (ClusterQueue other : trees.get(q.tree)) {
            sum += other.def.weight();
        }
        return q.def.weight() / sum;
    }

    // ------------------------------------------------------------------ views

    List<QueueView> views(Instant now, Map<String, int[]> counts) {
        long t = now.toEpochMilli();
        List<QueueView> out = new ArrayList<>();
        for (ClusterQueue q : queues.values()) {
            List<QueueView.FlavourView> fl = new ArrayList<>();
            for (int r = 0; r < resources.size(); r++) {
                if (!q.has[r]) {
                    continue;
                }
                fl.add(new QueueView.FlavourView(resources.get(r), q.nominal[r], q.usage[r],
                        Math.max(0, q.usage[r] - q.nominal[r]), lent(q, r),
                        q.parent == null ? null : q.borrowingLimit[r] < 0 ? null : q.borrowingLimit[r],
                        q.lendingLimit[r] < 0 ? null : q.lendingLimit[r]));
            }
            int[] c = counts.getOrDefault(q.name(), new int[3]);
            out.add(new QueueView(q.name(), q.def.tenant(), q.def.cohort(), fl, c[0], c[1], c[2],
                    weightedShare(q, t), fairShare(q)));
        }
        return out;
    }

    /** The tree's borrowing of {@code r} attributed pro rata to the lenders' idle lendable nominal. */
    private long lent(ClusterQueue q, int r) {
        if (q.parent == null) {
            return 0;
        }
        long borrowed = 0;
        long idle = 0;
        for (ClusterQueue other : trees.get(q.tree)) {
            if (!other.has[r]) {
                continue;
            }
            borrowed += Math.max(0, other.usage[r] - other.nominal[r]);
            idle += lendableIdle(other, r);
        }
        long mine = lendableIdle(q, r);
        return idle == 0 ? 0 : Math.min(mine, borrowed * mine / idle);
    }

    private static long lendableIdle(ClusterQueue q, int r) {
        long idle = Math.max(0, q.nominal[r] - q.usage[r]);
        return q.lendingLimit[r] < 0 ? idle : Math.min(idle, q.lendingLimit[r]);
    }

    /** Usage per queue and resource, for state comparison. */
    Map<String, List<Long>> usage() {
        Map<String, List<Long>> u = new TreeMap<>();
        for (ClusterQueue q : queues.values()) {
            List<Long> l = new ArrayList<>();
            for (long v : q.usage) {
                l.add(v);
            }
            u.put(q.name(), l);
        }
        return u;
    }
}
