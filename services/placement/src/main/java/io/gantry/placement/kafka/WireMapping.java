package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.DeferralReason;
import io.gantry.events.FailureReason;
import io.gantry.events.FreeGpus;
import io.gantry.events.GpuDevice;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.events.TopologyConstraint;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.DeferralCause;
import io.gantry.placement.core.PlacementFact;
import io.gantry.placement.core.FreeCapacity;
import io.gantry.placement.core.GangRequest;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.RdmaNic;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.placement.core.ReleaseCause;
import io.gantry.placement.core.TaskGroup;
import io.gantry.placement.core.Topology;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Maps between the Avro records on the wire and the core's types. No decisions here. */
public final class WireMapping {
    private WireMapping() {
    }

    static GangRequest gang(String jobId, JobDispatched d) {
        if (d.getSpec() == null || d.getSpec().getTasks() == null) {
            throw new IllegalArgumentException("JobDispatched.spec.tasks is missing");
        }
        return gang(jobId, d.getTenant(), d.getAttempt(), d.getSpec());
    }

    /** The gang a reservation request is for (the spec as the queue dispatches it). */
    static GangRequest gang(String jobId, CapacityReservationRequested r) {
        if (r.getSpec() == null || r.getSpec().getTasks() == null) {
            throw new IllegalArgumentException("CapacityReservationRequested.spec.tasks is missing");
        }
        return gang(jobId, r.getTenant(), r.getAttempt(), r.getSpec());
    }

    private static GangRequest gang(String jobId, String tenant, int attempt, JobSpec spec) {
        List<TaskGroup> tasks = new ArrayList<>();
        for (TaskSpec t : spec.getTasks()) {
            tasks.add(new TaskGroup(t.getName(), t.getReplicas(), t.getGpus(), t.getGpuModel(), t.getCpuMillis(),
                    t.getMemoryMiB(), t.getGpuModels() == null ? List.of() : List.copyOf(t.getGpuModels()),
                    t.getGpuTier(), t.getRunSeconds(), t.getGpuMilli(), t.getGpuMemoryMiB(), t.getMigProfile()));
        }
        Topology topology = Topology.ANYWHERE;
        TopologyConstraint c = spec.getTopology();
        if (c != null) {
            topology = new Topology(level(c.getRequired()), level(c.getPreferred()));
        }
        return new GangRequest(jobId, tenant, attempt, tasks, topology, spec.getTimeLimitSeconds(),
                policy(spec.getPlacementPolicy()), spec.getCheckpoint() != null);
    }

    /** {@code binpack} / {@code spread} (admission validated it); null: the pool's policy. */
    static PlacementPolicy policy(String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        return switch (name.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "binpack" -> PlacementPolicy.BINPACK;
            case "spread" -> PlacementPolicy.SPREAD;
            default -> throw new IllegalArgumentException("spec.placementPolicy must be binpack or spread, was " + name);
        };
    }

    private static io.gantry.placement.core.TopologyLevel level(io.gantry.events.TopologyLevel l) {
        return l == null ? io.gantry.placement.core.TopologyLevel.CLUSTER
                : io.gantry.placement.core.TopologyLevel.valueOf(l.name());
    }

    /** The simulated run time of every task, from the placements themselves (null when none records one). */
    static RunPlan plan(Allocation a) {
        Map<String, RunPlan.Task> tasks = new HashMap<>();
        boolean any = false;
        for (PlacedTask p : a.placements()) {
            any |= p.runSeconds() != null;
            tasks.putIfAbsent(p.task(), new RunPlan.Task(List.of(), p.runSeconds()));
        }
        return any ? new RunPlan(tasks) : null;
    }

