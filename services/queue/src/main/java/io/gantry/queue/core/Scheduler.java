package io.gantry.queue.core;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The admission engine behind {@link QueueCore}, for one configuration: it builds the parts and routes the core's
 * calls to them.
 * <ul>
 *   <li>{@link QuotaTree} — cohorts and queues ({@link ClusterQueue}), quotas and limits, usage and history, what a
 *       queue could take now ("available"), weighted shares;</li>
 *   <li>{@link QuotaLedger} — which dispatched attempt holds what ({@link QuotaCharge}, {@link OrphanedCharge});</li>
 *   <li>{@link PendingIndex} — pending jobs per queue and {@link RequestShape} ({@link PendingJobEntry}), never-fits
 *       and parked jobs, what changed since the last cycle;</li>
 *   <li>{@link AdmissionCycle} — the loop admitting the best-standing admissible job, then explanations;</li>
 *   <li>{@link Preemptor} — victim search and the runs being preempted ({@link PreemptedRun});</li>
 *   <li>{@link StarvationGuard} — a tree's {@link Reservation} and what may backfill around it;</li>
 *   <li>{@link Explainer} — the NEVER_FITS and QUOTA sentences.</li>
 * </ul>
 * One event costs work in proportion to the queues of the cohort tree it touches, not to the number of pending jobs.
 *
 * <p>It is mutated only through {@link QueueCore#replay} (charge, uncharge, sync) and reads {@code now} only as an
 * argument, so replaying the same facts at the same event times rebuilds exactly the same state. A new configuration
 * gets a new scheduler that {@link #adopt adopts} the old one's ledger, history and preemptions.
 */
final class Scheduler {
    private final QuotaTree tree;
    private final QuotaLedger ledger;
    private final PendingIndex pending;
    private final Preemptor preemptor;
    private final AdmissionCycle cycle;

    Scheduler(FairShareConfig config, DispatchPolicy policy) {
        Comparator<PendingJob> order = policy.queueOrder();
        Comparator<PendingJobEntry> queueOrder = (a, b) -> order.compare(a.view(), b.view());
        this.tree = new QuotaTree(config, queueOrder);
        Explainer explainer = new Explainer(tree, config);
        this.ledger = new QuotaLedger(tree, config);
        this.pending = new PendingIndex(tree, config, explainer, queueOrder);
        this.preemptor = new Preemptor(tree, ledger, config, policy);
        StarvationGuard guard = new StarvationGuard(tree, pending, policy, explainer, config);
        this.cycle = new AdmissionCycle(config, policy, tree, pending, guard, preemptor, explainer, queueOrder);
    }

    /** The checkpoints the core learned: preemption loses only the work since a run's last one. */
    void checkpoints(Checkpoints known) {
        preemptor.checkpoints(known);
    }

    /**
     * Takes over what {@code old} (the scheduler of the previous configuration) knew that facts alone do not hand
     * over: running charges, usage history and runs being preempted, matched by queue and resource name. Charges of
     * a queue that is gone are kept aside (orphans) until their run ends, and charged again if the queue comes back.
     */
    void adopt(Scheduler old) {
        tree.adoptHistory(old.tree);
        ledger.adopt(old.ledger);
        preemptor.adopt(old.preemptor);
    }

    // ------------------------------------------------------------------ facts

    /** A JobDispatched fact. */
    void charge(QueuedJob job, int attempt, JobSpec dispatched, long gpuMilli, String flavour, Instant at) {
        ledger.charge(job, attempt, dispatched, gpuMilli, flavour, at);
    }

    /** A QuotaReleased fact: the service its run received ({@link QueuedJob#attained}). */
    long uncharge(String jobId, int attempt, Instant at) {
        long service = ledger.service(jobId, attempt, at.toEpochMilli());
        if (ledger.uncharge(jobId, attempt, at)) {
            preemptor.released(jobId, attempt);
        }
        return service;
    }

    /** A JobPreempted fact. */
    void preempted(String jobId, int attempt, String preemptorJobId, PreemptionReason reason, String message,
                   long atMillis, long graceMillis) {
        preemptor.preempted(jobId, attempt, preemptorJobId, reason, message, atMillis, graceMillis);
    }

    /** Keeps the pending index in step with a job's state after a fact changed it ({@code after} null: gone). */
    void sync(QueuedJob before, QueuedJob after) {
        pending.sync(before, after);
    }


    // ------------------------------------------------------------------ inputs

    /** A capacity change: every one of these parked jobs gets one dispatch cycle. */
    void unpark(List<QueuedJob> jobs) {
        pending.unpark(jobs);
    }

    /** Whether the attempt is being preempted (asked, neither released nor expired). */
    boolean beingPreempted(String jobId, int attempt, Instant now) {
        return preemptor.stopping(jobId, attempt, now.toEpochMilli());
    }

    /** A tick: the next cycle looks for preemptions in every tree (minimum run times and grace periods end). */
    void timePassed() {
        preemptor.timePassed();
    }

    /** One dispatch cycle over what changed (everything when {@code all}). */
    void cycle(Instant now, boolean all, AdmissionCycle.Decisions decisions) {
        cycle.run(now, all, decisions);
    }

    // ------------------------------------------------------------------ reads

    /** Whether quota would admit the job now (a parked one too). */
    boolean quotaAdmits(QueuedJob job) {
        return pending.quotaAdmits(job);
    }

    /** The parked jobs, by id. */
    Set<String> parked() {
        return pending.parked;
    }

    /** The attempt's pending stop (asked, not released yet), or null. */
    PreemptedRun preemption(String jobId, int attempt) {
        return preemptor.preemption(jobId, attempt);
    }

    /** Why a run that placement released with reason PREEMPTED is queued again. */
    String preemptionText(String jobId, int attempt) {
        return preemptor.preemptionText(jobId, attempt);
    }

    /** Resolves the queue a job of {@code tenant} asking for {@code requested} goes to: makes an implicit one exist. */
    void queueFor(String tenant, String requested) {
        tree.queueFor(tenant, requested);
    }

    String queueNameOf(QueuedJob job) {
        return tree.queueNameOf(job);
    }

    List<QueueView> views(Instant now, Map<String, int[]> counts) {
        return tree.views(now, counts);
    }

    /** Usage per queue and resource, for state comparison. */
    Map<String, List<Long>> usage() {
        return tree.usage();
    }

    List<QueueMemory.QueueUsage> usageHistories() {
        return tree.usageHistories();
    }

    void restoreUsageHistories(List<QueueMemory.QueueUsage> histories) {
        tree.restoreUsageHistories(histories);
    }

    /** The job as the policy orders it. */
    PendingJob view(QueuedJob job) {
        return pending.view(job);
    }
}
