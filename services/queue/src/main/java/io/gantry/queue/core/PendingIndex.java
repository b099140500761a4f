package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The pending jobs the next cycles decide on: each schedulable one filed under its queue, in queue order and by
 * {@link RequestShape} (so a cycle looks at the head of a shape, not at every job); the ones that can never be
 * admitted under this configuration with their sentence; the parked ones. Kept in step with the jobs' states by
 * {@link #sync}, and remembers what changed since the last cycle.
 */
final class PendingIndex {
    private final QuotaTree tree;
    private final FairShareConfig config;
    private final Explainer explainer;
    private final Comparator<PendingJobEntry> queueOrder;
    private final Map<String, Integer> candidateKeys = new HashMap<>();

    /** Schedulable pending jobs (in a queue's buckets). */
    final Map<String, PendingJobEntry> schedulable = new HashMap<>();
    /** Pending jobs that can never be admitted under this configuration, with the sentence saying why. */
    final Map<String, String> neverFits = new TreeMap<>();
    final Set<String> parked = new TreeSet<>();
    /** Parked jobs a capacity change offers to placement once more (in the index until the next cycle). */
    final Set<String> unparking = new TreeSet<>();
    /** Jobs filed since the last cycle: they are explained in the next one. */
    final Set<String> fresh = new TreeSet<>();
    /** Queues that gained pending jobs since the last cycle: only they can have news in an unchanged tree. */
    final Set<ClusterQueue> gainedJobs = new LinkedHashSet<>();
    /** Jobs above the first service level by when they are promoted to it (attained-service queues). */
    private final TreeMap<Long, Set<String>> promotions = new TreeMap<>();
    /** The time of the last cycle: a job queued at least its queue's promoteAfter before it stands at level 0. */
    private long lastCycleMillis = Long.MIN_VALUE;

    PendingIndex(QuotaTree tree, FairShareConfig config, Explainer explainer, Comparator<PendingJobEntry> queueOrder) {
        this.tree = tree;
        this.config = config;
        this.explainer = explainer;
        this.queueOrder = queueOrder;
    }

    /** The schedulable entry of a job, or null. */
    PendingJobEntry get(String jobId) {
        return schedulable.get(jobId);
    }

    /** Forgets what changed since the last cycle (the cycle is over). */
    void cycled() {
        fresh.clear();
        gainedJobs.clear();
        unparking.clear();
    }

    /**
     * A cycle at {@code t} begins: the jobs that have waited their queue's promoteAfter stand at the first service
     * level from now on (filed again, so the cycle looks at them).
     */
    void promote(long t) {
        lastCycleMillis = Math.max(lastCycleMillis, t);
        while (!promotions.isEmpty() && promotions.firstKey() <= t) {
            for (String id : promotions.pollFirstEntry().getValue()) {
                PendingJobEntry p = schedulable.get(id);
                if (p != null && p.view().level() > 0) {
                    remove(id);
                    add(p.job());
                }
            }
        }
    }

    /** The service level {@code job} stands at in {@code q} now (see {@link #promote}). */
    private int level(ClusterQueue q, QueuedJob job) {
        int level = q.level(job.attained());
        if (level == 0 || q.promoteAfterMillis < 0) {
            return level;
        }
        long due = job.queuedAt().toEpochMilli() + q.promoteAfterMillis;
        return due <= lastCycleMillis ? 0 : level;
    }

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
        boolean present = schedulable.containsKey(id) || neverFits.containsKey(id);
        if (present && (!shouldBe || before == null || before.attempt() != after.attempt()
                || before.attained() != after.attained())) {
            remove(id);
            present = false;
        }
        if (shouldBe && !present) {
            add(after);
        }
    }

    /** A capacity change: every one of these parked jobs gets one dispatch cycle. */
    void unpark(List<QueuedJob> jobs) {
        for (QueuedJob job : jobs) {
            unparking.add(job.jobId());
            sync(job, job);
        }
    }

    /** A job woken by a capacity change that is not offered after all: parked as it was, out of the index. */
    void repark(String jobId) {
        unparking.remove(jobId);
        fresh.remove(jobId);
        remove(jobId);
    }

    private void add(QueuedJob job) {
        Admissibility a = resolve(job);
        fresh.add(job.jobId());
        if (a instanceof Admissibility.NeverFits never) {
            neverFits.put(job.jobId(), never.sentence());
            return;
        }
        PendingJobEntry p = ((Admissibility.Schedulable) a).entry();
        schedulable.put(p.jobId(), p);
        if (p.view().level() > 0 && p.queue().promoteAfterMillis >= 0) {
            promotions.computeIfAbsent(job.queuedAt().toEpochMilli() + p.queue().promoteAfterMillis,
                    k -> new TreeSet<>()).add(p.jobId());
        }
        ClusterQueue q = p.queue();
        q.pendingInOrder.add(p);
        q.pendingByShape.computeIfAbsent(p.shape(), s -> new TreeSet<>(queueOrder)).add(p);
        gainedJobs.add(q);
    }

    private void remove(String id) {
        neverFits.remove(id);
        PendingJobEntry p = schedulable.remove(id);
        if (p == null) {
            return;
        }
        ClusterQueue q = p.queue();
        q.pendingInOrder.remove(p);
        TreeSet<PendingJobEntry> bucket = q.pendingByShape.get(p.shape());
        bucket.remove(p);
        if (bucket.isEmpty()) {
            q.pendingByShape.remove(p.shape());
        }
    }

    /** Whether a job can ever be admitted under this configuration: its entry, or why not. */
    sealed interface Admissibility {
        record Schedulable(PendingJobEntry entry) implements Admissibility {
        }

        record NeverFits(String sentence) implements Admissibility {
        }
    }

    private Admissibility resolve(QueuedJob job) {
        JobSpec spec = job.spec();
        ClusterQueue q = tree.queueFor(job.tenant(), spec.queue());
        if (q == null) {
            return new Admissibility.NeverFits(explainer.noQueue(job.tenant(), spec.queue()));
        }
        String cls = spec.priorityClass() == null ? config.defaultPriorityClass() : spec.priorityClass();
        Integer classValue = config.priorityClasses().get(cls);
        if (classValue == null) {
            return new Admissibility.NeverFits(explainer.unknownClass(cls));
        }
        ResourceDemand demand = ResourceDemand.of(spec, job.gpuMilli());
        long gpuMilli = demand.gpuMilli();
        int[] cands = new int[0];
        if (gpuMilli > 0) {
            TaskGroup t = ResourceDemand.firstGpuTask(spec);
            List<String> models = t.gpuModel() != null ? List.of(t.gpuModel()) : t.gpuModels();
            List<Integer> c = new ArrayList<>();
            if (models.isEmpty()) {
                for (int f : q.gpuFlavours) {
                    c.add(f);
                }
            } else {
                for (String m : models) {
                    int f = tree.gpuResource(q, m);
                    if (f >= 0 && !c.contains(f)) {
                        c.add(f);
                    }
                }
            }
            if (c.isEmpty()) {
                return new Admissibility.NeverFits(explainer.noFlavourQuota(q, models));
            }
            if (spec.pool() != null) {
                // a job that names a pool is charged only on that pool's flavours
                List<String> names = c.stream().map(tree.resources::get).toList();
                c.removeIf(f -> !config.inPool(spec.pool(), tree.resources.get(f)));
                if (c.isEmpty()) {
                    return new Admissibility.NeverFits(explainer.noFlavourInPool(q, spec.pool(), names));
                }
            }
            List<Integer> possible = c.stream().filter(f -> tree.maxAvailable(q, f) >= gpuMilli).toList();
            if (possible.isEmpty()) {
                return new Admissibility.NeverFits(explainer.neverEnough(q, c.get(0), gpuMilli));
            }
            cands = possible.stream().mapToInt(Integer::intValue).toArray();
        }
        if (q.has[tree.cpu] && demand.cpuMillis() > tree.maxAvailable(q, tree.cpu)) {
            return new Admissibility.NeverFits(explainer.neverEnough(q, tree.cpu, demand.cpuMillis()));
        }
        if (q.has[tree.mem] && demand.memoryMiB() > tree.maxAvailable(q, tree.mem)) {
            return new Admissibility.NeverFits(explainer.neverEnough(q, tree.mem, demand.memoryMiB()));
        }
        String key = Arrays.toString(cands);
        int candKey = candidateKeys.computeIfAbsent(key, k -> candidateKeys.size());
        PendingJob view = new PendingJob(job.jobId(), job.tenant(), q.name(), job.attempt(), job.gpuMilli(),
                job.submittedAt(), classValue, spec.priority(), level(q, job));
        return new Admissibility.Schedulable(new PendingJobEntry(job.jobId(), q, view, cands, gpuMilli,
                demand.cpuMillis(), demand.memoryMiB(), spec.timeLimitSeconds(), new RequestShape(gpuMilli, candKey),
                job));
    }

    /** Whether quota would admit {@code job} now (also a job that is not in the index, such as a parked one). */
    boolean quotaAdmits(QueuedJob job) {
        PendingJobEntry p = schedulable.get(job.jobId());
        if (p == null && resolve(job) instanceof Admissibility.Schedulable s) {
            p = s.entry();
        }
        return p != null && tree.quotaFit(p) != QuotaTree.NO_FIT;
    }

    /** The job as the policy orders it (also a job that is not in the index, for the pending list). */
    PendingJob view(QueuedJob job) {
        if (resolve(job) instanceof Admissibility.Schedulable s) {
            return s.entry().view();
        }
        Integer cls = config.priorityClasses().get(job.spec().priorityClass() == null
                ? config.defaultPriorityClass() : job.spec().priorityClass());
        ClusterQueue q = tree.queueFor(job.tenant(), job.spec().queue());
        return new PendingJob(job.jobId(), job.tenant(), tree.queueNameOf(job), job.attempt(), job.gpuMilli(),
                job.submittedAt(), cls == null ? Integer.MIN_VALUE : cls, job.spec().priority(),
                q == null ? 0 : level(q, job));
    }
}
