package io.gantry.queue.kafka;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobFailed;
import io.gantry.events.JobQueued;
import io.gantry.events.JobRecoveryAbandoned;
import io.gantry.events.JobRequeued;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.JobWaiting;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeRecovered;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QuotaReleased;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.TaskSpec;
import io.gantry.events.FreeGpus;
import io.gantry.events.JobPreempted;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.CapacityReservationCancelled;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.model.GpuShares;
import io.gantry.queue.core.FailureReason;
import io.gantry.queue.core.FreeCapacity;
import io.gantry.queue.core.Input;
import io.gantry.queue.core.DeferralCause;
import io.gantry.queue.core.Dependency;
import io.gantry.queue.core.PreemptionReason;
import io.gantry.queue.core.JobSpec;
import io.gantry.queue.core.QueueFact;
import io.gantry.queue.core.QuotaWait;
import io.gantry.queue.core.RetryPolicy;
import io.gantry.queue.core.TaskGroup;
import io.gantry.queue.core.WaitReason;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Wire records to core types and back. No decisions: everything it cannot map it rejects by throwing. */
public final class WireMapping {
    private WireMapping() {
    }

    /** The core input for an input record, or null for records the queue does not act on (heartbeats, run starts). */
    public static Input toInput(String key, Object value) {
        if (value instanceof io.gantry.events.CheckpointEvent e) {
            requireKey(key, e.getJobId());
            if (e.getPayload() instanceof io.gantry.events.CheckpointCommitted c) {
                return new Input.CheckpointCommitted(e.getJobId(), c.getTenant(), c.getAttempt(), c.getStep(),
                        c.getPath(), c.getCommittedAt());
            }
            throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
        }
        if (value instanceof io.gantry.events.SuspensionEvent e) {
            requireKey(key, e.getJobId());
            if (e.getPayload() instanceof io.gantry.events.JobSuspendRequested r) {
                return new Input.SuspensionRequested(e.getJobId(), r.getTenant(), true, r.getRequestedBy());
            }
            if (e.getPayload() instanceof io.gantry.events.JobResumeRequested r) {
                return new Input.SuspensionRequested(e.getJobId(), r.getTenant(), false, r.getRequestedBy());
            }
            throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
        }
        if (value instanceof io.gantry.events.BudgetEvent e) {
            requireKey(key, e.getTenant());
            if (!(e.getPayload() instanceof io.gantry.events.BudgetStatusChanged b)) {
                throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
            }
            if (!b.getTenant().equals(e.getTenant())) {
                throw new IllegalArgumentException("tenant: payload names " + b.getTenant() + ", envelope "
                        + e.getTenant());
            }
            return new Input.BudgetChanged(b.getTenant(), b.getQueue(), java.time.YearMonth.parse(b.getMonth()),
                    b.getPeriodFrom(), b.getPeriodTo(), b.getState() == io.gantry.events.BudgetState.EXHAUSTED
                    && b.getAction() == io.gantry.events.BudgetAction.HOLD, new java.math.BigDecimal(b.getLimit()),
                    new java.math.BigDecimal(b.getSpent()), b.getCurrency());
        }
        if (value instanceof io.gantry.events.UtilisationEvent e) {
            requireKey(key, e.getJobId());
            if (e.getPayload() instanceof io.gantry.events.RunUtilisationSampled u) {
                return new Input.UtilisationSampled(e.getJobId(), u.getTenant(), u.getAttempt(), u.getWindowTo(),
                        u.getIdleSince(), u.getHeldGpuMilli(), u.getUsedGpuMilli());
            }
            throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
        }
        if (value instanceof AdmissionJobEvent e) {
            requireKey(key, e.getJobId());
            if (e.getPayload() instanceof JobSubmitted s) {
                return new Input.Submitted(e.getJobId(), s.getTenant(), toSpec(s.getSpec()), e.getOccurredAt());
            }
            if (e.getPayload() instanceof JobCancelRequested c) {
                return new Input.CancelRequested(e.getJobId(), c.getTenant(), c.getRequestedBy());
            }
        } else if (value instanceof AllocationEvent e) {
            requireKey(key, e.getJobId());
            Object p = e.getPayload();
            if (p instanceof AllocationGranted g) {
                return new Input.Granted(e.getJobId(), g.getTenant(), g.getAttempt());
            }
            if (p instanceof PlacementDeferred d) {
                return new Input.Deferred(e.getJobId(), d.getTenant(), d.getAttempt(),
                        io.gantry.queue.core.DeferralCause.valueOf(d.getReason().name()),
                        d.getMessage());
            }
            if (p instanceof JobRunSucceeded s) {
                return new Input.RunSucceeded(e.getJobId(), s.getTenant(), s.getAttempt());
            }
            if (p instanceof JobRunFailed f) {
                return new Input.RunFailed(e.getJobId(), f.getTenant(), f.getAttempt(), f.getMessage(),
                        FailureReason.valueOf(f.getReason().name()));
            }
            if (p instanceof AllocationReleased r) {
                return new Input.Released(e.getJobId(), r.getTenant(), r.getAttempt(),
                        io.gantry.queue.core.ReleaseCause.valueOf(r.getReason().name()),
                        free(r.getFreeCapacity()), r.getDeferredChecks().stream()
                        .map(c -> new Input.DeferredCheck(c.getJobId(), c.getAttempt(), c.getFits(),
                                place(c.getOnlyPlace()))).toList());
            }
            if (p instanceof JobRunStarted) {
                return null;
            }
        } else if (value instanceof RecoveryJobEvent e) {
            requireKey(key, e.getJobId());
            if (e.getPayload() instanceof JobRequeued r) {
                return new Input.Requeued(e.getJobId(), r.getTenant(), r.getInterruptedAttempt(), r.getMessage(),
                        r.getResumeFrom());
            }
            if (e.getPayload() instanceof JobRecoveryAbandoned a) {
                return new Input.RecoveryAbandoned(e.getJobId(), a.getTenant(), a.getInterruptedAttempt(),
                        a.getMessage());
            }
        } else if (value instanceof NodeEvent e) {
            if (e.getPayload() instanceof NodeRegistered) {
                return new Input.CapacityChanged("node " + e.getNodeId() + " registered");
            }
            return null;
        } else if (value instanceof NodeHealthEvent e) {
            if (e.getPayload() instanceof NodeRecovered) {
                return new Input.CapacityChanged("node " + e.getNodeId() + " recovered");
            }
            return null;
        }
        throw new IllegalArgumentException("payload: unexpected " + describe(value));
    }

