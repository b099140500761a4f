package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The queue's state machine: {@link #apply} decides and returns facts, {@link #replay} is the only mutator.
 *
 * <p>{@code apply} replays each fact as soon as it decides it, so later decisions of the same call see its effect;
 * the caller publishes the returned facts and must not replay them again. After a restart the caller rebuilds the
 * state by calling {@code replay} for every fact on {@code queue.job-events}, in order.
 *
 * <p>{@code apply} validates an input (tenant of a known job, the spec) before the first fact, so an input that
 * throws has changed nothing. Every input ends with a dispatch cycle.
 *
 * <p>Not thread-safe: one thread owns a core.
 */
public final class QueueCore {
    /** QuotaReleased reason when placement deferred the attempt. */
    public static final String DEFERRED = "deferred";

    private FairShareConfig config;
    private final DispatchPolicy policy;
    private Scheduler scheduler;
    /** Non-terminal jobs, and terminal ones that still hold a reservation. */
    private final Map<String, QueuedJob> live = new HashMap<>();
    /** The checkpoint each live job's current attempt resumes from (set by its JobQueued; absent: from the start). */
    private final Map<String, String> resumeFrom = new HashMap<>();
    /** Retries of each live job's own failures used so far (from its latest JobQueued). */
    private final Map<String, Integer> failureRetries = new HashMap<>();
    /** Queued jobs waiting out a retry's backoff: kept out of the pending index until then. */
    private final Map<String, Instant> held = new HashMap<>();
    /**
     * The newest suspend or resume request per job, from admission's topic (restored from it at start, like
     * checkpoints): whether a job is suspended is this, or without a request its spec's {@code suspend}.
     */
    private final Map<String, SuspensionRequest> suspensions = new HashMap<>();
    /** Live jobs that name each job as a dependency (kept until they leave), to review them when it ends. */
    private final Map<String, Set<String>> dependents = new HashMap<>();
    /** Checkpoints the runs reported: state from admission's topic (restored from it), not from the queue's facts. */
    private final Checkpoints checkpoints = new Checkpoints();
    /** Money budgets billing announced: state from billing's topic (restored from it), not from the queue's facts. */
    private final BudgetHolds budgets = new BudgetHolds();
    /**
     * Queued jobs a budget holds, with the sentence why: kept out of the pending index (never dispatched, blocking
     * nobody) until the budget allows. Derived from the jobs and {@link #budgets}.
     */
    private final Map<String, String> budgetHeld = new HashMap<>();
    /** Jobs whose hold began or whose sentence changed since the last input: they get a JobWaiting BUDGET. */
    private final Set<String> budgetNews = new TreeSet<>();
    private final Map<String, FinishedJob> finished = new HashMap<>();
    /** The standing idle warning of each warned run (from the queue's JobIdleWarned / JobIdleCleared facts). */
    private final Map<String, IdleWarning> idleWarned = new HashMap<>();
    private final SortedSet<String> tenants = new TreeSet<>();
    /** The time of the latest input or replayed fact: usage accrues up to it. */
    private Instant clock = Instant.EPOCH;
    /** The job (and attempt) placement is reserving capacity for, or null. */
    private String capacityReservedFor;
    private int capacityReservedAttempt;

    public QueueCore(FairShareConfig config, DispatchPolicy policy) {
        this.config = Objects.requireNonNull(config);
        this.policy = Objects.requireNonNull(policy);
        this.scheduler = new Scheduler(config, policy);
        this.scheduler.checkpoints(checkpoints);
    }

    public QueueCore(FairShareConfig config) {
        this(config, new FairSharePolicy());
    }

    public FairShareConfig config() {
        return config;
    }

    /**
     * Applies a new (validated) configuration without a restart: quota ledger, usage history and runs being
     * preempted carry over by queue and resource name; jobs of a queue that is gone wait with NEVER_FITS; jobs
     * parked for capacity are looked at again (under the new quotas their quota may keep them out, and then they may
     * preempt; or a new flavour may take them); a dispatch cycle runs over everything. A restarted core built with
     * {@code next} and fed the same facts ends in the same state.
     */
    public List<QueueFact> reconfigure(FairShareConfig next, Instant now) {
        Objects.requireNonNull(next, "next");
        if (now.isAfter(clock)) {
            clock = now;
        }
        Scheduler old = scheduler;
        config = next;
        scheduler = new Scheduler(next, policy);
        scheduler.checkpoints(checkpoints);
        scheduler.adopt(old);
        List<QueuedJob> parked = new ArrayList<>();
        for (QueuedJob job : new TreeMap<>(live).values()) {
            syncIndex(null, job);
            if (job.parked()) {
                parked.add(job);
            }
        }
        scheduler.unpark(parked);
        List<QueueFact> out = new ArrayList<>();
        dispatchCycle(true, out);
        return published(out);
    }

    /**
     * What {@code next} would strand: per tenant, its queued and running jobs whose queue exists now and would not
     * under {@code next} (they would wait with NEVER_FITS, or run on without a queue). Jobs that have no queue
     * already are not counted, so one badly addressed job never blocks every later configuration. Each problem is
     * {@code "queues: tenant <t> has ..."}; empty when nothing is stranded.
     */
    public List<String> stranded(FairShareConfig next) {
        return stranded(config, next);
    }

