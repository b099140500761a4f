package io.gantry.queue.core;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which dispatched attempt holds what of the {@link QuotaTree}: a {@link QuotaCharge} per job and attempt, from its
 * JobDispatched until its QuotaReleased, and the charges of runs whose queue left the configuration
 * ({@link OrphanedCharge}). Mutated only by replayed facts.
 */
final class QuotaLedger {
    private final QuotaTree tree;
    private final FairShareConfig config;
    private final Map<String, Map<Integer, QuotaCharge>> charges = new HashMap<>();
    /**
     * Charges of runs whose queue is not in this configuration (removed while they ran). They count against no queue
     * but stay until the run's QuotaReleased, and are charged again if a later configuration brings the queue back,
     * so a run that goes on is never forgotten by the ledger.
     */
    private final Map<String, Map<Integer, OrphanedCharge>> orphans = new HashMap<>();

    QuotaLedger(QuotaTree tree, FairShareConfig config) {
        this.tree = tree;
        this.config = config;
    }

    /** The charge of a job's attempt, or null. */
    QuotaCharge charge(String jobId, int attempt) {
        Map<Integer, QuotaCharge> byAttempt = charges.get(jobId);
        return byAttempt == null ? null : byAttempt.get(attempt);
    }

    /**
     * A JobDispatched fact: the attempt holds its demand of the queue's quota on the flavour it was admitted on
     * ({@code admittedOn}; when null or no longer one of the queue's flavours, the one its first GPU task names).
     */
    void charge(QueuedJob job, int attempt, JobSpec dispatched, long gpuMilli, String admittedOn, Instant at) {
        ClusterQueue q = tree.queueFor(job.tenant(), dispatched.queue());
        long t = at.toEpochMilli();
        TaskGroup g = ResourceDemand.firstGpuTask(dispatched);
        ResourceDemand demand = ResourceDemand.of(dispatched, gpuMilli);
        String cls = dispatched.priorityClass() == null ? config.defaultPriorityClass() : dispatched.priorityClass();
        int classValue = config.priorityClasses().getOrDefault(cls, 0);
        if (q == null) {
            // the queue is gone from the configuration (a restart replays a run dispatched before it was removed)
            String queue = dispatched.queue() == null ? job.tenant() : dispatched.queue();
            orphans.computeIfAbsent(job.jobId(), k -> new TreeMap<>()).put(attempt, new OrphanedCharge(job.jobId(),
                    attempt, job.tenant(), queue, demand.gpuMilli() > 0 && g != null
                            ? admittedOn != null ? admittedOn : g.gpuModel() : null,
                    demand.gpuMilli(), demand.cpuMillis(), demand.memoryMiB(), t, dispatched.timeLimitSeconds(),
                    classValue, dispatched.priority(), job.attained()));
            return;
        }
        Integer admitted = tree.resourceIndex(admittedOn);
        int flavour = demand.gpuMilli() <= 0 ? QuotaTree.NO_GPU
                : admitted != null && admitted < tree.cpu && q.has[admitted] ? admitted
                : tree.gpuResource(q, g == null ? null : g.gpuModel());
        if (demand.gpuMilli() > 0 && flavour < 0 && q.gpuFlavours.length > 0) {
            flavour = q.gpuFlavours[0];
        }
        QuotaCharge c = new QuotaCharge(job.jobId(), attempt, q, flavour, demand.gpuMilli(), demand.cpuMillis(),
                demand.memoryMiB(), t, dispatched.timeLimitSeconds(), classValue, dispatched.priority(), job.attained());
        QuotaCharge old = charges.computeIfAbsent(job.jobId(), k -> new TreeMap<>()).put(attempt, c);
        if (old != null) {
            undo(old, t);
        }
        tree.accrue(q, t);
        tree.add(c, 1, true);
        q.started(c);
    }

