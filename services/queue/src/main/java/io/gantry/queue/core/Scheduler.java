package io.gantry.queue.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The admission engine behind {@link QueueCore}: the quota ledger of every queue and cohort (Kueue semantics), the
 * decayed usage history, and an index of pending jobs per queue and request shape, so that one event costs work in
 * proportion to the queues of the cohort tree it touches, not to the number of pending jobs.
 *
 * <p>It is mutated only through {@link QueueCore#replay} (charge, uncharge, sync) and reads {@code now} only as an
 * argument, so replaying the same facts at the same event times rebuilds exactly the same ledger.
 */
final class Scheduler {
    static final int NO_FIT = -2;
    static final int NO_GPU = -1;
    /** How deep backfill looks into one request shape when its head is held back by CPU, memory or a reservation. */
    static final int SHAPE_DEPTH = 64;
    private static final long UNTRACKED = Long.MAX_VALUE / 4;

    final FairShareConfig config;
    final DispatchPolicy policy;
    private final List<String> resources;
    private final Map<String, Integer> resIndex = new HashMap<>();
    private final int cpu;
    private final int mem;
    private final int anyGpu;
    private final double halfLifeSeconds;
    private final long starvationMillis;
    private final Comparator<Pend> queueOrder;

    private final Map<String, Cohort> cohorts = new LinkedHashMap<>();
    /** Queues by name, in configured order (implicit queues in order of first use). */
    final Map<String, Q> queues = new LinkedHashMap<>();
    private final Map<String, List<Q>> trees = new TreeMap<>();
    private final Map<String, long[]> treeNominal = new HashMap<>();
    private final Map<String, Integer> candidateKeys = new HashMap<>();

    /** Schedulable pending jobs (in a queue's buckets). */
    private final Map<String, Pend> index = new HashMap<>();
    /** Pending jobs that can never be admitted under this configuration, with the reason. */
    private final Map<String, String> neverFits = new TreeMap<>();
    private final Map<String, Map<Integer, Charge>> charges = new HashMap<>();
    /**
     * Charges of runs whose queue is not in this configuration (removed while they ran). They count against no queue
     * but stay until the run's QuotaReleased, and are charged again if a later configuration brings the queue back,
     * so a run that goes on is never forgotten by the ledger.
     */
    private final Map<String, Map<Integer, Orphan>> orphans = new HashMap<>();
    final Set<String> parked = new TreeSet<>();
    private final Set<String> unparking = new TreeSet<>();
    private final Set<String> fresh = new TreeSet<>();
    /** Cohort trees whose usage went down (anything in them may fit now). */
    private final Set<String> dirty = new TreeSet<>();
    /** Queues that gained pending jobs while their tree's availability did not grow: only they can have news. */
    private final Set<Q> dirtyQueues = new java.util.LinkedHashSet<>();
    private final Map<String, String> lastReserved = new HashMap<>();
    /** Runs being preempted, by job id. */
    private final Map<String, Preempting> preempting = new TreeMap<>();
    /** Set by a tick: every cohort tree is checked for preemption in the next cycle, not only the changed ones. */
    private boolean timePassed;
    /**
     * Queues whose usage changed or that gained pending jobs since the last cycle: between ticks only their heads
     * are looked at for preemption (anything else that time alone makes possible waits for the next tick).
     */
    private final Set<Q> preemptCheck = java.util.Collections.newSetFromMap(new IdentityHashMap<>());

    private Checkpoints checkpoints = new Checkpoints();

    /** The checkpoints the core learned: preemption loses only the work since a run's last one. */
    void checkpoints(Checkpoints known) {
        this.checkpoints = known;
    }

    Scheduler(FairShareConfig config, DispatchPolicy policy) {
        this.config = config;
        this.policy = policy;
        this.resources = config.resources();
        for (int i = 0; i < resources.size(); i++) {
            resIndex.put(resources.get(i), i);
        }
        this.scratch = new long[resources.size()];
        this.cpu = resIndex.get(FairShareConfig.CPU);
        this.mem = resIndex.get(FairShareConfig.MEMORY);
        this.anyGpu = resIndex.getOrDefault(FairShareConfig.ANY_GPU, -1);
        this.halfLifeSeconds = config.halfLife().toMillis() / 1000.0;
        this.starvationMillis = config.starvationWait().toMillis();
        Comparator<PendingJob> order = policy.queueOrder();
        this.queueOrder = (a, b) -> order.compare(a.view, b.view);
        for (Map.Entry<String, String> c : config.cohorts().entrySet()) {
            cohort(c.getKey());
        }
        for (FairShareConfig.QueueDef def : config.queues()) {
            addQueue(def);
        }
    }

    // ------------------------------------------------------------------ structure

    static final class Cohort {
        final String name;
        Cohort parent;
        String tree;
        final long[] subtree;
        final long[] usage;

        Cohort(String name, int r) {
            this.name = name;
            this.subtree = new long[r];
            this.usage = new long[r];
        }
    }

    static final class Q {
        final FairShareConfig.QueueDef def;
        final Cohort parent;
        final String tree;
        final boolean[] has;
        final long[] nominal;
        final long[] borrow;
        final long[] lend;
        final long[] guaranteed;
        final long[] usage;
        final double[] hist;
        long histAt = Long.MIN_VALUE;
        /** The queue's standing during the current cycle (scratch for the cycle's heap). */
        double keyShare;
        int keyClass;
        final int[] gpuFlavours;
        final TreeSet<Pend> ordered;
        final TreeMap<Shape, TreeSet<Pend>> buckets = new TreeMap<>();
        final Set<Charge> running = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        /** Running charges per priority (class, then job priority), so "any lower-priority run?" is O(log n). */
        final TreeMap<Long, Integer> runningByPriority = new TreeMap<>();
        /** Running charges oldest first, so the runs past the minimum run time are a head set. */
        final TreeSet<Charge> byStart = new TreeSet<>(BY_START);

        void run(Charge c) {
            running.add(c);
            byStart.add(c);
            runningByPriority.merge(priorityKey(c.classValue(), c.priority()), 1, Integer::sum);
        }

        void stop(Charge c) {
            if (running.remove(c)) {
                byStart.remove(c);
                runningByPriority.merge(priorityKey(c.classValue(), c.priority()), -1,
                        (a, b) -> a + b == 0 ? null : a + b);
            }
        }

        /** Whether a run of this queue has run at least until {@code cutoff}. */
        boolean hasRunSince(long cutoff) {
            return !byStart.isEmpty() && byStart.first().dispatchedMillis() <= cutoff;
        }

        /** The runs dispatched at or before {@code cutoff}. */
        Iterable<Charge> runningSince(long cutoff) {
            return byStart.headSet(new Charge("\uffff", Integer.MAX_VALUE, null, 0, 0, 0, 0, cutoff, null, 0, 0), true);
        }

        Q(FairShareConfig.QueueDef def, Cohort parent, List<String> resources, int gpuCount, Comparator<Pend> order) {
            int r = resources.size();
            this.def = def;
            this.parent = parent;
            this.tree = parent == null ? "queue:" + def.name() : parent.tree;
            this.has = new boolean[r];
            this.nominal = new long[r];
            this.borrow = new long[r];
            this.lend = new long[r];
            this.guaranteed = new long[r];
            this.usage = new long[r];
            this.hist = new double[r];
            this.ordered = new TreeSet<>(order);
            Arrays.fill(borrow, -1);
            Arrays.fill(lend, -1);
            List<Integer> gpu = new ArrayList<>();
            for (int i = 0; i < r; i++) {
                FairShareConfig.ResourceQuota rq = def.quotas().get(resources.get(i));
                if (rq == null) {
                    continue;
                }
                has[i] = true;
                nominal[i] = rq.nominal();
                borrow[i] = rq.borrowingLimit() == null ? -1 : rq.borrowingLimit();
                lend[i] = rq.lendingLimit() == null ? -1 : rq.lendingLimit();
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
    }

    static final Comparator<Charge> BY_START = Comparator.comparingLong(Charge::dispatchedMillis)
            .thenComparing(Charge::jobId).thenComparingInt(Charge::attempt);

    static long priorityKey(int classValue, int priority) {
        return ((long) classValue << 32) + ((long) priority - Integer.MIN_VALUE);
    }

    /** Request shape: pending jobs with the same GPU count and flavour candidates fit or not together. */
    record Shape(int gpus, int candidates) implements Comparable<Shape> {
        @Override
        public int compareTo(Shape o) {
            int c = Integer.compare(gpus, o.gpus);
            return c != 0 ? c : Integer.compare(candidates, o.candidates);
        }
    }

    static final class Pend {
        final String jobId;
        final Q q;
        final PendingJob view;
        final int[] candidates;
        final int gpus;
        final long cpu;
        final long mem;
        final Long timeLimitSeconds;
        final long submittedMillis;
        final Shape shape;

        Pend(String jobId, Q q, PendingJob view, int[] candidates, int gpus, long cpu, long mem, Long timeLimitSeconds,
             Shape shape) {
            this.jobId = jobId;
            this.q = q;
            this.view = view;
            this.candidates = candidates;
            this.gpus = gpus;
            this.cpu = cpu;
            this.mem = mem;
            this.timeLimitSeconds = timeLimitSeconds;
            this.submittedMillis = view.submittedAt().toEpochMilli();
            this.shape = shape;
        }
    }

    /** What one dispatched attempt holds: charged at JobDispatched, removed at QuotaReleased. */
    record Charge(String jobId, int attempt, Q q, int flavour, int gpus, long cpu, long mem, long dispatchedMillis,
                  Long timeLimitSeconds, int classValue, int priority) {
        long endMillis() {
            return timeLimitSeconds == null ? Long.MAX_VALUE : dispatchedMillis + timeLimitSeconds * 1000;
        }
    }

    /** A run's charge while its queue is gone: what it holds, by names, to be charged again when the queue is back. */
    record Orphan(String jobId, int attempt, String tenant, String queue, String flavour, int gpus, long cpu, long mem,
                  long dispatchedMillis, Long timeLimitSeconds, int classValue, int priority) {
    }

    /**
     * A quota reservation in one cohort tree, derived afresh every cycle: for a starving job, or for a job that
     * preempted others until their quota is back ({@code preemption} is then the sentence explaining it).
     */
    record Reservation(String tree, Pend job, int flavour, Long estimateMillis, String preemption) {
    }

    /** A run the queue asked placement to stop, until its quota is released or {@code expiresMillis}. */
    record Preempting(String jobId, int attempt, String preemptor, PreemptionReason reason, String message,
                      long expiresMillis) {
    }

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

    private Q addQueue(FairShareConfig.QueueDef def) {
        int r = resources.size();
        Cohort parent = def.cohort() == null ? null : cohort(def.cohort());
        Q q = new Q(def, parent, resources, cpu, queueOrder);
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

    // ------------------------------------------------------------------ resolution

    /** The queue a job of {@code tenant} asking for {@code requested} goes to, or null. */
    Q queueFor(String tenant, String requested) {
        String name = requested == null ? tenant : requested;
        Q q = queues.get(name);
        if (q == null && config.isImplicit() && name.equals(tenant)) {
            q = addQueue(config.implicitQueue(tenant));
        }
        return q != null && q.def.tenant().equals(tenant) ? q : null;
    }

    String queueNameOf(QueuedJob job) {
        Q q = queueFor(job.tenant(), job.spec().queue());
        return q == null ? null : q.name();
    }

    private int gpuResource(Q q, String model) {
        Integer i = model == null ? null : resIndex.get(model);
        if (i != null && i < cpu && q.has[i]) {
            return i;
        }
        return anyGpu >= 0 && q.has[anyGpu] ? anyGpu : -1;
    }

    private static TaskGroup firstGpuTask(JobSpec spec) {
        for (TaskGroup t : spec.tasks()) {
            if (t.quotaGpus() > 0) {
                return t;
            }
        }
        return null;
    }

    /** A schedulable entry, or the never-fits sentence. */
    private Object resolve(QueuedJob job) {
        JobSpec spec = job.spec();
        Q q = queueFor(job.tenant(), spec.queue());
        if (q == null) {
            return spec.queue() == null
                    ? "never fits: tenant " + job.tenant() + " has no default queue '" + job.tenant() + "'"
                    : "never fits: tenant " + job.tenant() + " has no queue '" + spec.queue() + "'";
        }
        String cls = spec.priorityClass() == null ? config.defaultPriorityClass() : spec.priorityClass();
        Integer classValue = config.priorityClasses().get(cls);
        if (classValue == null) {
            return "never fits: unknown priority class '" + cls + "' (classes: "
                    + String.join(", ", config.priorityClasses().keySet()) + ")";
        }
        long cpuTotal = 0;
        long memTotal = 0;
        for (TaskGroup t : spec.tasks()) {
            cpuTotal += (long) t.replicas() * t.cpuMillis();
            memTotal += t.replicas() * t.memoryMiB();
        }
        int gpus = job.gpus();
        int[] cands = new int[0];
        if (gpus > 0) {
            TaskGroup t = firstGpuTask(spec);
            List<String> models = t.gpuModel() != null ? List.of(t.gpuModel()) : t.gpuModels();
            List<Integer> c = new ArrayList<>();
            if (models.isEmpty()) {
                for (int f : q.gpuFlavours) {
                    c.add(f);
                }
            } else {
                for (String m : models) {
                    int f = gpuResource(q, m);
                    if (f >= 0 && !c.contains(f)) {
                        c.add(f);
                    }
                }
            }
            if (c.isEmpty()) {
                return "never fits: queue " + q.name() + " has no quota for GPU model(s) " + (models.isEmpty()
                        ? "(any)" : String.join(", ", models));
            }
            List<Integer> possible = c.stream().filter(f -> maxAvailable(q, f) >= gpus).toList();
            if (possible.isEmpty()) {
                int f = c.get(0);
                if (isImplicit(q, f)) {
                    return "never fits: job needs " + gpus + " GPUs, tenant " + q.def.tenant() + "'s quota is "
                            + q.nominal[f];
                }
                return "never fits: job needs " + gpus + " x " + resources.get(f) + ", queue " + q.name()
                        + " can get at most " + maxAvailable(q, f) + limitText(q, f);
            }
            cands = possible.stream().mapToInt(Integer::intValue).toArray();
        }
        if (q.has[cpu] && cpuTotal > maxAvailable(q, cpu)) {
            return "never fits: job needs " + cpuTotal + " cpu millicores, queue " + q.name() + " can get at most "
                    + maxAvailable(q, cpu) + limitText(q, cpu);
        }
        if (q.has[mem] && memTotal > maxAvailable(q, mem)) {
            return "never fits: job needs " + memTotal + " MiB memory, queue " + q.name() + " can get at most "
                    + maxAvailable(q, mem) + limitText(q, mem);
        }
        String key = Arrays.toString(cands);
        int candKey = candidateKeys.computeIfAbsent(key, k -> candidateKeys.size());
        PendingJob view = new PendingJob(job.jobId(), job.tenant(), q.name(), job.attempt(), gpus, job.submittedAt(),
                classValue, spec.priority());
        return new Pend(job.jobId(), q, view, cands, gpus, cpuTotal, memTotal, spec.timeLimitSeconds(),
                new Shape(gpus, candKey));
    }

    private String limitText(Q q, int r) {
        if (q.parent == null) {
            return " (nominal " + q.nominal[r] + ")";
        }
        return " (nominal " + q.nominal[r] + (q.borrow[r] >= 0 ? ", borrowing limit " + q.borrow[r] : "")
                + ", cohort " + rootName(q) + ")";
    }

    private boolean isImplicit(Q q, int r) {
        return config.isImplicit() && r == anyGpu && q.parent == null;
    }

    private static String rootName(Q q) {
        Cohort c = q.parent;
        while (c.parent != null) {
            c = c.parent;
        }
        return c.name;
    }

    // ------------------------------------------------------------------ ledger

    /** What {@code q} could still take of resource {@code r} now (Kueue's hierarchical "available"). */
    long available(Q q, int r) {
        if (!q.has[r]) {
            return UNTRACKED;
        }
        if (q.parent == null) {
            return q.nominal[r] - q.usage[r];
        }
        long local = Math.max(0, q.guaranteed[r] - q.usage[r]);
        Cohort root = q.parent;
        while (root.parent != null) {
            root = root.parent;
        }
        long fromParent = root.subtree[r] - root.usage[r];
        if (q.borrow[r] >= 0) {
            long stored = q.nominal[r] - q.guaranteed[r];
            long usedInParent = Math.max(0, q.usage[r] - q.guaranteed[r]);
            fromParent = Math.min(fromParent, stored - usedInParent + q.borrow[r]);
        }
        return local + Math.max(0, fromParent);
    }

    /** What {@code q} could take of {@code r} if nothing in its cohort tree were in use. */
    long maxAvailable(Q q, int r) {
        if (!q.has[r]) {
            return UNTRACKED;
        }
        if (q.parent == null) {
            return q.nominal[r];
        }
        Cohort root = q.parent;
        while (root.parent != null) {
            root = root.parent;
        }
        long fromParent = root.subtree[r];
        if (q.borrow[r] >= 0) {
            fromParent = Math.min(fromParent, q.nominal[r] - q.guaranteed[r] + q.borrow[r]);
        }
        return q.guaranteed[r] + fromParent;
    }

    private void addUsage(Q q, int r, long delta, boolean real) {
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
            preemptCheck.add(q);
            if (delta < 0) {
                dirty.add(q.tree);
            }
        }
    }

    private void accrue(Q q, long t) {
        if (halfLifeSeconds > 0 && q.histAt != Long.MIN_VALUE && t > q.histAt) {
            double decay = Math.pow(2, -(t - q.histAt) / 1000.0 / halfLifeSeconds);
            double gain = halfLifeSeconds / Math.log(2) * (1 - decay);
            for (int r = 0; r < q.hist.length; r++) {
                q.hist[r] = q.hist[r] * decay + q.usage[r] * gain;
            }
        }
        if (q.histAt == Long.MIN_VALUE || t > q.histAt) {
            q.histAt = t;
        }
    }

    /** The weighted dominant share of {@code q} at {@code t} (see docs/design/fair-share.md). */
    double weightedShare(Q q, long t) {
        long[] cap = treeNominal.get(q.tree);
        double decay = 1;
        double gain = 0;
        if (halfLifeSeconds > 0 && q.histAt != Long.MIN_VALUE && t > q.histAt) {
            decay = Math.pow(2, -(t - q.histAt) / 1000.0 / halfLifeSeconds);
            gain = halfLifeSeconds / Math.log(2) * (1 - decay);
        }
        double k = halfLifeSeconds > 0 ? Math.log(2) / halfLifeSeconds : 0;
        double dominant = 0;
        for (int r = 0; r < cap.length; r++) {
            if (!q.has[r] || cap[r] <= 0) {
                continue;
            }
            double history = q.hist[r] * decay + q.usage[r] * gain;
            dominant = Math.max(dominant, (q.usage[r] + k * history) / cap[r]);
        }
        return dominant / q.def.weight();
    }

    double fairShare(Q q) {
        double sum = 0;
        for (Q other : trees.get(q.tree)) {
            sum += other.def.weight();
        }
        return q.def.weight() / sum;
    }

    void charge(QueuedJob job, int attempt, JobSpec dispatched, int gpus, Instant at) {
        Q q = queueFor(job.tenant(), dispatched.queue());
        long t = at.toEpochMilli();
        TaskGroup g = firstGpuTask(dispatched);
        long cpuTotal = 0;
        long memTotal = 0;
        for (TaskGroup tg : dispatched.tasks()) {
            cpuTotal += (long) tg.replicas() * tg.cpuMillis();
            memTotal += tg.replicas() * tg.memoryMiB();
        }
        String cls = dispatched.priorityClass() == null ? config.defaultPriorityClass() : dispatched.priorityClass();
        int classValue = config.priorityClasses().getOrDefault(cls, 0);
        if (q == null) {
            // the queue is gone from the configuration (a restart replays a run dispatched before it was removed)
            String queue = dispatched.queue() == null ? job.tenant() : dispatched.queue();
            orphans.computeIfAbsent(job.jobId(), k -> new TreeMap<>()).put(attempt, new Orphan(job.jobId(), attempt,
                    job.tenant(), queue, gpus > 0 && g != null ? g.gpuModel() : null, gpus, cpuTotal, memTotal, t,
                    dispatched.timeLimitSeconds(), classValue, dispatched.priority()));
            return;
        }
        int flavour = gpus > 0 ? gpuResource(q, g == null ? null : g.gpuModel()) : NO_GPU;
        if (gpus > 0 && flavour < 0 && q.gpuFlavours.length > 0) {
            flavour = q.gpuFlavours[0];
        }
        Charge c = new Charge(job.jobId(), attempt, q, flavour, gpus, cpuTotal, memTotal, t,
                dispatched.timeLimitSeconds(), classValue, dispatched.priority());
        Charge old = charges.computeIfAbsent(job.jobId(), k -> new TreeMap<>()).put(attempt, c);
        if (old != null) {
            undo(old, t);
        }
        accrue(q, t);
        apply(c, 1, true);
        q.run(c);
    }

    void uncharge(String jobId, int attempt, Instant at) {
        Map<Integer, Orphan> orphaned = orphans.get(jobId);
        if (orphaned != null && orphaned.remove(attempt) != null && orphaned.isEmpty()) {
            orphans.remove(jobId);
        }
        Map<Integer, Charge> byAttempt = charges.get(jobId);
        Charge c = byAttempt == null ? null : byAttempt.remove(attempt);
        if (c == null) {
            return;
        }
        if (byAttempt.isEmpty()) {
            charges.remove(jobId);
        }
        Preempting p = preempting.get(jobId);
        if (p != null && p.attempt() == attempt) {
            preempting.remove(jobId);
        }
        undo(c, at.toEpochMilli());
    }

    /**
     * Takes over what {@code old} (the scheduler of the previous configuration) knew that facts alone do not hand
     * over: running charges, usage history and runs being preempted, matched by queue and resource name. Charges of
     * a queue that is gone are kept aside (orphans) until their run ends, and charged again if the queue comes back.
     */
    void adopt(Scheduler old) {
        for (Q oq : old.queues.values()) {
            Q nq = queueFor(oq.def.tenant(), oq.name());
            if (nq == null) {
                continue;
            }
            for (int r = 0; r < old.resources.size(); r++) {
                Integer nr = resIndex.get(old.resources.get(r));
                if (nr != null && nq.has[nr]) {
                    nq.hist[nr] = oq.hist[r];
                }
            }
            nq.histAt = oq.histAt;
        }
        for (Map.Entry<String, Map<Integer, Charge>> e : old.charges.entrySet()) {
            for (Charge c : e.getValue().values()) {
                adoptCharge(new Orphan(c.jobId(), c.attempt(), c.q().def.tenant(), c.q().name(),
                        c.flavour() >= 0 && c.gpus() > 0 ? old.resources.get(c.flavour()) : null, c.gpus(), c.cpu(),
                        c.mem(), c.dispatchedMillis(), c.timeLimitSeconds(), c.classValue(), c.priority()));
            }
        }
        for (Map<Integer, Orphan> byAttempt : old.orphans.values()) {
            byAttempt.values().forEach(this::adoptCharge);
        }
        preempting.putAll(old.preempting);
    }

    private void adoptCharge(Orphan o) {
        Q nq = queueFor(o.tenant(), o.queue());
        if (nq == null) {
            orphans.computeIfAbsent(o.jobId(), k -> new TreeMap<>()).put(o.attempt(), o);
            return;
        }
        int flavour = NO_GPU;
        if (o.gpus() > 0) {
            Integer nr = o.flavour() == null ? null : resIndex.get(o.flavour());
            flavour = nr != null && nr < cpu && nq.has[nr] ? nr
                    : anyGpu >= 0 && nq.has[anyGpu] ? anyGpu
                    : nq.gpuFlavours.length > 0 ? nq.gpuFlavours[0] : NO_GPU;
        }
        Charge n = new Charge(o.jobId(), o.attempt(), nq, flavour, o.gpus(), o.cpu(), o.mem(),
                o.dispatchedMillis(), o.timeLimitSeconds(), o.classValue(), o.priority());
        charges.computeIfAbsent(o.jobId(), k -> new TreeMap<>()).put(o.attempt(), n);
        apply(n, 1, true);
        nq.run(n);
    }

    /** A JobPreempted fact: the run is being stopped; its tree starts no other preemption until it is released. */
    void preempted(String jobId, int attempt, String preemptor, PreemptionReason reason, String message,
                   long atMillis, long graceMillis) {
        // placement releases at the end of the grace period; if that release never comes (the run had not been
        // granted yet, placement lost it), the preemption expires and may be decided again
        long expires = atMillis + graceMillis + Math.max(30_000, graceMillis);
        preempting.put(jobId, new Preempting(jobId, attempt, preemptor, reason, message, expires));
    }

    /** Why a run that placement released with reason PREEMPTED is queued again. */
    String preemptionText(String jobId, int attempt) {
        Preempting p = preempting.get(jobId);
        if (p == null || p.attempt() != attempt) {
            return "preempted";
        }
        return "preempted (" + p.reason() + (p.preemptor() == null ? "" : ") for job " + p.preemptor()) + ": "
                + p.message();
    }

    /** A tick: the next cycle looks for preemptions in every tree (minimum run times and grace periods end). */
    void timePassed() {
        timePassed = true;
    }

    private void undo(Charge c, long t) {
        accrue(c.q(), t);
        apply(c, -1, true);
        c.q().stop(c);
    }

    private void apply(Charge c, int sign, boolean real) {
        if (c.flavour() >= 0) {
            addUsage(c.q(), c.flavour(), sign * (long) c.gpus(), real);
        }
        addUsage(c.q(), cpu, sign * c.cpu(), real);
        addUsage(c.q(), mem, sign * c.mem(), real);
    }

    // ------------------------------------------------------------------ pending index

    /** Keeps the index in step with a job's state after a fact changed it ({@code after} null: gone). */
    void sync(QueuedJob before, QueuedJob after) {
        String id = before != null ? before.jobId() : after.jobId();
        if (before != null && before.parked()) {
            parked.remove(id);
        }
        if (after != null && after.parked()) {
            parked.add(id);
        }
        boolean shouldBe = after != null && after.status() == JobState.QUEUED
                && (!after.parked() || unparking.contains(id));
        boolean present = index.containsKey(id) || neverFits.containsKey(id);
        if (present && (!shouldBe || before == null || before.attempt() != after.attempt())) {
            remove(id);
            present = false;
        }
        if (shouldBe && !present) {
            add(after);
        }
    }

    private void add(QueuedJob job) {
        Object r = resolve(job);
        fresh.add(job.jobId());
        if (r instanceof String never) {
            neverFits.put(job.jobId(), never);
            return;
        }
        Pend p = (Pend) r;
        index.put(p.jobId, p);
        p.q.ordered.add(p);
        p.q.buckets.computeIfAbsent(p.shape, s -> new TreeSet<>(queueOrder)).add(p);
        dirtyQueues.add(p.q);
    }

    private void remove(String id) {
        neverFits.remove(id);
        Pend p = index.remove(id);
        if (p == null) {
            return;
        }
        p.q.ordered.remove(p);
        TreeSet<Pend> bucket = p.q.buckets.get(p.shape);
        bucket.remove(p);
        if (bucket.isEmpty()) {
            p.q.buckets.remove(p.shape);
        }
    }

    /** A capacity change: every parked job gets one dispatch cycle. */
    void unpark(List<QueuedJob> jobs) {
        for (QueuedJob job : jobs) {
            unparking.add(job.jobId());
            sync(job, job);
        }
    }

    // ------------------------------------------------------------------ the cycle

    /** Where a cycle's decisions go: the core turns them into facts (and replays them, which updates this index). */
    interface Sink {
        void dispatch(String jobId, String flavour);

        void waiting(String jobId, WaitReason reason, String message);

        void preempt(String jobId, int attempt, PreemptionReason reason, String preemptor, String message);
    }

    /**
     * One dispatch cycle over the cohort trees that changed (all of them when {@code all}): admit the best-standing
     * admissible job until none is left, then explain the jobs that need a (new) explanation.
     */
    void cycle(Instant now, boolean all, Sink sink) {
        long t = now.toEpochMilli();
        // starvation is checked in every tree on every cycle (a wait can run out while nothing else happens there);
        // a tree whose reservation changed is cycled like a changed one
        Map<String, Reservation> reservations = new HashMap<>();
        List<String> touched = new ArrayList<>();
        Map<String, List<Preempting>> stopping = stopping(t);
        for (Map.Entry<String, List<Q>> tree : trees.entrySet()) {
            Reservation r = reservation(tree.getKey(), t, stopping);
            if (r != null) {
                reservations.put(tree.getKey(), r);
            }
            String was = lastReserved.get(tree.getKey());
            String is = r == null ? null : r.job().jobId;
            if (all || dirty.contains(tree.getKey()) || !java.util.Objects.equals(was, is)) {
                touched.add(tree.getKey());
            }
        }
        // after every cycle nothing pending in a tree fits; only a tree whose availability grew (or whose
        // reservation changed) needs all its queues looked at, otherwise just the queues that gained jobs
        List<Q> active = new ArrayList<>();
        for (String tree : touched) {
            for (Q q : trees.get(tree)) {
                if (!q.ordered.isEmpty()) {
                    active.add(q);
                }
            }
        }
        Set<String> touchedSet = new java.util.HashSet<>(touched);
        for (Q q : dirtyQueues) {
            if (!touchedSet.contains(q.tree) && !q.ordered.isEmpty()) {
                active.add(q);
            }
        }
        // Queues are visited best-first by (highest class pending, weighted share): once a queue cannot beat the
        // best candidate found so far, no later one can, so an admission usually looks at a handful of queues. The
        // order is a heap popped lazily into a visited prefix, so a cycle does not pay for sorting every queue.
        for (Q q : active) {
            q.keyShare = weightedShare(q, t);
            q.keyClass = maxClass(q);
        }
        Comparator<Q> byStanding = (a, b) -> {
            int c = Integer.compare(b.keyClass, a.keyClass);
            if (c != 0) {
                return c;
            }
            c = Double.compare(a.keyShare, b.keyShare);
            return c != 0 ? c : a.name().compareTo(b.name());
        };
        java.util.PriorityQueue<Q> heap = new java.util.PriorityQueue<>(Math.max(1, active.size()), byStanding);
        heap.addAll(active);
        List<Q> visited = new ArrayList<>();
        Map<Q, Pend> cand = new IdentityHashMap<>();
        Set<Q> exhausted = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        Comparator<DispatchPolicy.Candidate> cross = policy.crossQueueOrder();
        Set<String> admitted = new TreeSet<>();
        while (true) {
            Pend best = null;
            DispatchPolicy.Candidate bestC = null;
            for (int i = 0; ; i++) {
                Q q;
                if (i < visited.size()) {
                    q = visited.get(i);
                } else if (!heap.isEmpty()) {
                    q = heap.poll();
                    visited.add(q);
                } else {
                    break;
                }
                if (bestC != null) {
                    int bc = bestC.job().classValue();
                    if (q.keyClass < bc || q.keyClass == bc && q.keyShare > bestC.weightedShare()) {
                        break; // neither this queue nor any after it can stand higher
                    }
                }
                if (exhausted.contains(q)) {
                    continue;
                }
                Reservation res = reservations.get(q.tree);
                Pend p = cand.get(q);
                // availability only shrinks within a cycle: a cached candidate that still fits is still the best
                if (p == null || fit(p, res, t) == NO_FIT) {
                    p = bestFit(q, res, t);
                    if (p == null) {
                        exhausted.add(q);
                        cand.remove(q);
                        continue;
                    }
                    cand.put(q, p);
                }
                DispatchPolicy.Candidate c = new DispatchPolicy.Candidate(p.view, q.keyShare);
                if (bestC == null || cross.compare(c, bestC) < 0) {
                    best = p;
                    bestC = c;
                }
            }
            if (best == null) {
                break;
            }
            Q q = best.q;
            int flavour = fit(best, reservations.get(q.tree), t);
            visited.remove(q); // its key changes: fewer pending jobs, a higher share; it goes back into the heap
            cand.remove(q);
            admitted.add(best.jobId);
            sink.dispatch(best.jobId, flavour >= 0 ? resources.get(flavour) : null);
            if (!q.ordered.isEmpty()) {
                q.keyShare = weightedShare(q, t);
                q.keyClass = maxClass(q);
                heap.add(q);
            }
        }
        Set<String> preempted = new TreeSet<>();
        if (config.preemption().enabled()) {
            boolean everywhere = timePassed || all;
            Map<String, List<Q>> changed = new TreeMap<>();
            if (!everywhere) {
                preemptCheck.addAll(dirtyQueues);
                for (Q q : preemptCheck) {
                    changed.computeIfAbsent(q.tree, k -> new ArrayList<>()).add(q);
                }
                changed.values().forEach(l -> l.sort(Comparator.comparing(Q::name)));
            }
            Set<String> trees = everywhere ? new TreeSet<>(this.trees.keySet()) : changed.keySet();
            for (String tree : trees) {
                if (!stopping.containsKey(tree)
                        && preemptIn(tree, everywhere ? this.trees.get(tree) : changed.get(tree), t, sink)) {
                    preempted.add(tree);
                    Reservation r = reservation(tree, t, stopping(t));
                    if (r == null) {
                        reservations.remove(tree);
                    } else {
                        reservations.put(tree, r);
                    }
                    if (!touchedSet.contains(tree)) {
                        touched.add(tree);
                    }
                }
            }
        }
        timePassed = false;
        Set<String> explain = new TreeSet<>(fresh);
        explain.addAll(unparking);
        if (all) {
            explain.addAll(index.keySet());
            explain.addAll(neverFits.keySet());
        }
        for (String tree : touched) {
            Reservation r = reservations.get(tree);
            String previous = r == null ? lastReserved.remove(tree) : lastReserved.put(tree, r.job().jobId);
            if (previous != null) {
                explain.add(previous);
            }
            if (r != null) {
                explain.add(r.job().jobId);
            }
        }
        for (String id : explain) {
            if (admitted.contains(id)) {
                continue;
            }
            String never = neverFits.get(id);
            Pend p = index.get(id);
            if (never != null) {
                sink.waiting(id, WaitReason.NEVER_FITS, never);
            } else if (p != null) {
                sink.waiting(id, WaitReason.QUOTA, explain(p, reservations.get(p.q.tree), t));
            }
        }
        fresh.clear();
        dirty.clear();
        dirtyQueues.clear();
        unparking.clear();
        preemptCheck.clear();
        if (!preempted.isEmpty()) {
            // the preemptor's reservation replaced what the admissions above were held back by (a starvation
            // reservation without an estimate, say): admit again in those trees; they are stopping now, so this
            // pass preempts nothing and does not recurse
            dirty.addAll(preempted);
            cycle(now, false, sink);
        }
    }

    private static int maxClass(Q q) {
        return q.ordered.first().view.classValue();
    }

    // ------------------------------------------------------------------ preemption

    /** The runs still being preempted (released nor expired), by cohort tree; forgets expired ones. */
    private Map<String, List<Preempting>> stopping(long t) {
        Map<String, List<Preempting>> out = new HashMap<>();
        var it = preempting.values().iterator();
        while (it.hasNext()) {
            Preempting p = it.next();
            Map<Integer, Charge> byAttempt = charges.get(p.jobId());
            Charge c = byAttempt == null ? null : byAttempt.get(p.attempt());
            if (t >= p.expiresMillis()) {
                it.remove();
            } else if (c != null) {
                out.computeIfAbsent(c.q().tree, k -> new ArrayList<>()).add(p);
            }
        }
        return out;
    }

    /** A running attempt that may be preempted for {@code p}, with why, and the work it would lose. */
    private record Victim(Charge charge, PreemptionReason reason, long lostWork) {
    }

    /**
     * Looks at the head of every queue of the tree that quota keeps out, best standing first, and preempts for the
     * first one that a set of allowed victims would let in. At most one preemptor per tree at a time: its victims'
     * quota goes to it (a reservation) and nothing else is preempted there until they are released.
     */
    private boolean preemptIn(String tree, List<Q> looked, long t, Sink sink) {
        FairShareConfig.Preemption rules = config.preemption();
        long cutoff = t - rules.minRunTime().toMillis();
        // what reclaim could give back at most: the borrowed amounts of queues with a run old enough to preempt
        // (only worth the walk over the tree when some blocked head stays within its nominal quota)
        long[] reclaimable = null;
        boolean anyWithinNominal = false;
        for (Q q : looked) {
            anyWithinNominal |= !q.ordered.isEmpty() && quotaFit(q.ordered.first()) == NO_FIT
                    && withinNominal(q.ordered.first());
        }
        if (rules.reclaim() != FairShareConfig.Reclaim.NEVER && anyWithinNominal) {
            for (Q q : trees.get(tree)) {
                if (q.hasRunSince(cutoff)) {
                    for (int r = 0; r < q.usage.length; r++) {
                        if (q.has[r] && q.usage[r] > q.nominal[r]) {
                            reclaimable = reclaimable == null ? new long[q.usage.length] : reclaimable;
                            reclaimable[r] += q.usage[r] - q.nominal[r];
                        }
                    }
                }
            }
        }
        List<Pend> heads = new ArrayList<>();
        for (Q q : looked) {
            if (!q.ordered.isEmpty() && quotaFit(q.ordered.first()) == NO_FIT
                    && promising(q.ordered.first(), reclaimable, cutoff)) {
                heads.add(q.ordered.first());
            }
        }
        if (heads.isEmpty()) {
            return false;
        }
        Map<Pend, Double> share = new IdentityHashMap<>();
        heads.forEach(h -> share.put(h, weightedShare(h.q, t)));
        Comparator<DispatchPolicy.Candidate> cross = policy.crossQueueOrder();
        heads.sort((a, b) -> cross.compare(new DispatchPolicy.Candidate(a.view, share.get(a)),
                new DispatchPolicy.Candidate(b.view, share.get(b))));
        for (Pend head : heads) {
            List<Victim> victims = victims(head, t);
            if (victims.isEmpty()) {
                continue;
            }
            for (Victim v : victims) {
                sink.preempt(v.charge().jobId(), v.charge().attempt(), v.reason(), head.jobId,
                        sentence(v, head));
            }
            return true;
        }
        return false;
    }

    /**
     * Cheap necessary conditions for a preemption in favour of {@code p}: a lower-priority run of its own queue old
     * enough, or enough borrowed quota with old enough runs to reclaim what it lacks, or fair-share preemption on.
     */
    private boolean promising(Pend p, long[] reclaimable, long cutoff) {
        FairShareConfig.Preemption policy = config.preemption();
        if (policy.overFairShare()) {
            return true;
        }
        if (policy.withinQueue() && p.q.hasRunSince(cutoff) && !p.q.runningByPriority.isEmpty()
                && p.q.runningByPriority.firstKey() < priorityKey(p.view.classValue(), p.view.priority())) {
            return true;
        }
        if (reclaimable == null || !withinNominal(p)) {
            return false;
        }
        if (p.gpus > 0 && gpuFlavour(p) == NO_FIT) {
            boolean any = false;
            for (int f : p.candidates) {
                any |= reclaimable[f] >= p.gpus - available(p.q, f);
            }
            if (!any) {
                return false;
            }
        }
        return (p.cpu <= available(p.q, cpu) || reclaimable[cpu] >= p.cpu - available(p.q, cpu))
                && (p.mem <= available(p.q, mem) || reclaimable[mem] >= p.mem - available(p.q, mem));
    }

    /**
     * The cheapest set of runs whose quota lets {@code p} in: candidates by least work lost (GPU-seconds since the
     * run's last checkpoint, or since it started when it saved none), then lowest priority, then newest; taken until {@code p} fits, then any that turned out not to
     * be needed are given back. Empty when no allowed set is enough (preempting then would gain nothing).
     */
    private List<Victim> victims(Pend p, long t) {
        FairShareConfig.Preemption policy = config.preemption();
        long minRun = policy.minRunTime().toMillis();
        boolean gpuShort = p.gpus > 0 && gpuFlavour(p) == NO_FIT;
        boolean cpuShort = p.cpu > available(p.q, cpu);
        boolean memShort = p.mem > available(p.q, mem);
        boolean withinNominal = withinNominal(p);
        // cheap necessary conditions first: most blocked heads have no possible victim at all
        boolean byPriority = policy.withinQueue() && !p.q.runningByPriority.isEmpty()
                && p.q.runningByPriority.firstKey() < priorityKey(p.view.classValue(), p.view.priority());
        boolean byReclaim = policy.reclaim() != FairShareConfig.Reclaim.NEVER && withinNominal;
        if (!byPriority && !byReclaim && !policy.overFairShare()) {
            return List.of();
        }
        double preemptorShare = policy.overFairShare() ? shareWith(p, t) : 0;
        List<Victim> candidates = new ArrayList<>();
        for (Q q : trees.get(p.q.tree)) {
            if (q == p.q ? !byPriority : !policy.overFairShare() && !(byReclaim && borrowsAnything(q))) {
                continue;
            }
            for (Charge c : q.runningSince(t - minRun)) {
                if (preempting.containsKey(c.jobId()) && preempting.get(c.jobId()).attempt() == c.attempt()) {
                    continue;
                }
                boolean helps = gpuShort && c.gpus() > 0 && contains(p.candidates, c.flavour())
                        || cpuShort && c.cpu() > 0 || memShort && c.mem() > 0;
                if (!helps) {
                    continue;
                }
                boolean lower = c.classValue() < p.view.classValue()
                        || c.classValue() == p.view.classValue() && c.priority() < p.view.priority();
                PreemptionReason reason = null;
                if (q == p.q) {
                    reason = policy.withinQueue() && lower ? PreemptionReason.PRIORITY : null;
                } else if (policy.reclaim() != FairShareConfig.Reclaim.NEVER && withinNominal && borrowing(q, c)
                        && (policy.reclaim() == FairShareConfig.Reclaim.ANY || lower)) {
                    reason = PreemptionReason.RECLAIM;
                } else if (policy.overFairShare() && weightedShare(q, t) > preemptorShare) {
                    reason = PreemptionReason.FAIR_SHARE;
                }
                if (reason != null) {
                    long since = Math.max(c.dispatchedMillis(), checkpoints.lastSavedMillis(c.jobId(), c.attempt()));
                    long lost = Math.max(0, t - since) * Math.max(1, c.gpus());
                    candidates.add(new Victim(c, reason, lost));
                }
            }
        }
        if (candidates.isEmpty()) {
            return List.of();
        }
        candidates.sort(Comparator.comparingLong(Victim::lostWork)
                .thenComparingInt(v -> v.charge().classValue())
                .thenComparingInt(v -> v.charge().priority())
                .thenComparing(Comparator.comparingLong((Victim v) -> v.charge().dispatchedMillis()).reversed())
                .thenComparing(v -> v.charge().jobId()));
        List<Victim> chosen = new ArrayList<>();
        boolean fits = false;
        for (Victim v : candidates) {
            Charge c = v.charge();
            // a queue stops being a reclaim or fair-share victim once it is no longer above its line
            if (v.reason() == PreemptionReason.RECLAIM && !borrowing(c.q(), c)) {
                continue;
            }
            if (v.reason() == PreemptionReason.FAIR_SHARE && !staysAbove(c, preemptorShare, t)) {
                continue;
            }
            apply(c, -1, false);
            chosen.add(v);
            if (quotaFit(p) != NO_FIT) {
                fits = true;
                break;
            }
        }
        if (fits) {
            // give back, newest choice first, every victim p does not need after all
            for (int i = chosen.size() - 2; i >= 0; i--) {
                Charge c = chosen.get(i).charge();
                apply(c, 1, false);
                if (quotaFit(p) != NO_FIT) {
                    chosen.remove(i);
                } else {
                    apply(c, -1, false);
                }
            }
        }
        for (Victim v : chosen) {
            apply(v.charge(), 1, false);
        }
        return fits ? chosen : List.of();
    }

    private static boolean contains(int[] flavours, int f) {
        for (int x : flavours) {
            if (x == f) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code p} would stay within its queue's nominal quota on some candidate flavour, CPU and memory. */
    private boolean withinNominal(Pend p) {
        if (p.q.has[cpu] && p.q.usage[cpu] + p.cpu > p.q.nominal[cpu]
                || p.q.has[mem] && p.q.usage[mem] + p.mem > p.q.nominal[mem]) {
            return false;
        }
        if (p.gpus == 0) {
            return true;
        }
        for (int f : p.candidates) {
            if (p.q.usage[f] + p.gpus <= p.q.nominal[f]) {
                return true;
            }
        }
        return false;
    }

    /** Whether the run's queue uses more than its nominal quota of something the run holds. */
    private boolean borrowsAnything(Q q) {
        for (int r = 0; r < q.usage.length; r++) {
            if (q.has[r] && q.usage[r] > q.nominal[r]) {
                return true;
            }
        }
        return false;
    }

    private boolean borrowing(Q q, Charge c) {
        return c.flavour() >= 0 && c.gpus() > 0 && q.usage[c.flavour()] > q.nominal[c.flavour()]
                || c.cpu() > 0 && q.has[cpu] && q.usage[cpu] > q.nominal[cpu]
                || c.mem() > 0 && q.has[mem] && q.usage[mem] > q.nominal[mem];
    }

    /** The preemptor's queue's weighted share if it were admitted. */
    private double shareWith(Pend p, long t) {
        int f = p.candidates.length > 0 ? p.candidates[0] : NO_GPU;
        Charge tentative = new Charge(p.jobId, 0, p.q, f, p.gpus, p.cpu, p.mem, t, null, 0, 0);
        apply(tentative, 1, false);
        double s = weightedShare(p.q, t);
        apply(tentative, -1, false);
        return s;
    }

    /** Whether the run's queue still stands above the preemptor's resulting share once the run is gone. */
    private boolean staysAbove(Charge c, double preemptorShare, long t) {
        apply(c, -1, false);
        double s = weightedShare(c.q(), t);
        apply(c, 1, false);
        return s >= preemptorShare;
    }

    private String sentence(Victim v, Pend p) {
        Charge c = v.charge();
        String what = c.gpus() > 0 && c.flavour() >= 0 ? c.gpus() + " x " + resources.get(c.flavour())
                : c.cpu() + " cpu millicores";
        return switch (v.reason()) {
            case RECLAIM -> "queue " + p.q.name() + " reclaims " + what + " of its nominal quota lent to queue "
                    + c.q().name() + " (for job " + p.jobId + ")";
            case PRIORITY -> "job " + p.jobId + " of higher priority in queue " + p.q.name() + " needs " + what;
            case FAIR_SHARE -> "queue " + c.q().name() + " is above its fair share; queue " + p.q.name()
                    + " needs " + what + " for job " + p.jobId;
        };
    }

    /** The best-standing job of {@code q} that can be admitted now, or null. */
    private Pend bestFit(Q q, Reservation res, long t) {
        long[] avail = scratch;
        long maxGpus = 0;
        for (int f : q.gpuFlavours) {
            avail[f] = available(q, f);
            maxGpus = Math.max(maxGpus, avail[f]);
        }
        Pend best = null;
        for (Map.Entry<Shape, TreeSet<Pend>> bucket : q.buckets.entrySet()) {
            int gpus = bucket.getKey().gpus();
            if (gpus > maxGpus) {
                break;
            }
            TreeSet<Pend> jobs = bucket.getValue();
            Pend head = jobs.first();
            if (best != null && queueOrder.compare(head, best) > 0) {
                continue; // the whole shape stands lower than the best so far
            }
            if (gpus > 0 && !anyRoom(head.candidates, avail, gpus)) {
                continue; // every job of the shape needs the same GPUs
            }
            int scanned = 0;
            for (Pend p : jobs) {
                if (best != null && queueOrder.compare(p, best) > 0) {
                    break; // the rest of the shape stands lower still
                }
                if (fit(p, res, t) != NO_FIT) {
                    best = p;
                    break;
                }
                if (++scanned >= SHAPE_DEPTH) {
                    break;
                }
            }
        }
        return best;
    }

    /** Per-flavour availability of the queue bestFit is looking at (one thread owns a core). */
    private final long[] scratch;

    private static boolean anyRoom(int[] candidates, long[] avail, int gpus) {
        for (int f : candidates) {
            if (avail[f] >= gpus) {
                return true;
            }
        }
        return false;
    }

    /** The first candidate flavour with room for the job's GPUs, NO_GPU if it needs none, else NO_FIT. */
    private int gpuFlavour(Pend p) {
        if (p.gpus == 0) {
            return NO_GPU;
        }
        for (int f : p.candidates) {
            if (p.gpus <= available(p.q, f)) {
                return f;
            }
        }
        return NO_FIT;
    }

    /** The flavour the job would be admitted on now, NO_GPU if it needs no GPUs, NO_FIT if it cannot be. */
    int fit(Pend p, Reservation res, long t) {
        int f = quotaFit(p);
        if (f == NO_FIT || res == null || res.job() == p || !res.tree().equals(p.q.tree)) {
            return f;
        }
        return backfillAllowed(p, f, res, t) ? f : NO_FIT;
    }

    private int quotaFit(Pend p) {
        int f = gpuFlavour(p);
        if (f == NO_FIT || p.cpu > available(p.q, cpu) || p.mem > available(p.q, mem)) {
            return NO_FIT;
        }
        return f;
    }

    /**
     * Whether admitting {@code p} on flavour {@code f} leaves the reserved job's quota alone, or {@code p} ends (by
     * its time limit) before the reserved job is expected to start.
     */
    private boolean backfillAllowed(Pend p, int f, Reservation res, long t) {
        long[] before = reservedAvailability(res);
        Charge tentative = new Charge(p.jobId, 0, p.q, f, p.gpus, p.cpu, p.mem, t, p.timeLimitSeconds, 0, 0);
        apply(tentative, 1, false);
        long[] after = reservedAvailability(res);
        apply(tentative, -1, false);
        boolean touches = false;
        for (int i = 0; i < before.length; i++) {
            touches |= after[i] < before[i];
        }
        if (!touches) {
            return true;
        }
        return p.timeLimitSeconds != null && res.estimateMillis() != null
                && t + p.timeLimitSeconds * 1000 <= res.estimateMillis();
    }

    private long[] reservedAvailability(Reservation res) {
        Pend r = res.job();
        return new long[] {
                res.flavour() >= 0 ? available(r.q, res.flavour()) : 0,
                r.cpu > 0 ? available(r.q, cpu) : 0,
                r.mem > 0 ? available(r.q, mem) : 0};
    }

    /**
     * The tree's reservation: for the job that preempted runs of the tree while they stop, else for the
     * highest-standing job that waited at least the starvation wait and does not fit now.
     */
    private Reservation reservation(String tree, long t, Map<String, List<Preempting>> stopping) {
        List<Preempting> inTree = stopping.get(tree);
        if (inTree != null) {
            for (Preempting p : inTree) {
                Pend preemptor = p.preemptor() == null ? null : index.get(p.preemptor());
                if (preemptor != null && preemptor.q.tree.equals(tree)) {
                    long until = inTree.stream().mapToLong(Preempting::expiresMillis).max().orElse(t);
                    List<String> victims = inTree.stream().map(Preempting::jobId).toList();
                    int flavour = preemptor.candidates.length > 0 ? preemptor.candidates[0] : NO_GPU;
                    return new Reservation(tree, preemptor, flavour, until, "preempting: waiting for "
                            + (victims.size() == 1 ? "job " : victims.size() + " jobs ") + String.join(", ", victims)
                            + " to stop (" + p.reason() + ")");
                }
            }
        }
        return starvation(tree, t);
    }

    /** The highest-standing job of the tree that waited at least the starvation wait and does not fit now. */
    private Reservation starvation(String tree, long t) {
        Pend best = null;
        DispatchPolicy.Candidate bestC = null;
        for (Q q : trees.get(tree)) {
            if (q.ordered.isEmpty()) {
                continue;
            }
            Pend head = q.ordered.first();
            if (t - head.submittedMillis < starvationMillis || quotaFit(head) != NO_FIT) {
                continue;
            }
            DispatchPolicy.Candidate c = new DispatchPolicy.Candidate(head.view, weightedShare(q, t));
            if (bestC == null || policy.crossQueueOrder().compare(c, bestC) < 0) {
                best = head;
                bestC = c;
            }
        }
        if (best == null) {
            return null;
        }
        int flavour = best.candidates.length > 0 ? best.candidates[0] : NO_GPU;
        return new Reservation(tree, best, flavour, estimate(best, flavour), null);
    }

    /**
     * When enough running jobs of the tree will have ended (by their time limits) for the reserved job to fit; null
     * when that cannot be known (a job it would wait for has no time limit).
     */
    private Long estimate(Pend r, int flavour) {
        int resource = flavour >= 0 ? flavour : r.cpu > 0 ? cpu : mem;
        long need = (flavour >= 0 ? r.gpus : resource == cpu ? r.cpu : r.mem) - available(r.q, resource);
        if (need <= 0) {
            return null;
        }
        List<Charge> holding = new ArrayList<>();
        for (Q q : trees.get(r.q.tree)) {
            for (Charge c : q.running) {
                long amount = amount(c, resource);
                if (amount > 0) {
                    holding.add(c);
                }
            }
        }
        holding.sort(Comparator.comparingLong(Charge::endMillis).thenComparingLong(c -> -amount(c, resource)));
        long freed = 0;
        for (Charge c : holding) {
            freed += amount(c, resource);
            if (freed >= need) {
                return c.endMillis() == Long.MAX_VALUE ? null : c.endMillis();
            }
        }
        return null;
    }

    private long amount(Charge c, int resource) {
        return resource == cpu ? c.cpu() : resource == mem ? c.mem() : c.flavour() == resource ? c.gpus() : 0;
    }

    // ------------------------------------------------------------------ explanations

    private String explain(Pend p, Reservation res, long t) {
        if (res != null && res.job() == p && res.preemption() != null) {
            return res.preemption();
        }
        if (quotaFit(p) != NO_FIT) {
            if (res != null && res.job() != p) {
                return "waiting for quota: the free quota is reserved for " + (res.preemption() != null
                        ? "job " + res.job().jobId + ", which preempted runs to get it" : "starving job "
                        + res.job().jobId + estimateText(res, t)) + "; only jobs whose time limit ends before then "
                        + "may use it";
            }
            return "waiting for its turn in queue " + p.q.name();
        }
        int r;
        long need;
        if (p.gpus > 0 && gpuFlavour(p) == NO_FIT) {
            r = p.candidates[0];
            need = p.gpus;
        } else if (p.cpu > available(p.q, cpu)) {
            r = cpu;
            need = p.cpu;
        } else {
            r = mem;
            need = p.mem;
        }
        String why = describe(p.q, r, need);
        if (res != null && res.job() == p) {
            return "reserved: " + why + estimateText(res, t);
        }
        return why;
    }

    private String estimateText(Reservation res, long t) {
        if (res.estimateMillis() == null) {
            return " (no estimate: a running job it waits for has no time limit)";
        }
        long minutes = Math.max(0, (res.estimateMillis() - t + 59_999) / 60_000);
        return " (est. " + minutes + " min)";
    }

    private String describe(Q q, int r, long need) {
        String res = resources.get(r);
        if (isImplicit(q, r)) {
            return "waiting for quota: tenant " + q.def.tenant() + " has " + q.usage[r] + " of " + q.nominal[r]
                    + " GPUs reserved, job needs " + need;
        }
        if (q.parent == null) {
            return "waiting for quota: queue " + q.name() + " uses " + q.usage[r] + " of " + q.nominal[r] + " " + res
                    + ", job needs " + need;
        }
        if (q.borrow[r] >= 0 && q.usage[r] + need > q.nominal[r] + q.borrow[r]) {
            return "waiting for quota: queue " + q.name() + " uses " + q.usage[r] + " " + res + " of nominal "
                    + q.nominal[r] + " + borrowing limit " + q.borrow[r] + ", job needs " + need;
        }
        StringBuilder s = new StringBuilder("waiting for quota: cohort ").append(rootName(q)).append(" needs ")
                .append(need).append(" x ").append(res).append(", ").append(available(q, r)).append(" free");
        if (q.usage[r] < q.nominal[r]) {
            List<String> borrowers = new ArrayList<>();
            for (Q other : trees.get(q.tree)) {
                if (other != q && other.usage[r] > other.nominal[r]) {
                    borrowers.add(other.name());
                }
            }
            if (!borrowers.isEmpty()) {
                s.append(", nominal ").append(q.nominal[r]).append(" lent to ").append(String.join(", ", borrowers));
            }
        }
        return s.toString();
    }

    // ------------------------------------------------------------------ views

    List<QueueView> views(Instant now, Map<String, int[]> counts) {
        long t = now.toEpochMilli();
        List<QueueView> out = new ArrayList<>();
        for (Q q : queues.values()) {
            List<QueueView.FlavourView> fl = new ArrayList<>();
            for (int r = 0; r < resources.size(); r++) {
                if (!q.has[r]) {
                    continue;
                }
                fl.add(new QueueView.FlavourView(resources.get(r), q.nominal[r], q.usage[r],
                        Math.max(0, q.usage[r] - q.nominal[r]), lent(q, r),
                        q.parent == null ? null : q.borrow[r] < 0 ? null : q.borrow[r],
                        q.lend[r] < 0 ? null : q.lend[r]));
            }
            int[] c = counts.getOrDefault(q.name(), new int[3]);
            out.add(new QueueView(q.name(), q.def.tenant(), q.def.cohort(), fl, c[0], c[1], c[2],
                    weightedShare(q, t), fairShare(q)));
        }
        return out;
    }

    private long lent(Q q, int r) {
        if (q.parent == null) {
            return 0;
        }
        long borrowed = 0;
        long idle = 0;
        for (Q other : trees.get(q.tree)) {
            if (!other.has[r]) {
                continue;
            }
            borrowed += Math.max(0, other.usage[r] - other.nominal[r]);
            idle += lendableIdle(other, r);
        }
        long mine = lendableIdle(q, r);
        return idle == 0 ? 0 : Math.min(mine, borrowed * mine / idle);
    }

    private static long lendableIdle(Q q, int r) {
        long idle = Math.max(0, q.nominal[r] - q.usage[r]);
        return q.lend[r] < 0 ? idle : Math.min(idle, q.lend[r]);
    }

    /** Usage per queue and resource, for state comparison. */
    Map<String, List<Long>> usage() {
        Map<String, List<Long>> u = new TreeMap<>();
        for (Q q : queues.values()) {
            List<Long> l = new ArrayList<>();
            for (long v : q.usage) {
                l.add(v);
            }
            u.put(q.name(), l);
        }
        return u;
    }

    PendingJob view(QueuedJob job) {
        Object r = resolve(job);
        if (r instanceof Pend p) {
            return p.view;
        }
        Integer cls = config.priorityClasses().get(job.spec().priorityClass() == null
                ? config.defaultPriorityClass() : job.spec().priorityClass());
        return new PendingJob(job.jobId(), job.tenant(), queueNameOf(job), job.attempt(), job.gpus(),
                job.submittedAt(), cls == null ? Integer.MIN_VALUE : cls, job.spec().priority());
    }
}