    /** {@link #stranded(FairShareConfig)} going from {@code before} (not necessarily the live configuration). */
    public List<String> stranded(FairShareConfig before, FairShareConfig next) {
        Objects.requireNonNull(before, "before");
        Objects.requireNonNull(next, "next");
        // tenant -> queue -> {queued, running}
        Map<String, SortedMap<String, int[]>> lost = new TreeMap<>();
        for (QueuedJob job : live.values()) {
            if (job.status() != JobState.QUEUED && job.status() != JobState.DISPATCHED
                    && job.status() != JobState.INTERRUPTED) {
                continue;
            }
            String requested = job.spec().queue();
            if (!before.hasQueue(job.tenant(), requested) || next.hasQueue(job.tenant(), requested)) {
                continue;
            }
            String queue = requested == null ? job.tenant() : requested;
            int[] n = lost.computeIfAbsent(job.tenant(), t -> new TreeMap<>()).computeIfAbsent(queue, k -> new int[2]);
            n[job.status() == JobState.QUEUED ? 0 : 1]++;
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, SortedMap<String, int[]>> t : lost.entrySet()) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<String, int[]> q : t.getValue().entrySet()) {
                int queued = q.getValue()[0];
                int running = q.getValue()[1];
                parts.add(queued + " queued and " + running + " running job" + (queued + running == 1 ? "" : "s")
                        + " in queue '" + q.getKey() + "'");
            }
            List<String> kept = next.queues().stream().filter(d -> d.tenant().equals(t.getKey()))
                    .map(FairShareConfig.QueueDef::name).toList();
            problems.add("queues: tenant " + t.getKey() + " has " + String.join(", ", parts)
                    + ", which this configuration removes (" + (kept.isEmpty() ? t.getKey() + " would have no queue"
                    : t.getKey() + " keeps " + String.join(", ", kept)) + "); add the queue back, or apply with"
                    + " force to leave those jobs without a queue");
        }
        // a priority class removed under its queued jobs would leave them NEVER_FITS as silently
        SortedMap<String, Integer> classless = new TreeMap<>();
        for (QueuedJob job : live.values()) {
            if (job.status() != JobState.QUEUED && job.status() != JobState.DISPATCHED
                    && job.status() != JobState.INTERRUPTED) {
                continue;
            }
            String cls = job.spec().priorityClass() == null ? before.defaultPriorityClass() : job.spec().priorityClass();
            String nextCls = job.spec().priorityClass() == null ? next.defaultPriorityClass() : cls;
            if (before.priorityClasses().containsKey(cls) && !next.priorityClasses().containsKey(nextCls)) {
                classless.merge(nextCls, 1, Integer::sum);
            }
        }
        classless.forEach((cls, n) -> problems.add("priorityClasses: " + n + " queued or running job"
                + (n == 1 ? "" : "s") + " of class '" + cls + "', which this configuration removes; add the class"
                + " back, or apply with force to leave those jobs waiting NEVER_FITS"));
        return problems;
    }

    public List<QueueFact> apply(Input input, Instant now) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(now, "now");
        if (now.isAfter(clock)) {
            clock = now;
        }
        List<QueueFact> out = new ArrayList<>();
        releaseHeld(clock);
        expireBudgets();
        if (input instanceof Input.Submitted s) {
            submitted(s, out);
        } else if (input instanceof Input.CancelRequested c) {
            QueuedJob job = known(c.jobId(), c.tenant());
            if (job != null && !job.status().terminal()) {
                int lastDispatched = job.dispatchedThisAttempt() ? job.attempt() : job.attempt() - 1;
                emit(new QueueFact.JobCancelled(job.jobId(), job.tenant(), lastDispatched, c.requestedBy()), out);
            }
        } else if (input instanceof Input.SuspensionRequested r) {
            QueuedJob job = known(r.jobId(), r.tenant());
            suspension(r);
            suspensionChanged(job, out);
        } else if (input instanceof Input.Granted g) {
            QueuedJob job = known(g.jobId(), g.tenant());
            if (job != null && job.attempt() == g.attempt() && job.status() == JobState.DISPATCHED && suspended(job)) {
                // suspended before placement held anything: it ignored that preemption, so ask again now
                preemptSuspended(job, out);
            }
            if (job != null && g.jobId().equals(capacityReservedFor) && g.attempt() == capacityReservedAttempt) {
                emit(new QueueFact.CapacityReservationCancelled(job.jobId(), job.tenant(), g.attempt(),
                        CapacityReservationEnd.GRANTED), out);
            }
        } else if (input instanceof Input.Deferred d) {
            deferred(d, out);
        } else if (input instanceof Input.RunSucceeded r) {
            QueuedJob job = current(r.jobId(), r.tenant(), r.attempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobSucceeded(job.jobId(), job.tenant(), job.attempt()), out);
            }
        } else if (input instanceof Input.RunFailed r) {
            QueuedJob job = current(r.jobId(), r.tenant(), r.attempt());
            if (job != null && job.inFlight()) {
                runFailed(job, r, out);
            }
        } else if (input instanceof Input.Released r) {
            released(r, out);
        } else if (input instanceof Input.Requeued r) {
            QueuedJob job = current(r.jobId(), r.tenant(), r.interruptedAttempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobQueued(job.jobId(), job.tenant(), job.attempt() + 1, job.spec(),
                        job.submittedAt(), job.gpuMilli(), null, r.resumeFrom(),
                        failureRetries.getOrDefault(job.jobId(), 0), null), out);
            }
        } else if (input instanceof Input.RecoveryAbandoned r) {
            QueuedJob job = current(r.jobId(), r.tenant(), r.interruptedAttempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobFailed(job.jobId(), job.tenant(), job.attempt(), r.message(),
                        FailureReason.RECOVERY_ABANDONED), out);
            }
        } else if (input instanceof Input.CheckpointCommitted c) {
            checkpointed(c);
        } else if (input instanceof Input.BudgetChanged b) {
            budgetChanged(b);
        } else if (input instanceof Input.UtilisationSampled u) {
            utilisation(u, out);
        } else if (input instanceof Input.CapacityChanged) {
            capacityChanges++;
            unpark(null, List.of());
        } else if (input instanceof Input.Tick t) {
            if (t.recheckParked()) {
                unpark(null, List.of());
            }
            reviewSuspendedRuns(out);
            scheduler.timePassed();
            reviewCapacityReservation(out);
        } else if (input instanceof Input.Restored) {
            // budgets and facts were restored from different topics in any order: judge every hold afresh
            reviewBudgetHolds(null);
            restoredReview(out);
        } else {
            throw new IllegalArgumentException("unknown input " + input);
        }
        explainBudgetHolds(out);
        dispatchCycle(input instanceof Input.Restored, out);
        return published(out);
    }

    /**
     * The facts of one decision as published: a job told twice why it waits (a resume says "its turn", then the
     * cycle what holds it) keeps only the last. Both share the decision's instant, and readers order a job's waits by
     * time (admission's status breaks a tie by event id, which would pick either). The state is the same: a wait
     * other than CAPACITY only sets the reason of a queued job, which the later one replaces on replay too (or a
     * dispatch in between clears). A CAPACITY wait is kept: it parks a dispatched job.
     */
    private static List<QueueFact> published(List<QueueFact> out) {
        int waits = 0;
        for (QueueFact f : out) {
            waits += f instanceof QueueFact.JobWaiting ? 1 : 0;
        }
        if (waits < 2) {
            return List.copyOf(out);
        }
        Set<String> told = new HashSet<>();
        List<QueueFact> kept = new ArrayList<>(out.size());
        for (int i = out.size() - 1; i >= 0; i--) {
            QueueFact f = out.get(i);
            if (!(f instanceof QueueFact.JobWaiting w) || told.add(w.jobId() + "#" + w.attempt())
                    || w.reason() == WaitReason.CAPACITY) {
                kept.add(f);
            }
        }
        java.util.Collections.reverse(kept);
        return List.copyOf(kept);
    }

    /**
     * Billing announced a budget's state. Not a queue fact: the queue learns it from billing's topic and rebuilds it
     * from there at a restart (call this while restoring; the {@link Input.Restored} cycle then judges the holds).
     * Live, the tenant's queued jobs are held or released at once.
     */
    public void budgetChanged(Input.BudgetChanged b) {
        if (budgets.record(b)) {
            reviewBudgetHolds(b.tenant());
        }
    }

    /** A month whose budget held ended: its holds end with it, whatever billing says later about the new month. */
    private void expireBudgets() {
        Instant end = budgets.nextEnd();
        if (end != null && !clock.isBefore(end)) {
            budgets.expire(clock).forEach(this::reviewBudgetHolds);
        }
    }

    /**
     * Why new jobs of {@code tenant} in queue {@code queue} would be held for budget now (the sentence of their
     * JobWaiting BUDGET), or null when no budget holds them.
     */
    public String budgetHold(String tenant, String queue) {
        return budgets.holdOf(tenant, queue, clock);
    }

    /** Holds or releases every queued job of {@code tenant} (all tenants when null) as the budgets say now. */
    private void reviewBudgetHolds(String tenant) {
        if (budgetHeld.isEmpty() && !budgets.holdsAny()) {
            return; // nothing is held and nothing holds: the common case, at no cost
        }
        for (QueuedJob job : new TreeMap<>(live).values()) {
            if (job.status() == JobState.QUEUED && (tenant == null || tenant.equals(job.tenant()))) {
                syncIndex(job, job);
            }
        }
    }

    /** A JobWaiting BUDGET for each job newly held (or held for a new reason), so the tenant sees why. */
    private void explainBudgetHolds(List<QueueFact> out) {
        if (budgetNews.isEmpty()) {
            return;
        }
        List<String> news = List.copyOf(budgetNews);
        budgetNews.clear();
        for (String id : news) {
            QueuedJob job = live.get(id);
            String why = budgetHeld.get(id);
            // a suspended job, or one waiting for a dependency, says so first: that wait is its owner's to end
            if (job != null && why != null && !blocked(job)) {
                waitIfChanged(job, new QueuedJob.Wait(WaitReason.BUDGET, why), out);
            }
        }
    }

    /** Whether a budget holds {@code job} now (only a queued job can be held); keeps {@link #budgetHeld} in step. */
    private boolean heldForBudget(QueuedJob job) {
        String why = job.status() == JobState.QUEUED
                ? budgets.holdOf(job.tenant(), scheduler.queueNameOf(job), clock) : null;
        if (why == null) {
            budgetHeld.remove(job.jobId());
            return false;
        }
        if (!why.equals(budgetHeld.put(job.jobId(), why))) {
            budgetNews.add(job.jobId());
        }
        return true;
    }

    /**
     * A run reported a committed checkpoint. Not a queue fact: the queue learns it from admission's topic and rebuilds
     * it from there at a restart (call this while restoring), so it never writes it itself.
     */
    public void checkpointed(Input.CheckpointCommitted c) {
        if (!finished.containsKey(c.jobId())) {
            checkpoints.record(c.jobId(), c.attempt(), c.step(), c.path(), c.committedAt().toEpochMilli());
        }
    }

    /**
     * A run failed by the job's own fault: tried again under the job's retry policy (from its newest checkpoint,
     * after the backoff), else the job fails. A run past its time limit is not retried (it would be again).
     */
    private void runFailed(QueuedJob job, Input.RunFailed r, List<QueueFact> out) {
        RetryPolicy retry = job.spec().retry();
        int used = failureRetries.getOrDefault(job.jobId(), 0);
        if (r.reason() != FailureReason.RUN_FAILED || retry == null || used >= retry.maxRetries()) {
            String budget = retry != null && r.reason() == FailureReason.RUN_FAILED && retry.maxRetries() > 0
                    ? " (retries used: " + used + " of " + retry.maxRetries() + ")" : "";
            emit(new QueueFact.JobFailed(job.jobId(), job.tenant(), job.attempt(), r.message() + budget, r.reason()),
                    out);
            return;
        }
        int next = used + 1;
        java.time.Duration wait = retry.backoff(next);
        String because = "run failed: " + r.message() + "; retry " + next + " of " + retry.maxRetries()
                + (wait.isZero() ? "" : " after " + wait.toSeconds() + " s");
        emit(new QueueFact.JobQueued(job.jobId(), job.tenant(), job.attempt() + 1, job.spec(), job.submittedAt(),
                job.gpuMilli(), because, checkpoints.resumePoint(job.jobId(), job.attempt()), next,
                wait.isZero() ? null : clock.plus(wait)), out);
        if (!wait.isZero()) {
            // the job view says why it waits (not only its history): the next cycles do not look at it until then
            emit(new QueueFact.JobWaiting(job.jobId(), job.tenant(), job.attempt() + 1, WaitReason.BACKOFF,
                    "retry " + next + " of " + retry.maxRetries() + " is offered at " + clock.plus(wait)
                            + " (a backoff of " + wait.toSeconds() + " s after its run failed: " + r.message() + ")"),
                    out);
        }
    }

    private void submitted(Input.Submitted s, List<QueueFact> out) {
        if (live.containsKey(s.jobId()) || finished.containsKey(s.jobId())) {
            return; // admission may publish a job twice under the same id
        }
        emit(new QueueFact.JobQueued(s.jobId(), s.tenant(), 1, s.spec(), s.submittedAt(), s.spec().gangMilli()), out);
    }

    /**
     * At most one parked gang at a time gets placement to reserve (drain) capacity for it: the highest-standing one
     * (priority class, job priority, submit time) that has waited at least the starvation wait since it was last
     * queued (a run stopped for another reservation does not reserve in turn at once). Only gangs of more than one
     * GPU: one GPU (or a part of one) is served by the next GPU that frees, in queue order, and cannot starve behind
     * smaller work. Only gangs quota admits now: one that waits for its fair share is not starving, and GPUs drained
     * for it would idle until its quota came. It keeps the reservation until it is granted or leaves the queue (no
     * switching: a drain half done would be wasted), or leaves the order while queued: suspended by its owner, or
     * held for a money budget (its drained nodes would idle for a job that does not run).
     */
    private void reviewCapacityReservation(List<QueueFact> out) {
        if (capacityReservedFor != null) {
            QueuedJob held = live.get(capacityReservedFor);
            boolean current = held != null && held.attempt() == capacityReservedAttempt && !held.status().terminal();
            boolean withdrawn = current && held.status() == JobState.QUEUED
                    && (suspended(held) || budgetHeld.containsKey(held.jobId()));
            if (current && !withdrawn) {
                return;
            }
            String tenant = held != null ? held.tenant() : finished.containsKey(capacityReservedFor)
                    ? finished.get(capacityReservedFor).tenant() : null;
            if (tenant != null) {
                emit(new QueueFact.CapacityReservationCancelled(capacityReservedFor, tenant, capacityReservedAttempt,
                        withdrawn ? CapacityReservationEnd.WITHDRAWN : held == null || held.status().terminal()
                                ? CapacityReservationEnd.FINISHED : CapacityReservationEnd.REQUEUED), out);
            }
            capacityReservedFor = null; // also when the job is unknown: nothing to tell placement
        }
        QueuedJob best = null;
        long wait = config.starvationWait().toMillis();
        for (String id : scheduler.parked()) {
            QueuedJob j = live.get(id);
            if (j.gpuMilli() <= GpuShares.WHOLE || clock.toEpochMilli() - j.queuedAt().toEpochMilli() < wait) {
                continue;
            }
            if ((best == null || standing(j, best) < 0) && scheduler.quotaAdmits(j)) {
                best = j;
            }
        }
        if (best != null) {
            long minutes = (clock.toEpochMilli() - best.queuedAt().toEpochMilli()) / 60_000;
            emit(new QueueFact.CapacityReservationRequested(best.jobId(), best.tenant(), best.attempt(), best.spec(),
                    "job waited " + minutes + " min (starvation wait " + config.starvationWait().toMinutes()
                            + " min) and placement could not place it: " + (best.lastWait() == null ? "capacity"
                            : best.lastWait().message()),
                    config.maxDrain() == null ? null : config.maxDrain().toSeconds()), out);
        }
    }

    private int standing(QueuedJob a, QueuedJob b) {
        int c = Integer.compare(classValue(b), classValue(a));
        if (c == 0) {
            c = Integer.compare(b.spec().priority(), a.spec().priority());
        }
        if (c == 0) {
            c = a.submittedAt().compareTo(b.submittedAt());
        }
        return c != 0 ? c : a.jobId().compareTo(b.jobId());
    }

    /** The job placement is reserving capacity for, or null. */
    public String capacityReservedFor() {
        return capacityReservedFor;
    }

    private void released(Input.Released r, List<QueueFact> out) {
        QueuedJob job = known(r.jobId(), r.tenant());
        // any attempt: an old attempt's reservation must end too, or the quota leaks
        if (job != null && job.reservations().containsKey(r.attempt())) {
            PreemptedRun stop = scheduler.preemption(job.jobId(), r.attempt());
            boolean current = r.attempt() == job.attempt() && job.status() == JobState.DISPATCHED;
            // an idle stop ends the job; also when an older placement released it PREEMPTED (it knows no IDLE)
            boolean idle = current && (r.reason() == ReleaseCause.IDLE || r.reason() == ReleaseCause.PREEMPTED
                    && stop != null && stop.reason() == PreemptionReason.IDLE);
            String because = r.reason().stoppedToRequeue() && !idle
                    ? scheduler.preemptionText(job.jobId(), r.attempt()) : null;
            boolean requeue = because != null && current;
            emit(new QueueFact.QuotaReleased(job.jobId(), job.tenant(), r.attempt(),
                    job.reservations().get(r.attempt()), r.reason()), out);
            if (idle) {
                emit(new QueueFact.JobFailed(job.jobId(), job.tenant(), job.attempt(), stop != null
                        && stop.reason() == PreemptionReason.IDLE ? stop.message()
                        : "stopped: its GPUs stayed idle for the idle timeout of its queue", FailureReason.IDLE), out);
            } else if (requeue) {
                // back in its queue with its original submit time, so it keeps its place
                emit(new QueueFact.JobQueued(job.jobId(), job.tenant(), job.attempt() + 1, job.spec(),
                        job.submittedAt(), job.gpuMilli(), because, checkpoints.resumePoint(job.jobId(), r.attempt()),
                        failureRetries.getOrDefault(job.jobId(), 0), null), out);
            }
        }
        unpark(r.free(), r.checks());
    }

    /**
     * Capacity changes seen (node recovered, registered, uncordoned), and the count at each job's latest dispatch:
     * transient, only to catch a deferral that crossed such a change on another topic (see {@link #deferred}).
     */
    private long capacityChanges;
    private final Map<String, Long> dispatchedAtChange = new HashMap<>();

    private void deferred(Input.Deferred d, List<QueueFact> out) {
        QueuedJob job = known(d.jobId(), d.tenant());
        if (job == null || !job.reservations().containsKey(d.attempt())) {
            return; // already released: a repeated or stale deferral
        }
        boolean park = d.attempt() == job.attempt() && job.status() == JobState.DISPATCHED;
        Long dispatchedAt = dispatchedAtChange.remove(d.jobId());
        emit(QueueFact.QuotaReleased.deferred(job.jobId(), job.tenant(), d.attempt(),
                job.reservations().get(d.attempt())), out);
        if (park) {
            emit(new QueueFact.JobWaiting(job.jobId(), job.tenant(), job.attempt(), WaitReason.CAPACITY, d.message(),
                    null, d.reason()), out);
            if (dispatchedAt != null && dispatchedAt < capacityChanges) {
                // capacity changed (a node came back, registered or was uncordoned) after the dispatch: placement's
                // "no" may predate it, and the change arrived on another topic before this deferral, so no later
                // wake-up will come for it. Offer it once more now instead of parking it until the next re-check.
                scheduler.unpark(List.of(live.get(job.jobId())));
            }
        }
    }

    /**
     * One cycle of the scheduler. Jobs unparked by a capacity change that are not dispatched get a non-CAPACITY
     * JobWaiting, so the unpark itself is a fact and survives a restart.
     */
    private void dispatchCycle(boolean all, List<QueueFact> out) {
        scheduler.cycle(clock, all, new AdmissionCycle.Decisions() {
            @Override
            public void dispatch(String jobId, String flavour) {
                QueuedJob job = live.get(jobId);
                emit(new QueueFact.JobDispatched(jobId, job.tenant(), job.attempt(), assigned(job.spec(), flavour),
                        job.gpuMilli(), resumeFrom.get(jobId), flavour, config.poolOf(job.spec().pool(), flavour)), out);
                dispatchedAtChange.put(jobId, capacityChanges);
            }

            @Override
            public void waiting(String jobId, QueuedJob.Wait wait) {
                waitIfChanged(live.get(jobId), wait, out);
            }

            @Override
            public void preempt(String jobId, int attempt, PreemptionReason reason, String preemptor,
                                String message) {
                QueuedJob job = live.get(jobId);
                emit(new QueueFact.JobPreempted(jobId, job.tenant(), attempt, reason, preemptor,
                        (int) config.preemption().gracePeriod().toSeconds(), message), out);
            }

            @Override
            public boolean roomFor(String jobId) {
                return onlyPlaces.isEmpty() || onlyPlaces.take(jobId, live.get(jobId).spec());
            }
        });
        onlyPlaces.clear(); // what the release left is for the cycle right after it only
    }

    /** The places the last release left room on that woken gangs fit on alone (transient: its cycle only). */
    private final OnlyPlaces onlyPlaces = new OnlyPlaces();

    /**
     * The spec handed to placement: when the job named no GPU model, the GPU tasks are pinned to the flavour the
     * quota was reserved on, so placement places them there (whole GPUs and fractions). "Any GPU" and named models
     * are left as they are, and so is a task that names a tier (placement's configuration says which models a tier
     * has, the queue does not know: pinning could send it outside its tier), a list of models the flavour is not in,
     * or a MIG profile (only MIG-capable devices host one, which placement knows and the queue does not).
     */
    static JobSpec assigned(JobSpec spec, String flavour) {
        if (flavour == null || flavour.equals(FairShareConfig.ANY_GPU)) {
            return spec;
        }
        List<TaskGroup> tasks = new ArrayList<>();
        boolean changed = false;
        for (TaskGroup t : spec.tasks()) {
            if ((t.gpus() > 0 || t.gpuMilli() != null) && t.gpuModel() == null && t.gpuTier() == null
                    && (t.gpuModels().isEmpty() || t.gpuModels().contains(flavour))) {
                tasks.add(t.onModel(flavour));
                changed = true;
            } else {
                tasks.add(t);
            }
        }
        return changed ? spec.withTasks(tasks) : spec;
    }

    private void waitIfChanged(QueuedJob job, QueuedJob.Wait wait, List<QueueFact> out) {
        if (!wait.equals(job.lastWait())) {
            emit(new QueueFact.JobWaiting(job.jobId(), job.tenant(), job.attempt(), wait),
                    out);
        }
    }

    /**
     * Offers parked jobs to placement again: all of them when {@code free} is unknown; otherwise, in queue order
     * (priority class, job priority, submit time), those that might fit in what the jobs woken before them leave of
     * it. So a release does not send every parked gang back to placement (no retry storm), and what it frees goes
     * to the longest-waiting gang that could use it.
     */
    private void unpark(FreeCapacity free, List<Input.DeferredCheck> checks) {
        List<QueuedJob> parked = new ArrayList<>();
        for (String id : scheduler.parked()) {
            parked.add(live.get(id));
        }
        // placement's own verdict on a gang it checked is exact; the summary is only a necessary condition. Only a
        // verdict on the attempt the queue holds counts (parked jobs are those attempts); keyed by job id, as this
        // runs on every release over every parked job
        Map<String, Boolean> verdict = new HashMap<>();
        for (Input.DeferredCheck c : checks) {
            QueuedJob job = live.get(c.jobId());
            if (job != null && job.attempt() == c.attempt()) {
                verdict.put(c.jobId(), c.fits());
            }
        }
        if (!verdict.isEmpty()) {
            parked.removeIf(job -> Boolean.FALSE.equals(verdict.get(job.jobId())));
        }
        for (Input.DeferredCheck c : checks) {
            QueuedJob job = live.get(c.jobId());
            if (c.fits() && c.onlyPlace() != null && job != null && job.attempt() == c.attempt()) {
                onlyPlaces.add(c.jobId(), c.onlyPlace());
            }
        }
        if (free != null && !free.byModel().isEmpty()) {
            parked.sort(java.util.Comparator.comparingInt((QueuedJob j) -> -classValue(j))
                    .thenComparingInt(j -> -j.spec().priority())
                    .thenComparing(QueuedJob::submittedAt).thenComparing(QueuedJob::jobId));
            FreeCapacity.Budget budget = free.budget();
            parked.removeIf(job -> !mightFit(job, budget));
        }
        scheduler.unpark(parked);
    }

    private int classValue(QueuedJob job) {
        String cls = job.spec().priorityClass() == null ? config.defaultPriorityClass() : job.spec().priorityClass();
        return config.priorityClasses().getOrDefault(cls, 0);
    }

    /**
     * The GPU models a task accepts, empty for any. A tier is resolved by placement's configuration, which the queue
     * does not know: any model then.
     */
    private static List<String> acceptedModels(TaskGroup t) {
        return t.gpuTier() != null ? List.of() : t.gpuModel() != null ? List.of(t.gpuModel()) : t.gpuModels();
    }

    private static boolean mightFit(QueuedJob job, FreeCapacity.Budget budget) {
        List<String> models = null;
        boolean mixed = false;
        List<long[]> tasks = new ArrayList<>();
        int gang = 0;
        for (TaskGroup t : job.spec().tasks()) {
            if (t.gpuMilli() != null) {
                // a fraction of one GPU: wake only if some device of an accepted model has that much free
                if (!budget.takeShares(acceptedModels(t), t.replicas(), t.gpuMilli(), t.cpuMillis(), t.memoryMiB())) {
                    return false;
                }
                continue;
            }
            if (t.gpus() <= 0) {
                continue;
            }
            tasks.add(new long[] {t.replicas(), t.gpus(), t.cpuMillis(), t.memoryMiB()});
            gang += t.replicas() * t.gpus();
            List<String> accepts = acceptedModels(t);
            if (models == null) {
                models = accepts;
            } else if (!models.equals(accepts)) {
                mixed = true;
                if (models.isEmpty() || accepts.isEmpty()) {
                    models = List.of();
                } else {
                    Set<String> union = new java.util.LinkedHashSet<>(models);
                    union.addAll(accepts);
                    models = List.copyOf(union);
                }
            }
        }
        if (models == null) {
            return true; // no whole GPUs (CPU-only, fractions checked above, or MIG): nothing more to check
        }
        return budget.take(models, tasks, gang, mixed);
    }

    /** The live job, after checking the input names its real tenant; null if unknown or finished. */
    private QueuedJob known(String jobId, String tenant) {
        QueuedJob job = live.get(jobId);
        String owner = job != null ? job.tenant() : finished.containsKey(jobId) ? finished.get(jobId).tenant() : null;
        if (owner != null && !owner.equals(tenant)) {
            throw new IllegalArgumentException("tenant: job " + jobId + " belongs to tenant " + owner + ", not "
                    + tenant);
        }
        return job;
    }

    /** The live job if {@code attempt} is its current attempt; events about other attempts are ignored. */
    private QueuedJob current(String jobId, String tenant, int attempt) {
        QueuedJob job = known(jobId, tenant);
        return job != null && job.attempt() == attempt ? job : null;
    }

    private void emit(QueueFact fact, List<QueueFact> out) {
        replay(fact, clock);
        out.add(fact);
        if (fact instanceof QueueFact.JobQueued) {
            reviewBlocked(live.get(fact.jobId()), out);
        } else if (terminal(fact)) {
            // its dependents are reviewed now: met ones enter the order, never-met ones end (and theirs, in turn)
            Set<String> waiting = dependents.get(fact.jobId());
            if (waiting != null) {
                for (String d : new TreeSet<>(waiting)) {
                    reviewBlocked(live.get(d), out);
                }
            }
        }
    }

    private static boolean terminal(QueueFact fact) {
        return fact instanceof QueueFact.JobSucceeded || fact instanceof QueueFact.JobFailed
                || fact instanceof QueueFact.JobCancelled;
    }

    // ------------------------------------------------------------------ dependencies and suspension

    /** A suspend or resume request: the newest per job stands. Call it for every record while restoring, too. */
    public void suspension(Input.SuspensionRequested r) {
        if (!finished.containsKey(r.jobId())) {
            suspensions.put(r.jobId(), new SuspensionRequest(r.suspend(), r.requestedBy()));
        }
    }

    /** The newest request of a job; without one, its spec's {@code suspend} (submitted suspended). */
    private record SuspensionRequest(boolean suspend, String by) {
    }

    private boolean suspended(QueuedJob job) {
        SuspensionRequest r = suspensions.get(job.jobId());
        return r != null ? r.suspend() : job.spec().suspend();
    }

    private String suspendedSentence(QueuedJob job) {
        SuspensionRequest r = suspensions.get(job.jobId());
        return r == null ? "submitted suspended; resume it to let it run" : "suspended by " + r.by()
                + "; resume it to let it run";
    }

    /** How a dependency stands: a job of another tenant counts as unknown, and so never met. */
    private Dependency.Verdict verdict(QueuedJob job, Dependency d) {
        QueuedJob dep = live.get(d.jobId());
        FinishedJob done = finished.get(d.jobId());
        String owner = dep != null ? dep.tenant() : done != null ? done.tenant() : null;
        if (owner != null && !owner.equals(job.tenant())) {
            return Dependency.Verdict.NEVER;
        }
        return d.verdict(status(d.jobId()));
    }

    /** Whether the queued job is kept out of the queue order: suspended, or a dependency not met yet. */
    private boolean blocked(QueuedJob job) {
        if (job.status() != JobState.QUEUED) {
            return false;
        }
        if (suspended(job)) {
            return true;
        }
        for (Dependency d : job.spec().dependencies()) {
            if (verdict(job, d) != Dependency.Verdict.MET) {
                return true;
            }
        }
        return false;
    }

    /**
     * A queued job's dependencies and suspension were looked at again: a dependency that can never be met cancels it
     * (it never ran; its own dependents follow); otherwise it shows what keeps it out of the order, suspension first,
     * then the first dependency not met yet. A job with none of these is in the order and the cycle explains it.
     */
    private void reviewBlocked(QueuedJob job, List<QueueFact> out) {
        if (job == null || job.status() != JobState.QUEUED) {
            return;
        }
        Dependency first = null;
        int pending = 0;
        for (Dependency d : job.spec().dependencies()) {
            Dependency.Verdict v = verdict(job, d);
            if (v == Dependency.Verdict.NEVER) {
                JobState end = tenantOf(d.jobId()).equals(job.tenant()) ? status(d.jobId()) : null;
                String what = end == null ? "was not found" : end == JobState.SUCCEEDED ? "succeeded" : end == JobState.FAILED ? "failed" : "was cancelled";
                int lastDispatched = job.dispatchedThisAttempt() ? job.attempt() : job.attempt() - 1;
                emit(new QueueFact.JobCancelled(job.jobId(), job.tenant(), lastDispatched, "queue",
                        "dependency " + d.jobId() + " " + what + " (" + conditionName(d.condition())
                                + "): it can never be met"), out);
                return;
            }
            if (v == Dependency.Verdict.PENDING && pending++ == 0) {
                first = d;
            }
        }
        if (suspended(job)) {
            waitIfChanged(job, new QueuedJob.Wait(WaitReason.SUSPENDED, suspendedSentence(job)), out);
        } else if (first != null) {
            JobState now = status(first.jobId());
            waitIfChanged(job, new QueuedJob.Wait(WaitReason.DEPENDENCY, "waits for " + first.jobId() + " to "
                    + first.condition().verb() + " (" + (now == null ? "not queued yet" : now.name().toLowerCase(
                    java.util.Locale.ROOT)) + ")" + (pending > 1 ? " and " + (pending - 1) + " more" : "")), out);
        }
    }

    /** The tenant of a job the core knows (live or ended), or empty. */
    public String tenantOf(String jobId) {
        QueuedJob j = live.get(jobId);
        return j != null ? j.tenant() : finished.containsKey(jobId) ? finished.get(jobId).tenant() : "";
    }

    /** The condition as job files write it (Slurm's words). */
    static String conditionName(Dependency.Condition c) {
        return c.name().replace("_", "").toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * A suspend or resume request reached a job: a queued job leaves or re-enters the order (keeping its submit time,
     * so its place); a dispatched one being suspended is preempted (grace period, requeued from its newest
     * checkpoint, then kept suspended); an interrupted one is kept suspended when recovery requeues it.
     */
    private void suspensionChanged(QueuedJob job, List<QueueFact> out) {
        if (job == null || job.status().terminal()) {
            return;
        }
        syncIndex(job, job);
        if (job.status() == JobState.QUEUED) {
            if (suspended(job) || blocked(job)) {
                reviewBlocked(job, out);
            } else if (job.lastWait() != null && job.lastWait().reason() == WaitReason.SUSPENDED) {
                String by = "resumed by " + suspensions.get(job.jobId()).by();
                Instant backoff = held.get(job.jobId());
                waitIfChanged(job, backoff != null
                        ? new QueuedJob.Wait(WaitReason.BACKOFF, by + "; its retry is offered at " + backoff)
                        : QueuedJob.Wait.quota(by + "; waits for its turn in its queue", QuotaWait.TURN), out);
            }
        } else if (job.status() == JobState.DISPATCHED && suspended(job)
                && !scheduler.beingPreempted(job.jobId(), job.attempt(), clock)) {
            preemptSuspended(job, out);
        }
    }

    private void preemptSuspended(QueuedJob job, List<QueueFact> out) {
        SuspensionRequest r = suspensions.get(job.jobId());
        emit(new QueueFact.JobPreempted(job.jobId(), job.tenant(), job.attempt(), PreemptionReason.SUSPENDED, null,
                (int) config.preemption().gracePeriod().toSeconds(), "suspended by " + (r == null ? "its owner"
                : r.by()) + "; it is requeued from its newest checkpoint and waits until resumed"), out);
    }

    /** A suspension preemption that expired (placement never released the run) is asked for again. */
    private void reviewSuspendedRuns(List<QueueFact> out) {
        for (Map.Entry<String, SuspensionRequest> e : new TreeMap<>(suspensions).entrySet()) {
            QueuedJob job = live.get(e.getKey());
            if (e.getValue().suspend() && job != null && job.status() == JobState.DISPATCHED
                    && !scheduler.beingPreempted(job.jobId(), job.attempt(), clock)) {
                preemptSuspended(job, out);
            }
        }
    }

    /**
     * After a restore: requests restored for jobs that have ended are dropped, and every queued job is reviewed (a
     * dependency may have ended while no decision could be written, e.g. by an older version).
     */
    private void restoredReview(List<QueueFact> out) {
        suspensions.keySet().removeIf(finished::containsKey);
        // idle facts restored before their job's end (topics replay in any interleaving)
        idleWarned.keySet().removeIf(id -> !live.containsKey(id));
        // only jobs with dependencies or suspended can be blocked: pick them out, then in id order (a restart over
        // many jobs must not sort them all)
        List<String> review = new ArrayList<>();
        for (QueuedJob job : live.values()) {
            if (job.status() == JobState.QUEUED && (!job.spec().dependencies().isEmpty() || suspended(job))) {
                review.add(job.jobId());
            }
        }
        review.sort(null);
        for (String id : review) {
            QueuedJob now = live.get(id);
            if (now != null && now.status() == JobState.QUEUED) {
                syncIndex(now, now);
                reviewBlocked(now, out);
            }
        }
        reviewSuspendedRuns(out);
    }

    // ------------------------------------------------------------------ idle reclamation

    /** A standing idle warning: for which attempt, and the idle stretch (its start) it was given for. */
    private record IdleWarning(int attempt, Instant idleSince) {
    }

    /**
     * A utilisation window of a running attempt: idle reclamation. Only for an interactive job in a queue with an
     * idle timeout. Decided on the window alone (it says since when the GPUs have been idle, on placement's clock) and
     * the queue's own facts, so nothing of the utilisation topic needs restoring: a warning at half the timeout (once
     * per idle stretch), a stop at the full timeout (the first window that reaches it), and a warning cleared by a busy
     * window, a new idle stretch, or a timeout that no longer applies.
     */
    private void utilisation(Input.UtilisationSampled u, List<QueueFact> out) {
        QueuedJob job = current(u.jobId(), u.tenant(), u.attempt());
        if (job == null || job.status() != JobState.DISPATCHED) {
            return;
        }
        IdleWarning warned = idleWarned.get(job.jobId());
        if (warned != null && warned.attempt() != job.attempt()) {
            warned = null;
        }
        java.time.Duration timeout = job.spec().interactive() ? config.idleTimeoutOf(scheduler.queueNameOf(job))
                : null;
        Instant since = u.idleSince();
        if (warned != null && (since == null || !since.equals(warned.idleSince()) || timeout == null)) {
            emit(new QueueFact.JobIdleCleared(job.jobId(), job.tenant(), job.attempt(), since == null
                    ? "GPUs busy again (" + GpuShares.format(u.usedGpuMilli()) + " of " + GpuShares.format(
                    u.heldGpuMilli()) + " GPUs used); the idle warning no longer stands"
                    : timeout == null ? "its queue no longer stops idle runs; the idle warning no longer stands"
                    : "GPUs were busy in between; the idle warning no longer stands"), out);
            warned = null;
        }
        if (timeout == null || since == null || scheduler.beingPreempted(job.jobId(), job.attempt(), clock)) {
            return;
        }
        java.time.Duration idle = java.time.Duration.between(since, u.windowTo());
        String queue = scheduler.queueNameOf(job);
        if (idle.compareTo(timeout) >= 0) {
            emit(new QueueFact.JobPreempted(job.jobId(), job.tenant(), job.attempt(), PreemptionReason.IDLE, null,
                    (int) config.preemption().gracePeriod().toSeconds(), "GPUs idle for " + length(idle) + " since "
                    + since + " (idle timeout " + length(timeout) + " of queue " + queue + "); the run is stopped and"
                    + " the job ends (IDLE), it is not requeued"), out);
        } else if (warned == null && idle.multipliedBy(2).compareTo(timeout) >= 0) {
            Instant stopAt = since.plus(timeout);
            emit(new QueueFact.JobIdleWarned(job.jobId(), job.tenant(), job.attempt(), since, timeout, stopAt,
                    "GPUs idle for " + length(idle) + "; the run is stopped at " + stopAt + " (idle timeout "
                            + length(timeout) + " of queue " + queue + ") unless they become busy"), out);
        }
    }

    /** {@code 30 min}, or {@code 90 s} when not whole minutes. */
    private static String length(java.time.Duration d) {
        return d.toSeconds() % 60 == 0 ? d.toMinutes() + " min" : d.toSeconds() + " s";
    }

    /** Since when the job's current run has been idle, if the queue warned it and the warning stands; else null. */
    public Instant idleWarnedSince(String jobId) {
        IdleWarning w = idleWarned.get(jobId);
        QueuedJob job = live.get(jobId);
        return w != null && job != null && job.attempt() == w.attempt() ? w.idleSince() : null;
    }

    /** {@link #replay(QueueFact, Instant)} at the time of the latest input or fact. */
    public void replay(QueueFact fact) {
        replay(fact, clock);
    }

    /**
     * Applies a fact to the state. The only mutator; facts about unknown jobs change nothing. {@code at} is the
     * fact's event time: usage history accrues up to it (on restore the adapter passes the record's occurredAt).
     */
    public void replay(QueueFact fact, Instant at) {
        Objects.requireNonNull(fact, "fact");
        Objects.requireNonNull(at, "at");
        if (at.isAfter(clock)) {
            clock = at;
        }
        if (fact instanceof QueueFact.JobQueued q) {
            if (q.resumeFrom() != null) {
                resumeFrom.put(q.jobId(), q.resumeFrom());
            } else {
                resumeFrom.remove(q.jobId());
            }
            if (q.failureRetries() > 0) {
                failureRetries.put(q.jobId(), q.failureRetries());
            }
            if (q.notBefore() != null && q.notBefore().isAfter(at) && !finished.containsKey(q.jobId())) {
                held.put(q.jobId(), q.notBefore());
            } else {
                held.remove(q.jobId());
            }
            QueuedJob job = live.get(q.jobId());
            QueuedJob after;
            if (job == null) {
                if (finished.containsKey(q.jobId())) {
                    return;
                }
                after = new QueuedJob(q.jobId(), q.tenant(), q.spec(), q.gpuMilli(), q.submittedAt(), q.attempt(),
                        JobState.QUEUED, false, null, new TreeMap<>(), 0, at);
                tenants.add(q.tenant());
                for (Dependency d : q.spec().dependencies()) {
                    dependents.computeIfAbsent(d.jobId(), k -> new HashSet<>()).add(q.jobId());
                }
            } else {
                after = job.requeued(q.attempt(), q.spec(), q.submittedAt(), q.gpuMilli(), at);
            }
            live.put(q.jobId(), after);
            syncIndex(job, after);
            return;
        }
        if (fact instanceof QueueFact.JobIdleWarned w) {
            if (!finished.containsKey(w.jobId())) {
                idleWarned.put(w.jobId(), new IdleWarning(w.attempt(), w.idleSince()));
            }
            return;
        }
        if (fact instanceof QueueFact.JobIdleCleared c) {
            IdleWarning w = idleWarned.get(c.jobId());
            if (w != null && w.attempt() == c.attempt()) {
                idleWarned.remove(c.jobId());
            }
            return;
        }
        if (fact instanceof QueueFact.CapacityReservationRequested c) {
            capacityReservedFor = c.jobId();
            capacityReservedAttempt = c.attempt();
            return;
        }
        if (fact instanceof QueueFact.CapacityReservationCancelled c) {
            if (c.jobId().equals(capacityReservedFor) && c.attempt() == capacityReservedAttempt) {
                capacityReservedFor = null;
            }
            return;
        }
        QueuedJob job = live.get(fact.jobId());
        if (job == null) {
            return;
        }
        QueuedJob before = job;
        if (fact instanceof QueueFact.JobWaiting w) {
            if (w.attempt() == job.attempt() && (job.status() == JobState.QUEUED
                    || job.status() == JobState.DISPATCHED && w.reason() == WaitReason.CAPACITY)) {
                job = job.waiting(w.waitOf(), JobState.QUEUED);
            }
        } else if (fact instanceof QueueFact.JobDispatched d) {
            job = job.dispatched(d.attempt(), d.gpuMilli());
            scheduler.charge(job, d.attempt(), d.spec(), d.gpuMilli(), d.flavour(), at);
        } else if (fact instanceof QueueFact.QuotaReleased r) {
            long service = 0;
            if (job.reservations().containsKey(r.attempt())) {
                service = scheduler.uncharge(job.jobId(), r.attempt(), at);
            }
            // a deferred dispatch never ran
            job = job.released(r.attempt(), DEFERRED.equals(r.reason()) ? 0 : service);
            if (r.cause() != null && r.cause().recoveryDecides() && r.attempt() == job.attempt()
                    && job.status() == JobState.DISPATCHED) {
                job = job.with(JobState.INTERRUPTED);
            }
        } else if (fact instanceof QueueFact.JobPreempted p) {
            scheduler.preempted(p.jobId(), p.attempt(), p.preemptorJobId(), p.reason(), p.message(),
                    at.toEpochMilli(), p.graceSeconds() * 1000L);
        } else if (fact instanceof QueueFact.JobSucceeded) {
            job = job.with(JobState.SUCCEEDED);
        } else if (fact instanceof QueueFact.JobFailed) {
            job = job.with(JobState.FAILED);
        } else if (fact instanceof QueueFact.JobCancelled) {
            job = job.with(JobState.CANCELLED);
        }
        if (job.status().terminal() && job.reservations().isEmpty()) {
            live.remove(job.jobId());
            resumeFrom.remove(job.jobId());
            failureRetries.remove(job.jobId());
            held.remove(job.jobId());
            budgetHeld.remove(job.jobId());
            checkpoints.forget(job.jobId());
            suspensions.remove(job.jobId());
            idleWarned.remove(job.jobId());
            for (Dependency d : job.spec().dependencies()) {
                Set<String> w = dependents.get(d.jobId());
                if (w != null && w.remove(job.jobId()) && w.isEmpty()) {
                    dependents.remove(d.jobId());
                }
            }
            finished.put(job.jobId(), new FinishedJob(job.tenant(), job.status()));
            scheduler.sync(before, null);
        } else {
            live.put(job.jobId(), job);
            syncIndex(before, job);
        }
        if (job.status().terminal() && !before.status().terminal()) {
            // the jobs waiting for it may enter the order now (their decisions, if any, are separate facts)
            Set<String> waiting = dependents.get(job.jobId());
            if (waiting != null) {
                for (String d : waiting) {
                    QueuedJob w = live.get(d);
                    if (w != null) {
                        syncIndex(w, w);
                    }
                }
            }
        }
    }

    /**
     * The pending index follows the job, except while it waits out a retry's backoff, is suspended, waits for a
     * dependency or a budget holds it (then it is not in it, and charges and blocks nothing).
     */
    private void syncIndex(QueuedJob before, QueuedJob after) {
        QueuedJob in = after != null && (held.containsKey(after.jobId()) || blocked(after) || heldForBudget(after))
                ? null : after;
        if (before != null || in != null) {
            scheduler.sync(before, in);
        }
    }

    /** Jobs whose backoff has run out by {@code now} enter the pending index. */
    private void releaseHeld(Instant now) {
        if (held.isEmpty()) {
            return;
        }
        List<String> due = held.entrySet().stream().filter(e -> !e.getValue().isAfter(now)).map(Map.Entry::getKey)
                .sorted().toList();
        for (String id : due) {
            held.remove(id);
            QueuedJob job = live.get(id);
            if (job != null) {
                syncIndex(null, job);
            }
        }
    }

    /** When the next held job's backoff runs out (the adapter ticks then), or null. */
    public Instant nextRetryAt() {
        return held.values().stream().min(Instant::compareTo).orElse(null);
    }

    /**
     * What the core remembers besides its live jobs (see {@link QueueMemory}): with the facts of the jobs
     * {@link #live} names, replayed after it, it rebuilds this state.
     */
    public QueueMemory memory() {
        return new QueueMemory(clock, tenants, finished, scheduler.usageHistories(),
                capacityReservedFor == null ? null
                        : new QueueMemory.ReservedFor(capacityReservedFor, capacityReservedAttempt));
    }

    /**
     * Restores (a part of) what {@link #memory} gave, into a fresh core, before the facts of the live jobs are
     * replayed: the ended jobs, the tenants, the queues in their order with their usage history, the clock and the
     * capacity reservation. Parts add up; a part's null clock or reservation leaves those as they are.
     */
    public void restoreMemory(QueueMemory m) {
        if (m.clock() != null && m.clock().isAfter(clock)) {
            clock = m.clock();
        }
        tenants.addAll(m.tenants());
        finished.putAll(m.finished());
        scheduler.restoreUsageHistories(m.usage());
        if (m.capacityReservedFor() != null) {
            capacityReservedFor = m.capacityReservedFor().jobId();
            capacityReservedAttempt = m.capacityReservedFor().attempt();
        }
    }

    /**
     * Whether the job is live: not ended, or ended but still holding a reservation. Its facts are then part of the
     * state; those of a job that is not (ended for good, or never queued) no longer change anything.
     */
    public boolean live(String jobId) {
        return live.containsKey(jobId);
    }

    /** Whether the job ended and holds nothing: the core keeps only its tenant and outcome. */
    public boolean ended(String jobId) {
        return finished.containsKey(jobId);
    }

    /** A copy of the whole state. */
    public QueueState state() {
        return new QueueState(new TreeMap<>(live), new TreeMap<>(finished), tenants, scheduler.usage());
    }

    public JobState status(String jobId) {
        QueuedJob job = live.get(jobId);
        if (job != null) {
            return job.status();
        }
        FinishedJob f = finished.get(jobId);
        return f == null ? null : f.status();
    }

    /** GPUs reserved by the tenant's dispatched attempts, over all its queues. */
    public long reservedMilli(String tenant) {
        return live.values().stream().filter(j -> j.tenant().equals(tenant)).mapToLong(QueuedJob::reservedMilli).sum();
    }

    /**
     * Every queue: the configured ones, and (without a configuration file) the implicit queue of every tenant that
     * has had a job or has a configured quota. {@code now} only ages the usage history for the shares.
     */
    public List<QueueView> queues(Instant now) {
        if (config.isImplicit()) {
            SortedSet<String> all = new TreeSet<>(tenants);
            all.addAll(config.implicitQuotas().perTenantMilli().keySet());
            all.forEach(t -> scheduler.queueFor(t, null));
        }
        Map<String, int[]> counts = new HashMap<>();
        for (QueuedJob job : live.values()) {
            String q = scheduler.queueNameOf(job);
            if (q == null) {
                continue;
            }
            int[] c = counts.computeIfAbsent(q, k -> new int[3]);
            if (job.status() == JobState.QUEUED) {
                c[0]++;
                if (job.parked()) {
                    c[1]++;
                }
            } else if (job.status() == JobState.DISPATCHED) {
                c[2]++;
            }
        }
        List<QueueView> views = new ArrayList<>(scheduler.views(now.isAfter(clock) ? now : clock, counts));
        views.sort(java.util.Comparator.comparing(QueueView::name));
        return views;
    }

    /**
     * One queue, or null if there is none of that name. Without a configuration file, {@code create} makes the
     * implicit queue of the tenant of that name exist (a tenant may look at its empty queue).
     */
    public QueueView queue(String name, Instant now, boolean create) {
        if (create && config.isImplicit()) {
            scheduler.queueFor(name, null);
        }
        return queues(now).stream().filter(v -> v.name().equals(name)).findFirst().orElse(null);
    }

    /** The queue's queued jobs (parked ones included) in the policy's queue order. */
    public List<PendingEntry> pending(String queueName) {
        List<QueuedJob> jobs = new ArrayList<>();
        for (QueuedJob job : live.values()) {
            if (job.status() == JobState.QUEUED && queueName.equals(scheduler.queueNameOf(job))) {
                jobs.add(job);
            }
        }
        Map<String, PendingJob> views = new HashMap<>();
        jobs.forEach(j -> views.put(j.jobId(), scheduler.view(j)));
        jobs.sort((a, b) -> policy.queueOrder().compare(views.get(a.jobId()), views.get(b.jobId())));
        return jobs.stream().map(j -> new PendingEntry(j.jobId(), j.tenant(), queueName, j.attempt(), j.gpuMilli(),
                j.submittedAt(), j.parked(), j.lastWait() == null ? null : j.lastWait().reason(),
                j.lastWait() == null ? null : j.lastWait().message(),
                j.lastWait() == null ? null : j.lastWait().quotaWait(),
                j.lastWait() == null ? null : j.lastWait().deferral(), views.get(j.jobId()).level(), j.attained()))
                .toList();
    }
}