    /** Everything the tasks run with, from the dispatched spec (fields an older writer did not know: none). */
    static RunPlan plan(JobSpec spec) {
        Map<String, RunPlan.Task> tasks = new HashMap<>();
        for (TaskSpec t : spec.getTasks()) {
            List<RunPlan.Mount> mounts = t.getMounts() == null ? List.of() : t.getMounts().stream()
                    .map(m -> new RunPlan.Mount(m.getMountPath(), m.getHostPath(), m.getClaim(), m.getReadOnly()))
                    .toList();
            tasks.put(t.getName(), new RunPlan.Task(t.getCommand(), t.getRunSeconds(), t.getEnv(), t.getWorkingDir(),
                    t.getImage(), mounts));
        }
        return new RunPlan(tasks, null, spec.getCheckpoint() == null ? null : spec.getCheckpoint().getDir(), null,
                spec.getSuccessPolicy() == null ? null : spec.getSuccessPolicy().getLeader());
    }

    // ------------------------------------------------------------ core -> wire

    /** The envelope for a placement-owned fact, or null for facts placement only learns (node health). */
    static AllocationEvent allocationEvent(PlacementFact fact, Instant now) {
        return allocationEvent(fact, now, List.of());
    }

    /** As above; a release carries {@code free}, the free capacity right after it. */
    static AllocationEvent allocationEvent(PlacementFact fact, Instant now, List<FreeCapacity> free) {
        return allocationEvent(fact, now, free, List.of());
    }

    /** As above, with the deferred gangs checked against the capacity right after the release. */
    static AllocationEvent allocationEvent(PlacementFact fact, Instant now, List<FreeCapacity> free,
                                           List<io.gantry.placement.core.ClusterState.DeferredCheck> checks) {
        return allocationEvent(fact, now, free, checks, null);
    }

    /** As above; a grant names the SHA-256 of its run token ({@code runTokenSha256}, null for none). */
    static AllocationEvent allocationEvent(PlacementFact fact, Instant now, List<FreeCapacity> free,
                                           List<io.gantry.placement.core.ClusterState.DeferredCheck> checks,
                                           String runTokenSha256) {
        return allocationEvent(fact, now, free, checks, runTokenSha256, null);
    }

    /**
     * As above, as published by the pool {@code pool} (null: none named): a grant, deferral or release names it (a
     * release's free capacity is that pool's); other payloads have no pool. Built with it rather than copied after:
     * a copy of a release deep-copies its placements, free capacity and checks.
     */
    static AllocationEvent allocationEvent(PlacementFact fact, Instant now, List<FreeCapacity> free,
                                           List<io.gantry.placement.core.ClusterState.DeferredCheck> checks,
                                           String runTokenSha256, String pool) {
        String jobId;
        Object payload;
        if (fact instanceof PlacementFact.AllocationGranted f) {
            Allocation a = f.allocation();
            jobId = a.jobId();
            payload = AllocationGranted.newBuilder().setAllocationId(a.allocationId()).setTenant(a.tenant())
                    .setAttempt(a.attempt()).setPlacements(placements(a)).setGrantedAt(a.grantedAt())
                    .setBackend(a.backend()).setTimeLimitSeconds(a.timeLimitSeconds())
                    .setRunTokenSha256(runTokenSha256).setPool(pool).build();
        } else if (fact instanceof PlacementFact.PlacementDeferred f) {
            jobId = f.jobId();
            payload = PlacementDeferred.newBuilder().setTenant(f.tenant()).setAttempt(f.attempt())
                    .setReason(DeferralReason.valueOf(f.reason().name())).setMessage(f.message()).setPool(pool)
                    .build();
        } else if (fact instanceof PlacementFact.RunStarted f) {
            Allocation a = f.allocation();
            jobId = a.jobId();
            payload = JobRunStarted.newBuilder().setAllocationId(a.allocationId()).setTenant(a.tenant())
                    .setAttempt(a.attempt()).setStartedAt(f.startedAt()).build();
        } else if (fact instanceof PlacementFact.RunSucceeded f) {
            Allocation a = f.allocation();
            jobId = a.jobId();
            payload = JobRunSucceeded.newBuilder().setAllocationId(a.allocationId()).setTenant(a.tenant())
                    .setAttempt(a.attempt()).setFinishedAt(f.finishedAt()).build();
        } else if (fact instanceof PlacementFact.RunFailed f) {
            Allocation a = f.allocation();
            jobId = a.jobId();
            payload = JobRunFailed.newBuilder().setAllocationId(a.allocationId()).setTenant(a.tenant())
                    .setAttempt(a.attempt()).setFinishedAt(f.finishedAt()).setExitCode(f.exitCode())
                    .setMessage(f.message()).setReason(FailureReason.valueOf(f.reason().name())).build();
        } else if (fact instanceof PlacementFact.AllocationReleased f) {
            Allocation a = f.allocation();
            jobId = a.jobId();
            payload = AllocationReleased.newBuilder().setAllocationId(a.allocationId()).setTenant(a.tenant())
                    .setAttempt(a.attempt()).setReason(ReleaseReason.valueOf(f.reason().name()))
                    .setGrantedAt(a.grantedAt()).setReleasedAt(f.releasedAt()).setPlacements(placements(a))
                    .setBackend(a.backend()).setFreeCapacity(freeGpus(free, pool))
                    .setDeferredChecks(checks.stream().map(c -> io.gantry.events.DeferredCheck.newBuilder()
                            .setJobId(c.jobId()).setAttempt(c.attempt()).setFits(c.fits()).setOnlyPlace(placeRoom(c.onlyPlace()))
                            .build()).toList())
                    .build();
        } else {
            return null;
        }
        return AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(jobId)
                .setOccurredAt(now).setPayload(payload).build();
    }