    /** A QuotaReleased fact: the attempt holds nothing any more. Whether it held a charge in a queue. */
    /**
     * The service the attempt's run received up to {@code t}: thousandths of a GPU held x milliseconds since its
     * dispatch ({@link QueuedJob#attained}); 0 when it holds nothing.
     */
    long service(String jobId, int attempt, long t) {
        Map<Integer, QuotaCharge> byAttempt = charges.get(jobId);
        QuotaCharge c = byAttempt == null ? null : byAttempt.get(attempt);
        if (c != null) {
            return c.gpuMilli() * Math.max(0, t - c.dispatchedMillis());
        }
        Map<Integer, OrphanedCharge> orphaned = orphans.get(jobId);
        OrphanedCharge o = orphaned == null ? null : orphaned.get(attempt);
        return o == null ? 0 : o.gpuMilli() * Math.max(0, t - o.dispatchedMillis());
    }

    boolean uncharge(String jobId, int attempt, Instant at) {
        Map<Integer, OrphanedCharge> orphaned = orphans.get(jobId);
        if (orphaned != null && orphaned.remove(attempt) != null && orphaned.isEmpty()) {
            orphans.remove(jobId);
        }
        Map<Integer, QuotaCharge> byAttempt = charges.get(jobId);
        QuotaCharge c = byAttempt == null ? null : byAttempt.remove(attempt);
        if (c == null) {
            return false;
        }
        if (byAttempt.isEmpty()) {
            charges.remove(jobId);
        }
        undo(c, at.toEpochMilli());
        return true;
    }

    private void undo(QuotaCharge c, long t) {
        tree.accrue(c.queue(), t);
        tree.add(c, -1, true);
        c.queue().stopped(c);
    }

    /**
     * Takes over the charges of {@code previous} (the ledger of the previous configuration), matched by queue and
     * resource name. Charges of a queue that is gone are kept aside until their run ends.
     */
    void adopt(QuotaLedger previous) {
        for (Map<Integer, QuotaCharge> byAttempt : previous.charges.values()) {
            for (QuotaCharge c : byAttempt.values()) {
                adoptCharge(new OrphanedCharge(c.jobId(), c.attempt(), c.queue().def.tenant(), c.queue().name(),
                        c.flavour() >= 0 && c.gpuMilli() > 0 ? previous.tree.resources.get(c.flavour()) : null, c.gpuMilli(),
                        c.cpu(), c.mem(), c.dispatchedMillis(), c.timeLimitSeconds(), c.classValue(), c.priority(),
                        c.attainedBefore()));
            }
        }
        for (Map<Integer, OrphanedCharge> byAttempt : previous.orphans.values()) {
            byAttempt.values().forEach(this::adoptCharge);
        }
    }

    private void adoptCharge(OrphanedCharge o) {
        ClusterQueue nq = tree.queueFor(o.tenant(), o.queue());
        if (nq == null) {
            orphans.computeIfAbsent(o.jobId(), k -> new TreeMap<>()).put(o.attempt(), o);
            return;
        }
        int flavour = QuotaTree.NO_GPU;
        if (o.gpuMilli() > 0) {
            Integer nr = tree.resourceIndex(o.flavour());
            flavour = nr != null && nr < tree.cpu && nq.has[nr] ? nr
                    : tree.anyGpu >= 0 && nq.has[tree.anyGpu] ? tree.anyGpu
                    : nq.gpuFlavours.length > 0 ? nq.gpuFlavours[0] : QuotaTree.NO_GPU;
        }
        QuotaCharge n = new QuotaCharge(o.jobId(), o.attempt(), nq, flavour, o.gpuMilli(), o.cpu(), o.mem(),
                o.dispatchedMillis(), o.timeLimitSeconds(), o.classValue(), o.priority(), o.attainedBefore());
        charges.computeIfAbsent(o.jobId(), k -> new TreeMap<>()).put(o.attempt(), n);
        tree.add(n, 1, true);
        nq.started(n);
    }
}
