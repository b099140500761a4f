package io.gantry.admission.kafka;

import io.gantry.admission.core.AdmissionFact;
import io.gantry.admission.core.AdmissionFact.Kind;
import io.gantry.admission.core.JobSpec;
import io.gantry.admission.core.Placement;
import io.gantry.admission.core.TaskSpec;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuDevice;
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
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementConfigApplied;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.admission.core.SchedulingCatalog;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QuotaReleased;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TopologyConstraint;
import io.gantry.events.TopologyLevel;

import java.time.Instant;
import java.util.List;

/** Wire records to core types and back. No decisions: a payload this code does not know is an error. */
public final class WireMapping {
    private WireMapping() {
    }

    public static io.gantry.events.JobSpec toAvro(JobSpec spec) {
        return io.gantry.events.JobSpec.newBuilder()
                .setName(spec.name())
                .setPriority(spec.priority())
                .setTimeLimitSeconds(spec.timeLimitSeconds())
                .setTasks(spec.tasks().stream().map(t -> io.gantry.events.TaskSpec.newBuilder()
                        .setName(t.name())
                        .setReplicas(t.replicas())
                        .setCommand(t.command())
                        .setGpus(t.gpus())
                        .setGpuModel(t.gpuModel())
                        .setCpuMillis(t.cpuMillis())
                        .setMemoryMiB(t.memoryMiB())
                        .setRunSeconds(t.runSeconds())
                        .setGpuModels(t.gpuModels())
                        .setGpuTier(t.gpuTier())
                        .setGpuMilli(t.gpuMilli())
                        .setGpuMemoryMiB(t.gpuMemoryMiB())
                        .setMigProfile(t.migProfile())
                        .setEnv(t.env())
                        .setWorkingDir(t.workingDir())
                        .setImage(t.image())
                        .setMounts(t.mounts().stream().map(m -> new io.gantry.events.TaskMount(m.mountPath(),
                                m.hostPath(), m.claim(), m.readOnly())).toList())
                        .build()).toList())
                .setSuccessPolicy(spec.successPolicy() == null ? null
                        : new io.gantry.events.SuccessPolicy(spec.successPolicy().leader()))
                .setRetry(spec.retry() == null ? null
                        : new io.gantry.events.RetryPolicy(spec.retry().maxRetries(), spec.retry().backoffSeconds()))
                .setDependencies(spec.dependencies().stream().map(d -> new io.gantry.events.JobDependency(d.jobId(),
                        io.gantry.events.DependencyCondition.valueOf(condition(d.condition())))).toList())
                .setSuspend(spec.suspend())
                .setInteractive(spec.interactive())
                .setQueue(spec.queue())
                .setPriorityClass(spec.priorityClass())
                .setPlacementPolicy(spec.placementPolicy())
                .setPool(spec.pool())
                .setCheckpoint(spec.checkpoint() == null ? null : new io.gantry.events.CheckpointPolicy(
                        spec.checkpoint().dir(), spec.checkpoint().intervalSeconds()))
                .setTopology(spec.topology() == null ? null : new TopologyConstraint(
                        TopologyLevel.valueOf(spec.topology().required()),
                        TopologyLevel.valueOf(spec.topology().preferred())))
                .build();
    }

    public static JobSpec fromAvro(io.gantry.events.JobSpec spec) {
        TopologyConstraint topology = spec.getTopology();
        return new JobSpec(spec.getName(), spec.getPriority(), spec.getTimeLimitSeconds(),
                spec.getTasks().stream().map(t -> new TaskSpec(t.getName(), t.getReplicas(), t.getCommand(),
                        t.getGpus(), t.getGpuModel(), t.getCpuMillis(), t.getMemoryMiB(), t.getRunSeconds(),
                        t.getGpuModels(), t.getGpuTier(), t.getGpuMilli(), t.getGpuMemoryMiB(), t.getMigProfile(),
                        t.getEnv(), t.getWorkingDir(), t.getImage(), t.getMounts() == null ? List.of()
                        : t.getMounts().stream().map(m -> new TaskSpec.Mount(m.getMountPath(), m.getHostPath(),
                                m.getClaim(), m.getReadOnly())).toList()))
                        .toList(), spec.getQueue(), spec.getPriorityClass(), topology == null ? null
                : new JobSpec.Topology(topology.getRequired().name(), topology.getPreferred().name()),
                spec.getPlacementPolicy(), spec.getCheckpoint() == null ? null
                : new JobSpec.Checkpoint(spec.getCheckpoint().getDir(), spec.getCheckpoint().getIntervalSeconds()),
                spec.getSuccessPolicy() == null ? null : new JobSpec.SuccessPolicy(spec.getSuccessPolicy().getLeader()),
                spec.getRetry() == null ? null
                : new JobSpec.Retry(spec.getRetry().getMaxRetries(), spec.getRetry().getBackoffSeconds()),
                spec.getDependencies() == null ? List.of() : spec.getDependencies().stream().map(d ->
                        new JobSpec.Dependency(d.getJobId(), d.getCondition().name().replace("_", "")
                                .toLowerCase(java.util.Locale.ROOT))).toList(),
                Boolean.TRUE.equals(spec.getSuspend()), spec.getPool(), !Boolean.FALSE.equals(spec.getInteractive()));
    }