    /** Null when placement named no only place (or is an older writer). */
    private static Input.Place place(io.gantry.events.PlaceRoom r) {
        return r == null ? null : new Input.Place(r.getNodeId().toString(), r.getFreeGpus(), r.getPartFreeMilli(),
                r.getFreeCpuMillis(), r.getFreeMemoryMiB());
    }

    /** Null when placement did not report it (an older writer): the queue then wakes every parked job. */
    public static FreeCapacity free(java.util.List<FreeGpus> reported) {
        if (reported == null || reported.isEmpty()) {
            return null;
        }
        java.util.Map<String, FreeCapacity.Model> byModel = new java.util.TreeMap<>();
        for (FreeGpus f : reported) {
            byModel.put(f.getGpuModel(), new FreeCapacity.Model(f.getFreeGpus(), f.getLargestFreeOnNode(),
                    f.getNodesWithFree(), f.getLargestFreeMilli(), f.getLargestFreeCpuMillis(),
                    f.getLargestFreeMemoryMiB()));
        }
        return new FreeCapacity(byModel);
    }

    /** What the queue decides on of a submitted spec (the rest is forwarded unchanged, see {@link #forward}). */
    public static JobSpec toSpec(io.gantry.events.JobSpec s) {
        if (s == null || s.getTasks() == null) {
            throw new IllegalArgumentException("spec.tasks is missing");
        }
        return new JobSpec(s.getName(), s.getPriority(), s.getTimeLimitSeconds(), s.getTasks().stream()
                .map(t -> new TaskGroup(t.getName(), t.getReplicas(), t.getGpus(), t.getGpuModel(), t.getCpuMillis(),
                        t.getMemoryMiB(), t.getGpuModels(), t.getGpuTier(), t.getGpuMilli(), t.getMigProfile()))
                .toList(), s.getQueue(), s.getPriorityClass(), s.getRetry() == null ? null
                : new RetryPolicy(s.getRetry().getMaxRetries(), s.getRetry().getBackoffSeconds()),
                s.getDependencies() == null ? java.util.List.of() : s.getDependencies().stream()
                        .map(d -> new Dependency(d.getJobId(), Dependency.Condition.valueOf(d.getCondition().name())))
                        .toList(), Boolean.TRUE.equals(s.getSuspend()), s.getPool(),
                        !Boolean.FALSE.equals(s.getInteractive()));
    }