    /** The registration as published by the pool whose backend lists the node. */
    static NodeEvent inPool(NodeEvent e, String pool) {
        return e.getPayload() instanceof NodeRegistered r
                ? NodeEvent.newBuilder(e).setPayload(NodeRegistered.newBuilder(r).setPool(pool).build()).build() : e;
    }

    private static io.gantry.events.PlaceRoom placeRoom(io.gantry.placement.core.ClusterState.Room r) {
        return r == null ? null : io.gantry.events.PlaceRoom.newBuilder().setNodeId(r.node())
                .setFreeGpus(r.freeGpus()).setPartFreeMilli(r.partFreeMilli()).setFreeCpuMillis(r.freeCpuMillis())
                .setFreeMemoryMiB(r.freeMemoryMiB()).build();
    }

    static List<FreeGpus> freeGpus(List<FreeCapacity> free, String pool) {
        List<FreeGpus> out = new ArrayList<>(free.size());
        for (FreeCapacity c : free) {
            out.add(FreeGpus.newBuilder().setGpuModel(c.gpuModel()).setFreeGpus(c.freeGpus()).setPool(pool)
                    .setLargestFreeOnNode(c.largestFreeOnNode()).setNodesWithFree(c.nodesWithFree())
                    .setLargestFreeMilli(c.largestFreeMilli()).setLargestFreeCpuMillis(c.largestFreeCpuMillis())
                    .setLargestFreeMemoryMiB(c.largestFreeMemoryMiB()).build());
        }
        return out;
    }

    /** A fault a backend observed, for {@code placement.device-events} (a random event id: each report is new). */
    static io.gantry.events.DeviceEvent deviceEvent(io.gantry.placement.backend.DeviceFault f, Instant now) {
        return io.gantry.events.DeviceEvent.newBuilder().setEventId(java.util.UUID.randomUUID().toString())
                .setNodeId(f.nodeId()).setOccurredAt(now)
                .setPayload(io.gantry.events.DeviceFaultReported.newBuilder().setGpuIndex(f.gpuIndex())
                        .setKind(io.gantry.events.DeviceFaultKind.valueOf(f.kind().name())).setXid(f.xid())
                        .setSource(f.source()).setMessage(f.message()).build())
                .build();
    }

    /** The run's preemption notice, as published. */
    /**
     * The release reason of a run the queue preempts: {@code IDLE} when it stops the run for idling (the job then
     * ends), {@code SUSPENDED} when its job was suspended (the tenant's own stop, never credited), else
     * {@code PREEMPTED}.
     */
    static io.gantry.placement.core.ReleaseCause stopCause(io.gantry.events.PreemptionReason reason) {
        return switch (reason) {
            case IDLE -> io.gantry.placement.core.ReleaseCause.IDLE;
            case SUSPENDED -> io.gantry.placement.core.ReleaseCause.SUSPENDED;
            default -> io.gantry.placement.core.ReleaseCause.PREEMPTED;
        };
    }