    /** {@code afternotok} → {@code AFTER_NOT_OK}: the wire enum's symbol for a condition as job files write it. */
    private static String condition(String jobFileWord) {
        return switch (jobFileWord) {
            case "afterok" -> "AFTER_OK";
            case "afterany" -> "AFTER_ANY";
            case "afternotok" -> "AFTER_NOT_OK";
            default -> throw new IllegalArgumentException("unknown dependency condition " + jobFileWord);
        };
    }

    /** A suspend or resume request, into the job's history. */
    public static JobEvent fromSuspension(io.gantry.events.SuspensionEvent e, String source) {
        String id = e.getEventId();
        Instant at = e.getOccurredAt();
        if (e.getPayload() instanceof io.gantry.events.JobSuspendRequested p) {
            return new JobEvent(e.getJobId(), p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_SUSPEND_REQUESTED, null)
                    .withMessage("requested by " + p.getRequestedBy()), null, null, source);
        }
        if (e.getPayload() instanceof io.gantry.events.JobResumeRequested p) {
            return new JobEvent(e.getJobId(), p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_RESUME_REQUESTED, null)
                    .withMessage("requested by " + p.getRequestedBy()), null, null, source);
        }
        throw unknown(e.getPayload());
    }

    /**
     * The catalog after a queue configuration was applied. An implicit configuration gives every tenant one queue
     * named after it; an explicit one lists its queues; one written before events carried the list leaves the
     * queues unknown (admission then does not judge them).
     */
    public static SchedulingCatalog withQueueConfig(SchedulingCatalog catalog, QueueConfigEvent event) {
        if (!(event.getPayload() instanceof QueueConfigApplied applied)) {
            return catalog;
        }
        java.util.Set<String> classes = applied.getPriorityClasses() == null ? null
                : new java.util.HashSet<>(applied.getPriorityClasses());
        if ("implicit".equals(applied.getSource())) {
            return new SchedulingCatalog(null, classes, catalog.tiers(), true, catalog.pools());
        }
        if (applied.getQueues() == null) {
            return new SchedulingCatalog(null, classes, catalog.tiers(), false, catalog.pools());
        }
        java.util.Map<String, String> queues = new java.util.HashMap<>();
        applied.getQueues().forEach(q -> queues.put(q.getName(), q.getTenant()));
        return catalog.withQueues(queues, classes);
    }

    public static SchedulingCatalog withPlacementConfig(SchedulingCatalog catalog, PlacementConfigEvent event) {
        if (!(event.getPayload() instanceof PlacementConfigApplied applied)) {
            return catalog;
        }
        java.util.Map<String, List<String>> tiers = new java.util.HashMap<>();
        applied.getTiers().forEach((tier, models) -> tiers.put(tier, List.copyOf(models)));
        return catalog.withTiers(tiers).withPools(applied.getPools() == null ? java.util.Set.of()
                : applied.getPools().keySet());
    }

    /** The model of each GPU of a registered node, one entry per device. */
    public static List<String> gpuModels(NodeRegistered node) {
        return node.getGpus().stream().map(GpuDevice::getModel).toList();
    }

    /** The MIG profiles the node's GPUs can host, by model; null when a GPU's registration does not say. */
    public static java.util.Map<String, List<String>> migProfiles(NodeRegistered node) {
        java.util.Map<String, List<String>> out = new java.util.TreeMap<>();
        for (GpuDevice g : node.getGpus()) {
            if (g.getMigProfiles() == null) {
                return null;
            }
            List<String> offered = out.computeIfAbsent(g.getModel(), m -> new java.util.ArrayList<>());
            g.getMigProfiles().forEach(p -> {
                if (!offered.contains(p)) {
                    offered.add(p);
                }
            });
        }
        return out;
    }

    /** The CPU of the node's largest NUMA socket (the whole node's when it registers none). */
    public static long socketCpuMillis(NodeRegistered node) {
        return node.getNumaCpuMillis().isEmpty() ? node.getCpuMillis()
                : node.getNumaCpuMillis().stream().mapToLong(Integer::longValue).max().orElse(0);
    }

    /** The memory of the node's largest NUMA socket (the whole node's where memory is not registered per socket). */
    public static long socketMemoryMiB(NodeRegistered node) {
        return node.getNumaMemoryMiB().isEmpty() ? node.getMemoryMiB()
                : node.getNumaMemoryMiB().stream().mapToLong(Long::longValue).max().orElse(0);
    }

    public static JobEvent fromAdmission(AdmissionJobEvent e, String source) {
        String id = e.getEventId();
        Instant at = e.getOccurredAt();
        if (e.getPayload() instanceof JobSubmitted p) {
            return new JobEvent(e.getJobId(), p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_SUBMITTED, null),
                    fromAvro(p.getSpec()), at, source);
        }
        if (e.getPayload() instanceof JobCancelRequested p) {
            return new JobEvent(e.getJobId(), p.getTenant(),
                    AdmissionFact.of(id, at, Kind.JOB_CANCEL_REQUESTED, null).withMessage("requested by " + p.getRequestedBy()),
                    null, null, source);
        }
        throw unknown(e.getPayload());
    }

    public static JobEvent fromQueue(QueueJobEvent e, String source) {
        String id = e.getEventId();
        Instant at = e.getOccurredAt();
        String job = e.getJobId();
        Object payload = e.getPayload();
        if (payload instanceof JobQueued p) {
            String again = p.getRequeuedBecause() == null ? "" : "; queued again: " + p.getRequeuedBecause();
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_QUEUED, p.getAttempt())
                    .withMessage(p.getGpus() + " GPUs" + again), fromAvro(p.getSpec()), p.getSubmittedAt(), source);
        }
        if (payload instanceof JobWaiting p) {
            Enum<?> cause = p.getQuotaWait() != null ? p.getQuotaWait() : p.getDeferral();
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_WAITING, p.getAttempt())
                    .withReason(p.getReason().name()).withMessage(p.getMessage())
                    .withCause(cause == null ? null : cause.name()), null, null, source);
        }
        if (payload instanceof JobDispatched p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_DISPATCHED, p.getAttempt())
                    .withMessage(p.getGpus() + " GPUs"), fromAvro(p.getSpec()), null, source);
        }
        if (payload instanceof QuotaReleased p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.QUOTA_RELEASED, p.getAttempt())
                    .withMessage(p.getGpus() + " GPUs: " + p.getReason()), null, null, source);
        }
        if (payload instanceof JobSucceeded p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_SUCCEEDED, p.getAttempt()),
                    null, null, source);
        }
        if (payload instanceof JobFailed p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_FAILED, p.getAttempt())
                    .withReason(p.getReason().name()).withMessage(p.getMessage()), null, null, source);
        }
        if (payload instanceof JobCancelled p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_CANCELLED, p.getAttempt())
                    .withMessage(p.getMessage() != null ? p.getMessage() : "requested by " + p.getRequestedBy()),
                    null, null, source);
        }
        throw unknown(payload);
    }

    public static JobEvent fromPlacement(AllocationEvent e, String source) {
        String id = e.getEventId();
        Instant at = e.getOccurredAt();
        String job = e.getJobId();
        Object payload = e.getPayload();
        if (payload instanceof AllocationGranted p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.ALLOCATION_GRANTED, p.getAttempt())
                    .withPlacements(p.getPlacements().stream().map(WireMapping::placement).toList())
                    .withReason(p.getPool()),
                    null, null, source);
        }
        if (payload instanceof PlacementDeferred p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.PLACEMENT_DEFERRED, p.getAttempt())
                    .withReason(p.getReason().name()).withMessage(p.getMessage()), null, null, source);
        }
        if (payload instanceof JobRunStarted p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_RUN_STARTED, p.getAttempt())
                    .withMessage("allocation " + p.getAllocationId()), null, null, source);
        }
        if (payload instanceof JobRunSucceeded p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_RUN_SUCCEEDED, p.getAttempt()),
                    null, null, source);
        }
        if (payload instanceof JobRunFailed p) {
            String exit = p.getExitCode() == null ? "" : " (exit code " + p.getExitCode() + ")";
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.JOB_RUN_FAILED, p.getAttempt())
                    .withReason(p.getReason().name()).withMessage(p.getMessage() + exit), null, null, source);
        }
        if (payload instanceof AllocationReleased p) {
            return new JobEvent(job, p.getTenant(), AdmissionFact.of(id, at, Kind.ALLOCATION_RELEASED, p.getAttempt())
                    .withReason(p.getReason().name()), null, null, source);
        }
        throw unknown(payload);
    }

    public static JobEvent fromRecovery(RecoveryJobEvent e, String source) {
        String id = e.getEventId();
        Instant at = e.getOccurredAt();
        Object payload = e.getPayload();
        if (payload instanceof JobRequeued p) {
            return new JobEvent(e.getJobId(), p.getTenant(),
                    AdmissionFact.of(id, at, Kind.JOB_REQUEUED, p.getInterruptedAttempt()).withMessage(p.getMessage()),
                    null, null, source);
        }
        if (payload instanceof JobRecoveryAbandoned p) {
            return new JobEvent(e.getJobId(), p.getTenant(),
                    AdmissionFact.of(id, at, Kind.JOB_RECOVERY_ABANDONED, p.getInterruptedAttempt())
                            .withMessage(p.getMessage()), null, null, source);
        }
        throw unknown(payload);
    }

    /** A preemption notice: placement asked the run to stop and kills it at the deadline. */
    public static JobEvent fromStop(io.gantry.events.StopEvent e, String source) {
        if (e.getPayload() instanceof io.gantry.events.RunStopRequested p) {
            return new JobEvent(e.getJobId(), p.getTenant(),
                    AdmissionFact.of(e.getEventId(), e.getOccurredAt(), Kind.RUN_STOP_REQUESTED, p.getAttempt())
                            .withReason(p.getReason().name()).withMessage(p.getMessage())
                            .withDeadline(p.getDeadline()), null, null, source);
        }
        throw unknown(e.getPayload());
    }

    /** The queue's idle warning of a run (with when it stops the run), or the end of that warning. */
    public static JobEvent fromIdle(io.gantry.events.IdleEvent e, String source) {
        if (e.getPayload() instanceof io.gantry.events.JobIdleWarned w) {
            return new JobEvent(e.getJobId(), w.getTenant(),
                    AdmissionFact.of(e.getEventId(), e.getOccurredAt(), Kind.JOB_IDLE_WARNED, w.getAttempt())
                            .withReason("IDLE").withMessage(w.getMessage()).withDeadline(w.getStopAt()), null, null,
                    source);
        }
        if (e.getPayload() instanceof io.gantry.events.JobIdleCleared c) {
            return new JobEvent(e.getJobId(), c.getTenant(),
                    AdmissionFact.of(e.getEventId(), e.getOccurredAt(), Kind.JOB_IDLE_CLEARED, c.getAttempt())
                            .withMessage(c.getMessage()), null, null, source);
        }
        throw unknown(e.getPayload());
    }

    private static Placement placement(TaskPlacement p) {
        return new Placement(p.getTask(), p.getReplica(), p.getNodeId(), p.getGpuModel(), p.getGpuIndices());
    }

    private static IllegalArgumentException unknown(Object payload) {
        return new IllegalArgumentException("unknown payload " + (payload == null ? "null" : payload.getClass().getName()));
    }

    /** Billing's budget announcement as the gate reads it. */
    public static io.gantry.admission.core.BudgetGate.Status budgetStatus(io.gantry.events.BudgetStatusChanged b) {
        return new io.gantry.admission.core.BudgetGate.Status(b.getTenant(), b.getQueue(), b.getPeriodFrom(),
                b.getPeriodTo(), b.getState().name(), b.getAction().name(), b.getLimit(), b.getSpent(),
                b.getCurrency(), b.getThresholdPercent());
    }

    /** Billing's price book as the cost estimate reads it (amounts are exact decimal strings on the wire). */
    public static io.gantry.admission.core.CostEstimate.PriceList priceList(io.gantry.events.PriceBookApplied p) {
        return new io.gantry.admission.core.CostEstimate.PriceList(p.getVersion(), p.getCurrency(),
                p.getGpuPrices().stream().map(g -> new io.gantry.admission.core.CostEstimate.GpuPrice(g.getModel(),
                        g.getTier(), new java.math.BigDecimal(g.getPerGpuHour()), g.getEffectiveFrom())).toList(),
                p.getCpuPrices().stream().map(r -> new io.gantry.admission.core.CostEstimate.Timed(
                        new java.math.BigDecimal(r.getPerHour()), r.getEffectiveFrom())).toList(),
                p.getMemoryPrices().stream().map(r -> new io.gantry.admission.core.CostEstimate.Timed(
                        new java.math.BigDecimal(r.getPerHour()), r.getEffectiveFrom())).toList(),
                p.getMultipliers().stream().map(m -> new io.gantry.admission.core.CostEstimate.Multiplier(m.getQueue(),
                        m.getPriorityClass(), new java.math.BigDecimal(m.getFactor()), m.getEffectiveFrom())).toList(),
                p.getMigPrices().stream().map(m -> new io.gantry.admission.core.CostEstimate.MigPrice(m.getModel(),
                        m.getProfile(), new java.math.BigDecimal(m.getPerInstanceHour()), m.getEffectiveFrom()))
                        .toList());
    }
}