    /**
     * The spec as it was submitted, with what the queue decided: each task group's GPU model (the flavour its quota
     * was taken on, when the job named none) and the models it still accepts. Everything else passes unchanged.
     */
    public static io.gantry.events.JobSpec forward(io.gantry.events.JobSpec submitted, JobSpec decided) {
        if (submitted == null) {
            throw new IllegalStateException("no submitted spec for job " + decided.name());
        }
        java.util.List<TaskSpec> tasks = new java.util.ArrayList<>(submitted.getTasks().size());
        for (int i = 0; i < submitted.getTasks().size(); i++) {
            TaskGroup t = decided.tasks().get(i);
            tasks.add(TaskSpec.newBuilder(submitted.getTasks().get(i)).setGpuModel(t.gpuModel())
                    .setGpuModels(t.gpuModels()).build());
        }
        return io.gantry.events.JobSpec.newBuilder(submitted).setTasks(tasks).build();
    }

    /**
     * @param submitted the job's spec as submitted ({@code JobQueued} and {@code JobDispatched} forward it with the
     *                  queue's decisions)
     */
    public static QueueJobEvent toEnvelope(QueueFact fact, String eventId, Instant occurredAt,
                                    io.gantry.events.JobSpec submitted) {
        Object payload;
        if (fact instanceof QueueFact.JobQueued q) {
            payload = new JobQueued(q.tenant(), q.attempt(), forward(submitted, q.spec()), q.submittedAt(),
                    wholeGpus(q.gpuMilli()), q.requeuedBecause(), q.resumeFrom(), q.gpuMilli(), q.failureRetries(),
                    q.notBefore());
        } else if (fact instanceof QueueFact.JobWaiting w) {
            payload = new JobWaiting(w.tenant(), w.attempt(), io.gantry.events.WaitReason.valueOf(w.reason().name()),
                    w.message(), w.quotaWait() == null ? null : io.gantry.events.QuotaWait.valueOf(w.quotaWait().name()),
                    w.deferral() == null ? null : io.gantry.events.DeferralReason.valueOf(w.deferral().name()));
        } else if (fact instanceof QueueFact.JobDispatched d) {
            payload = new JobDispatched(d.tenant(), d.attempt(), forward(submitted, d.spec()),
                    wholeGpus(d.gpuMilli()), d.resumeFrom(), d.gpuMilli(), d.flavour(), d.pool());
        } else if (fact instanceof QueueFact.QuotaReleased r) {
            payload = new QuotaReleased(r.tenant(), r.attempt(), wholeGpus(r.gpuMilli()), r.reason(), r.gpuMilli());
        } else if (fact instanceof QueueFact.JobSucceeded s) {
            payload = new JobSucceeded(s.tenant(), s.attempt());
        } else if (fact instanceof QueueFact.JobFailed f) {
            payload = new JobFailed(f.tenant(), f.attempt(), f.message(),
                    io.gantry.events.FailureReason.valueOf(f.reason().name()));
        } else if (fact instanceof QueueFact.JobCancelled c) {
            payload = new JobCancelled(c.tenant(), c.attempt(), c.requestedBy(), c.message());
        } else {
            throw new IllegalArgumentException("unknown fact " + fact);
        }
        return new QueueJobEvent(eventId, fact.jobId(), occurredAt, payload);
    }

    /** The wire's whole-GPU figure: thousandths rounded up (the exact amount travels in {@code gpuMilli}). */
    static int wholeGpus(long milli) {
        return Math.toIntExact((milli + GpuShares.WHOLE - 1) / GpuShares.WHOLE);
    }

    /**
     * The thousandths a record states; a record written before quota counted shares as shares has none, and was
     * charged {@code gpus} whole GPUs (a share as one), which is what its release gives back.
     */
    static long milli(Long gpuMilli, int gpus) {
        return gpuMilli != null ? gpuMilli : (long) gpus * GpuShares.WHOLE;
    }

    public static QueuePreemptionEvent toPreemptionEnvelope(QueueFact.JobPreempted p, String eventId, Instant occurredAt) {
        return new QueuePreemptionEvent(eventId, p.jobId(), occurredAt, new JobPreempted(p.tenant(), p.attempt(),
                io.gantry.events.PreemptionReason.valueOf(p.reason().name()), p.preemptorJobId(), p.graceSeconds(),
                p.message()));
    }

