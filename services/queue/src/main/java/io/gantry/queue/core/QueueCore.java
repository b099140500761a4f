package io.gantry.queue.core;

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
    /** The release reason after which the job waits for recovery (JobRequeued or JobRecoveryAbandoned). */
    public static final String NODE_FAILED = "NODE_FAILED";
    /** QuotaReleased reason when placement deferred the attempt. */
    public static final String DEFERRED = "deferred";

    private final Quotas quotas;
    private final DispatchPolicy policy;
    /** Non-terminal jobs, and terminal ones that still hold a reservation. */
    private final Map<String, JobState> live = new HashMap<>();
    private final Map<String, FinishedJob> finished = new HashMap<>();
    private final SortedSet<String> tenants = new TreeSet<>();
    private String lastServed;

    public QueueCore(Quotas quotas, DispatchPolicy policy) {
        this.quotas = Objects.requireNonNull(quotas);
        this.policy = Objects.requireNonNull(policy);
    }

    public List<QueueFact> apply(Input input, Instant now) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(now, "now");
        List<QueueFact> out = new ArrayList<>();
        Set<String> unparking = Set.of();
        if (input instanceof Input.Submitted s) {
            submitted(s, out);
        } else if (input instanceof Input.CancelRequested c) {
            JobState job = known(c.jobId(), c.tenant());
            if (job != null && !job.status().terminal()) {
                int lastDispatched = job.dispatchedThisAttempt() ? job.attempt() : job.attempt() - 1;
                emit(new QueueFact.JobCancelled(job.jobId(), job.tenant(), lastDispatched, c.requestedBy()), out);
            }
        } else if (input instanceof Input.Granted g) {
            known(g.jobId(), g.tenant());
        } else if (input instanceof Input.Deferred d) {
            deferred(d, out);
        } else if (input instanceof Input.RunSucceeded r) {
            JobState job = current(r.jobId(), r.tenant(), r.attempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobSucceeded(job.jobId(), job.tenant(), job.attempt()), out);
            }
        } else if (input instanceof Input.RunFailed r) {
            JobState job = current(r.jobId(), r.tenant(), r.attempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobFailed(job.jobId(), job.tenant(), job.attempt(), r.message()), out);
            }
        } else if (input instanceof Input.Released r) {
            JobState job = known(r.jobId(), r.tenant());
            // any attempt: an old attempt's reservation must end too, or the quota leaks
            if (job != null && job.reservations().containsKey(r.attempt())) {
                emit(new QueueFact.QuotaReleased(job.jobId(), job.tenant(), r.attempt(),
                        job.reservations().get(r.attempt()), r.reason()), out);
            }
            unparking = parkedJobs();
        } else if (input instanceof Input.Requeued r) {
            JobState job = current(r.jobId(), r.tenant(), r.interruptedAttempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobQueued(job.jobId(), job.tenant(), job.attempt() + 1, job.spec(),
                        job.submittedAt(), job.gpus()), out);
            }
        } else if (input instanceof Input.RecoveryAbandoned r) {
            JobState job = current(r.jobId(), r.tenant(), r.interruptedAttempt());
            if (job != null && job.inFlight()) {
                emit(new QueueFact.JobFailed(job.jobId(), job.tenant(), job.attempt(), r.message()), out);
            }
        } else if (input instanceof Input.CapacityChanged) {
            unparking = parkedJobs();
        } else if (!(input instanceof Input.Restored)) {
            throw new IllegalArgumentException("unknown input " + input);
        }
        dispatchCycle(now, unparking, out);
        return List.copyOf(out);
    }

    private void submitted(Input.Submitted s, List<QueueFact> out) {
        if (live.containsKey(s.jobId()) || finished.containsKey(s.jobId())) {
            return; // admission may publish a job twice under the same id
        }
        emit(new QueueFact.JobQueued(s.jobId(), s.tenant(), 1, s.spec(), s.submittedAt(), s.spec().gangGpus()), out);
    }

    private void deferred(Input.Deferred d, List<QueueFact> out) {
        JobState job = known(d.jobId(), d.tenant());
        if (job == null || !job.reservations().containsKey(d.attempt())) {
            return; // already released: a repeated or stale deferral
        }
        boolean park = d.attempt() == job.attempt() && job.status() == JobStatus.DISPATCHED;
        emit(new QueueFact.QuotaReleased(job.jobId(), job.tenant(), d.attempt(), job.reservations().get(d.attempt()),
                DEFERRED), out);
        if (park) {
            emit(new QueueFact.JobWaiting(job.jobId(), job.tenant(), job.attempt(), WaitReason.CAPACITY, d.message()),
                    out);
        }
    }

    /**
     * One cycle: the policy plans over a snapshot, the core keeps what respects the invariants and writes the facts.
     * Jobs unparked by a capacity change that are not dispatched get a non-CAPACITY JobWaiting, so the unpark
     * itself is a fact and survives a restart.
     */
    private void dispatchCycle(Instant now, Set<String> unparking, List<QueueFact> out) {
        QueueSnapshot snapshot = snapshot(now, unparking);
        Map<String, PendingJob> eligible = new HashMap<>();
        snapshot.tenants().values().forEach(t -> t.pending().forEach(p -> eligible.put(p.jobId(), p)));
        DispatchPlan plan = policy.plan(snapshot);
        Map<String, Long> reserved = new HashMap<>();
        snapshot.tenants().values().forEach(t -> reserved.put(t.tenant(), t.reservedGpus()));
        Set<String> dispatched = new HashSet<>();
        for (String jobId : plan.dispatch()) {
            PendingJob p = eligible.get(jobId);
            if (p == null || dispatched.contains(jobId)) {
                continue;
            }
            long used = reserved.get(p.tenant());
            if (used + p.gpus() > quotas.of(p.tenant())) {
                continue;
            }
            reserved.put(p.tenant(), used + p.gpus());
            dispatched.add(jobId);
            JobState job = live.get(jobId);
            emit(new QueueFact.JobDispatched(jobId, job.tenant(), job.attempt(), job.spec(), job.gpus()), out);
        }
        Set<String> explained = new HashSet<>();
        for (DispatchPlan.Verdict v : plan.waits()) {
            if (!eligible.containsKey(v.jobId()) || dispatched.contains(v.jobId()) || v.reason() == WaitReason.CAPACITY
                    || !explained.add(v.jobId())) {
                continue;
            }
            waitIfChanged(live.get(v.jobId()), new JobState.Wait(v.reason(), v.message()), out);
        }
        for (String jobId : new TreeSet<>(unparking)) {
            JobState job = live.get(jobId);
            if (!dispatched.contains(jobId) && job.parked()) {
                waitIfChanged(job, new JobState.Wait(WaitReason.QUOTA,
                        "capacity changed; waiting for its turn in tenant " + job.tenant() + "'s queue"), out);
            }
        }
    }

    private void waitIfChanged(JobState job, JobState.Wait wait, List<QueueFact> out) {
        if (!wait.equals(job.lastWait())) {
            emit(new QueueFact.JobWaiting(job.jobId(), job.tenant(), job.attempt(), wait.reason(), wait.message()),
                    out);
        }
    }

    private QueueSnapshot snapshot(Instant now, Set<String> unparking) {
        Map<String, List<PendingJob>> pending = new TreeMap<>();
        Map<String, Long> reserved = new HashMap<>();
        for (JobState job : live.values()) {
            reserved.merge(job.tenant(), job.reservedGpus(), Long::sum);
            boolean unparks = unparking.contains(job.jobId());
            if (job.status() == JobStatus.QUEUED && (!job.parked() || unparks)) {
                pending.computeIfAbsent(job.tenant(), t -> new ArrayList<>()).add(pendingJob(job, unparks));
            }
        }
        SortedMap<String, TenantQueue> queues = new TreeMap<>();
        pending.forEach((tenant, jobs) -> {
            jobs.sort((a, b) -> a.jobId().compareTo(b.jobId()));
            queues.put(tenant, new TenantQueue(tenant, quotas.of(tenant), reserved.getOrDefault(tenant, 0L), jobs));
        });
        return new QueueSnapshot(now, lastServed, queues);
    }

    private static PendingJob pendingJob(JobState job, boolean unparking) {
        return new PendingJob(job.jobId(), job.tenant(), job.attempt(), job.gpus(), job.submittedAt(),
                job.spec().priority(), unparking);
    }

    private Set<String> parkedJobs() {
        Set<String> parked = new HashSet<>();
        live.values().stream().filter(JobState::parked).forEach(j -> parked.add(j.jobId()));
        return parked;
    }

    /** The live job, after checking the input names its real tenant; null if unknown or finished. */
    private JobState known(String jobId, String tenant) {
        JobState job = live.get(jobId);
        String owner = job != null ? job.tenant() : finished.containsKey(jobId) ? finished.get(jobId).tenant() : null;
        if (owner != null && !owner.equals(tenant)) {
            throw new IllegalArgumentException("tenant: job " + jobId + " belongs to tenant " + owner + ", not "
                    + tenant);
        }
        return job;
    }

    /** The live job if {@code attempt} is its current attempt; events about other attempts are ignored. */
    private JobState current(String jobId, String tenant, int attempt) {
        JobState job = known(jobId, tenant);
        return job != null && job.attempt() == attempt ? job : null;
    }

    private void emit(QueueFact fact, List<QueueFact> out) {
        replay(fact);
        out.add(fact);
    }

    /** Applies a fact to the state. The only mutator; facts about unknown jobs change nothing. */
    public void replay(QueueFact fact) {
        Objects.requireNonNull(fact, "fact");
        if (fact instanceof QueueFact.JobQueued q) {
            JobState job = live.get(q.jobId());
            if (job == null) {
                if (finished.containsKey(q.jobId())) {
                    return;
                }
                live.put(q.jobId(), new JobState(q.jobId(), q.tenant(), q.spec(), q.gpus(), q.submittedAt(),
                        q.attempt(), JobStatus.QUEUED, false, null, new TreeMap<>()));
                tenants.add(q.tenant());
            } else {
                live.put(q.jobId(), job.requeued(q.attempt(), q.spec(), q.submittedAt(), q.gpus()));
            }
            return;
        }
        JobState job = live.get(fact.jobId());
        if (job == null) {
            return;
        }
        if (fact instanceof QueueFact.JobWaiting w) {
            if (w.attempt() == job.attempt() && (job.status() == JobStatus.QUEUED
                    || job.status() == JobStatus.DISPATCHED && w.reason() == WaitReason.CAPACITY)) {
                job = job.waiting(new JobState.Wait(w.reason(), w.message()), JobStatus.QUEUED);
            }
        } else if (fact instanceof QueueFact.JobDispatched d) {
            job = job.dispatched(d.attempt(), d.gpus());
            lastServed = d.tenant();
        } else if (fact instanceof QueueFact.QuotaReleased r) {
            job = job.released(r.attempt());
            if (NODE_FAILED.equals(r.reason()) && r.attempt() == job.attempt()
                    && job.status() == JobStatus.DISPATCHED) {
                job = job.with(JobStatus.INTERRUPTED);
            }
        } else if (fact instanceof QueueFact.JobSucceeded) {
            job = job.with(JobStatus.SUCCEEDED);
        } else if (fact instanceof QueueFact.JobFailed) {
            job = job.with(JobStatus.FAILED);
        } else if (fact instanceof QueueFact.JobCancelled) {
            job = job.with(JobStatus.CANCELLED);
        }
        if (job.status().terminal() && job.reservations().isEmpty()) {
            live.remove(job.jobId());
            finished.put(job.jobId(), new FinishedJob(job.tenant(), job.status()));
        } else {
            live.put(job.jobId(), job);
        }
    }

    /** A copy of the whole state. */
    public QueueState state() {
        return new QueueState(new TreeMap<>(live), new TreeMap<>(finished), tenants, lastServed);
    }

    public JobStatus status(String jobId) {
        JobState job = live.get(jobId);
        if (job != null) {
            return job.status();
        }
        FinishedJob f = finished.get(jobId);
        return f == null ? null : f.status();
    }

    public long reservedGpus(String tenant) {
        return live.values().stream().filter(j -> j.tenant().equals(tenant)).mapToLong(JobState::reservedGpus).sum();
    }

    public int quotaOf(String tenant) {
        return quotas.of(tenant);
    }

    /** Every tenant that ever had a job or has a configured quota, by name. */
    public List<TenantSummary> summaries() {
        SortedSet<String> all = new TreeSet<>(tenants);
        all.addAll(quotas.perTenant().keySet());
        return all.stream().map(this::summary).toList();
    }

    public TenantSummary summary(String tenant) {
        int queued = 0;
        int parked = 0;
        int dispatched = 0;
        long reserved = 0;
        for (JobState job : live.values()) {
            if (!job.tenant().equals(tenant)) {
                continue;
            }
            reserved += job.reservedGpus();
            if (job.parked()) {
                parked++;
            } else if (job.status() == JobStatus.QUEUED) {
                queued++;
            } else if (job.status() == JobStatus.DISPATCHED) {
                dispatched++;
            }
        }
        return new TenantSummary(tenant, quotas.of(tenant), reserved, queued, parked, dispatched);
    }

    /** The tenant's queued jobs (parked ones included) in the policy's queue order. */
    public List<PendingEntry> pending(String tenant) {
        List<JobState> jobs = new ArrayList<>();
        for (JobState job : live.values()) {
            if (job.tenant().equals(tenant) && job.status() == JobStatus.QUEUED) {
                jobs.add(job);
            }
        }
        jobs.sort((a, b) -> policy.queueOrder().compare(pendingJob(a, false), pendingJob(b, false)));
        return jobs.stream().map(j -> new PendingEntry(j.jobId(), j.tenant(), j.attempt(), j.gpus(), j.submittedAt(),
                j.parked(), j.lastWait() == null ? null : j.lastWait().reason(),
                j.lastWait() == null ? null : j.lastWait().message())).toList();
    }
}