    static io.gantry.events.StopEvent stopEvent(PlacementFact.PreemptionRequested stop,
                                                io.gantry.placement.backend.PreemptionNotice notice, Instant now) {
        return io.gantry.events.StopEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setJobId(stop.allocation().jobId()).setOccurredAt(now)
                .setPayload(io.gantry.events.RunStopRequested.newBuilder().setTenant(stop.allocation().tenant())
                        .setAllocationId(stop.allocation().allocationId()).setAttempt(stop.allocation().attempt())
                        .setReason(ReleaseReason.valueOf(notice.reason())).setMessage(notice.message())
                        .setDeadline(notice.deadline()).setGraceSeconds(notice.graceSeconds()).build())
                .build();
    }

    static NodeEvent nodeRegistered(NodeSpec n, Instant now) {
        return nodeRegistered(n, io.gantry.placement.core.MigProfiles.standard(), now);
    }

    /** A node's registration, each GPU with the MIG profiles {@code mig} lets it host. */
    static NodeEvent nodeRegistered(NodeSpec n, io.gantry.placement.core.MigProfiles mig, Instant now) {
        List<GpuDevice> gpus = n.gpus().stream()
                .map(g -> GpuDevice.newBuilder().setIndex(g.index()).setModel(g.model()).setMemoryMiB(g.memoryMiB())
                        .setNumaNode(g.numaNode()).setPcieSwitch(g.pcieSwitch()).setNvlinkDomain(g.nvlinkDomain())
                        .setMigCapable(g.migCapable()).setMigProfiles(new ArrayList<>(mig.offered(g))).build())
                .toList();
        NodeRegistered payload = NodeRegistered.newBuilder().setGpus(new ArrayList<>(gpus)).setCpuMillis(n.cpuMillis())
                .setMemoryMiB(n.memoryMiB()).setLabels(new HashMap<>(n.labels())).setBackend(n.backend())
                .setNumaCpuMillis(new ArrayList<>(n.numaCpuMillis()))
                .setNumaMemoryMiB(new ArrayList<>(n.numaMemoryMiB()))
                .setRdmaNics(new ArrayList<>(n.rdmaNics().stream().map(nic -> io.gantry.events.RdmaNic.newBuilder()
                        .setName(nic.name()).setNumaNode(nic.numaNode()).setPcieSwitch(nic.pcieSwitch())
                        .setGbps(nic.gbps()).build()).toList())).build();
        return NodeEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(n.nodeId())
                .setOccurredAt(now).setPayload(payload).build();
    }

    private static List<TaskPlacement> placements(Allocation a) {
        List<TaskPlacement> out = new ArrayList<>();
        for (PlacedTask p : a.placements()) {
            out.add(TaskPlacement.newBuilder().setTask(p.task()).setReplica(p.replica()).setNodeId(p.nodeId())
                    .setGpuModel(p.gpuModel()).setGpuIndices(new ArrayList<>(p.gpuIndices()))
                    .setCpuMillis(p.cpuMillis()).setMemoryMiB(p.memoryMiB()).setCpuSet(new ArrayList<>(p.cpuSet()))
                    .setRunSeconds(p.runSeconds()).setGpuShares(shares(p))
                    .setRdmaNics(new ArrayList<>(p.rdmaNics())).build());
        }
        return out;
    }

    private static List<io.gantry.events.GpuShare> shares(PlacedTask p) {
        List<io.gantry.events.GpuShare> out = new ArrayList<>();
        for (io.gantry.placement.core.GpuShare s : p.gpuShares()) {
            out.add(io.gantry.events.GpuShare.newBuilder().setIndex(s.index()).setMilli(s.milli())
                    .setMemoryMiB(s.memoryMiB()).setMigProfile(s.migProfile()).setMigSlice(s.migSlice()).build());
        }
        return out;
    }

    // ------------------------------------------------------------ wire -> core (restore)