    /** An idle-reclamation fact on {@code queue.idle-events}. */
    public static io.gantry.events.IdleEvent toIdleEnvelope(QueueFact fact, String eventId, Instant occurredAt) {
        Object payload;
        if (fact instanceof QueueFact.JobIdleWarned w) {
            payload = new io.gantry.events.JobIdleWarned(w.tenant(), w.attempt(), w.idleSince(),
                    w.idleTimeout().toSeconds(), w.stopAt(), w.message());
        } else if (fact instanceof QueueFact.JobIdleCleared c) {
            payload = new io.gantry.events.JobIdleCleared(c.tenant(), c.attempt(), c.message());
        } else {
            throw new IllegalArgumentException("not an idle fact: " + fact);
        }
        return new io.gantry.events.IdleEvent(eventId, fact.jobId(), occurredAt, payload);
    }

    public static QueueFact fromIdleEnvelope(io.gantry.events.IdleEvent e) {
        if (e.getPayload() instanceof io.gantry.events.JobIdleWarned w) {
            return new QueueFact.JobIdleWarned(e.getJobId(), w.getTenant(), w.getAttempt(), w.getIdleSince(),
                    java.time.Duration.ofSeconds(w.getIdleTimeoutSeconds()), w.getStopAt(), w.getMessage());
        }
        if (e.getPayload() instanceof io.gantry.events.JobIdleCleared c) {
            return new QueueFact.JobIdleCleared(e.getJobId(), c.getTenant(), c.getAttempt(), c.getMessage());
        }
        throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
    }

    public static QueueReservationEvent toReservationEnvelope(QueueFact fact, String eventId, Instant occurredAt,
                                                       io.gantry.events.JobSpec submitted) {
        Object payload;
        if (fact instanceof QueueFact.CapacityReservationRequested r) {
            payload = new CapacityReservationRequested(r.tenant(), r.attempt(), forward(submitted, r.spec()),
                    r.message(), r.maxDrainSeconds());
        } else if (fact instanceof QueueFact.CapacityReservationCancelled c) {
            payload = new CapacityReservationCancelled(c.tenant(), c.attempt(), c.reason());
        } else {
            throw new IllegalArgumentException("not a reservation fact: " + fact);
        }
        return new QueueReservationEvent(eventId, fact.jobId(), occurredAt, payload);
    }

    public static QueueFact fromReservationEnvelope(QueueReservationEvent e) {
        if (e.getPayload() instanceof CapacityReservationRequested r) {
            return new QueueFact.CapacityReservationRequested(e.getJobId(), r.getTenant(), r.getAttempt(),
                    toSpec(r.getSpec()), r.getMessage(), r.getMaxDrainSeconds());
        }
        if (e.getPayload() instanceof CapacityReservationCancelled c) {
            return new QueueFact.CapacityReservationCancelled(e.getJobId(), c.getTenant(), c.getAttempt(),
                    c.getReason());
        }
        throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
    }

    public static QueueFact fromPreemptionEnvelope(QueuePreemptionEvent e) {
        if (!(e.getPayload() instanceof JobPreempted p)) {
            throw new IllegalArgumentException("payload: unexpected " + describe(e.getPayload()));
        }
        return new QueueFact.JobPreempted(e.getJobId(), p.getTenant(), p.getAttempt(),
                PreemptionReason.valueOf(p.getReason().name()), p.getPreemptorJobId(), p.getGraceSeconds(),
                p.getMessage());
    }

    public static QueueFact fromEnvelope(QueueJobEvent e) {
        String id = e.getJobId();
        Object p = e.getPayload();
        if (p instanceof JobQueued q) {
            return new QueueFact.JobQueued(id, q.getTenant(), q.getAttempt(), toSpec(q.getSpec()), q.getSubmittedAt(),
                    milli(q.getGpuMilli(), q.getGpus()), q.getRequeuedBecause(), q.getResumeFrom(),
                    q.getFailureRetries(), q.getNotBefore());
        }
        if (p instanceof JobWaiting w) {
            return new QueueFact.JobWaiting(id, w.getTenant(), w.getAttempt(), WaitReason.valueOf(w.getReason().name()),
                    w.getMessage(), w.getQuotaWait() == null ? null : QuotaWait.valueOf(w.getQuotaWait().name()),
                    w.getDeferral() == null ? null : DeferralCause.valueOf(w.getDeferral().name()));
        }
        if (p instanceof JobDispatched d) {
            return new QueueFact.JobDispatched(id, d.getTenant(), d.getAttempt(), toSpec(d.getSpec()),
                    milli(d.getGpuMilli(), d.getGpus()), d.getResumeFrom(), d.getFlavour(), d.getPool());
        }
        if (p instanceof QuotaReleased r) {
            return new QueueFact.QuotaReleased(id, r.getTenant(), r.getAttempt(), milli(r.getGpuMilli(), r.getGpus()),
                    r.getReason());
        }
        if (p instanceof JobSucceeded s) {
            return new QueueFact.JobSucceeded(id, s.getTenant(), s.getAttempt());
        }
        if (p instanceof JobFailed f) {
            return new QueueFact.JobFailed(id, f.getTenant(), f.getAttempt(), f.getMessage(),
                    FailureReason.valueOf(f.getReason().name()));
        }
        if (p instanceof JobCancelled c) {
            return new QueueFact.JobCancelled(id, c.getTenant(), c.getAttempt(), c.getRequestedBy(), c.getMessage());
        }
        throw new IllegalArgumentException("payload: unexpected " + describe(p));
    }