    /** The fact an event of placement's own allocation topic records. */
    static PlacementFact fact(AllocationEvent e) {
        Object p = e.getPayload();
        if (p instanceof AllocationGranted g) {
            return new PlacementFact.AllocationGranted(allocation(e.getJobId(), g.getAllocationId(), g.getTenant(),
                    g.getAttempt(), g.getPlacements(), g.getGrantedAt(), g.getBackend(), g.getTimeLimitSeconds()));
        }
        if (p instanceof PlacementDeferred d) {
            return new PlacementFact.PlacementDeferred(e.getJobId(), d.getTenant(), d.getAttempt(),
                    DeferralCause.valueOf(d.getReason().name()), d.getMessage());
        }
        if (p instanceof AllocationReleased r) {
            return new PlacementFact.AllocationReleased(allocation(e.getJobId(), r.getAllocationId(), r.getTenant(),
                    r.getAttempt(), r.getPlacements(), r.getGrantedAt(), r.getBackend(), null),
                    ReleaseCause.valueOf(r.getReason().name()), r.getReleasedAt());
        }
        return null;
    }

    /** The node a registration describes; throws IllegalArgumentException naming what is wrong with it. */
    public static NodeSpec node(String nodeId, NodeRegistered r) {
        List<Gpu> gpus = r.getGpus().stream().map(g -> new Gpu(g.getIndex(), g.getModel(), g.getMemoryMiB(),
                g.getNumaNode(), g.getPcieSwitch(), g.getNvlinkDomain(), g.getMigCapable())).toList();
        Map<String, String> labels = new HashMap<>();
        r.getLabels().forEach((k, v) -> labels.put(k.toString(), v.toString()));
        List<RdmaNic> nics = r.getRdmaNics() == null ? List.of() : r.getRdmaNics().stream()
                .map(n -> new RdmaNic(n.getName(), n.getNumaNode(), n.getPcieSwitch(), n.getGbps())).toList();
        return new NodeSpec(nodeId, r.getBackend(), gpus, r.getCpuMillis(), r.getMemoryMiB(), labels,
                r.getNumaCpuMillis() == null ? List.of() : List.copyOf(r.getNumaCpuMillis()), nics,
                r.getNumaMemoryMiB() == null ? List.of() : List.copyOf(r.getNumaMemoryMiB()));
    }

    private static Allocation allocation(String jobId, String allocationId, String tenant, int attempt,
                                         List<TaskPlacement> placements, Instant grantedAt, String backend,
                                         Long timeLimitSeconds) {
        List<PlacedTask> tasks = placements.stream().map(t -> new PlacedTask(t.getTask(), t.getReplica(),
                t.getNodeId(), t.getGpuModel(), t.getGpuIndices(), t.getCpuMillis(), t.getMemoryMiB(),
                t.getCpuSet() == null ? List.of() : t.getCpuSet(), t.getRunSeconds(),
                t.getGpuShares() == null ? List.of() : t.getGpuShares().stream()
                        .map(s -> new io.gantry.placement.core.GpuShare(s.getIndex(), s.getMilli(), s.getMemoryMiB(),
                                s.getMigProfile(), s.getMigSlice())).toList(),
                t.getRdmaNics() == null ? List.of() : t.getRdmaNics().stream().map(CharSequence::toString).toList()))
                .toList();
        return new Allocation(allocationId, jobId, tenant, attempt, tasks, grantedAt, backend, timeLimitSeconds);
    }

    /** A closed utilisation window of a run, as published on {@code placement.utilisation-events}. */
    static io.gantry.events.UtilisationEvent utilisationEvent(io.gantry.placement.core.UtilisationSampler.Window w,
                                                              java.time.Instant now) {
        return io.gantry.events.UtilisationEvent.newBuilder().setEventId(java.util.UUID.randomUUID().toString())
                .setJobId(w.jobId()).setOccurredAt(now)
                .setPayload(io.gantry.events.RunUtilisationSampled.newBuilder().setTenant(w.tenant())
                        .setAttempt(w.attempt()).setAllocationId(w.allocationId()).setWindowFrom(w.from())
                        .setWindowTo(w.to()).setHeldGpuMilli(w.heldGpuMilli()).setUsedGpuMilli(w.usedGpuMilli())
                        .setSamples(w.samples()).setIdleSince(w.idleSince()).build())
                .build();
    }
}