    private static void requireKey(String key, String jobId) {
        if (key != null && !key.equals(jobId)) {
            throw new IllegalArgumentException("key: record key " + key + " differs from jobId " + jobId);
        }
    }

    private static String describe(Object o) {
        return o == null ? "null" : o.getClass().getSimpleName();
    }

    // ---------------------------------------------------------------- the queue's memory, in snapshots

    /**
     * The memory as snapshot entries: the first part with the clock, tenants, queues and reservation, every part
     * with up to {@code endedPerPart} of the ended jobs.
     */
    static List<io.gantry.events.QueueMemoryPart> toMemoryParts(io.gantry.queue.core.QueueMemory m, int endedPerPart) {
        List<io.gantry.events.QueueUsageHistory> queues = new ArrayList<>();
        for (io.gantry.queue.core.QueueMemory.QueueUsage u : m.usage()) {
            queues.add(new io.gantry.events.QueueUsageHistory(u.tenant(), u.queue(), new java.util.HashMap<>(u.history()),
                    u.atMillis() == Long.MIN_VALUE ? null : Instant.ofEpochMilli(u.atMillis())));
        }
        List<io.gantry.events.QueueMemoryPart> parts = new ArrayList<>();
        List<io.gantry.events.EndedJob> ended = new ArrayList<>();
        java.util.Iterator<Map.Entry<String, io.gantry.queue.core.FinishedJob>> it = m.finished().entrySet().iterator();
        do {
            ended = new ArrayList<>();
            while (it.hasNext() && ended.size() < endedPerPart) {
                Map.Entry<String, io.gantry.queue.core.FinishedJob> e = it.next();
                ended.add(new io.gantry.events.EndedJob(e.getKey(), e.getValue().tenant(),
                        io.gantry.events.JobOutcome.valueOf(e.getValue().status().name())));
            }
            boolean first = parts.isEmpty();
            io.gantry.queue.core.QueueMemory.ReservedFor r = m.capacityReservedFor();
            parts.add(io.gantry.events.QueueMemoryPart.newBuilder()
                    .setClock(first ? m.clock() : null)
                    .setTenants(first ? new ArrayList<>(m.tenants()) : List.of())
                    .setQueues(first ? queues : List.of())
                    .setCapacityReservedFor(first && r != null
                            ? new io.gantry.events.ReservedAttempt(r.jobId(), r.attempt()) : null)
                    .setEnded(ended).build());
        } while (it.hasNext());
        return parts;
    }

    /** A memory part as the core restores it. */
    static io.gantry.queue.core.QueueMemory fromMemoryPart(io.gantry.events.QueueMemoryPart p) {
        Map<String, io.gantry.queue.core.FinishedJob> finished = new java.util.HashMap<>(p.getEnded().size() * 2);
        for (io.gantry.events.EndedJob e : p.getEnded()) {
            finished.put(e.getJobId(), new io.gantry.queue.core.FinishedJob(e.getTenant(),
                    io.gantry.queue.core.JobState.valueOf(e.getOutcome().name())));
        }
        List<io.gantry.queue.core.QueueMemory.QueueUsage> usage = new ArrayList<>();
        for (io.gantry.events.QueueUsageHistory u : p.getQueues()) {
            usage.add(new io.gantry.queue.core.QueueMemory.QueueUsage(u.getTenant(), u.getQueue(), u.getHistory(),
                    u.getAt() == null ? Long.MIN_VALUE : u.getAt().toEpochMilli()));
        }
        io.gantry.events.ReservedAttempt r = p.getCapacityReservedFor();
        return new io.gantry.queue.core.QueueMemory(p.getClock(), new java.util.TreeSet<>(p.getTenants()), finished,
                usage, r == null ? null : new io.gantry.queue.core.QueueMemory.ReservedFor(r.getJobId(), r.getAttempt()));
    }
}
