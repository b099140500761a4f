package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.CapacityReservationCancelled;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.DeviceFaultDecided;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRecovered;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.placement.backend.DeviceFault;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.PreemptionNotice;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.CapacityReservation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.DeferralCause;
import io.gantry.placement.core.DeferredGangs;
import io.gantry.placement.core.DeviceAction;
import io.gantry.placement.core.PlacementFact;
import io.gantry.placement.core.GangRequest;
import io.gantry.placement.core.NodeSpec;
import io.gantry.runtime.http.RunTokens;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.SnapshotRecords;
import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop adapter of one pool: maps records to calls on the pool's {@link ClusterState}, replays and
 * publishes the facts it returns (each naming the pool), and drives the pool's execution backend. {@link PoolRouter}
 * hands it the records of its pool. One instance per pool and processor incarnation; a Kafka failure discards it and
 * a fresh one restores from the topics.
 */
public final class PlacementHandler implements EventHandler {
    /** The gangs of the capacity reservations, as requested (transient; after a restore, from their dispatches). */
    private final Map<String, GangRequest> reservedGangs = new HashMap<>();

    private static final Logger LOG = LoggerFactory.getLogger(PlacementHandler.class);
    private final ClusterState state;
    private final ExecutionBackend backend;
    private final VirtualClock clock;
    private final Duration heartbeatInterval;
    private String pool = io.gantry.placement.core.Pools.DEFAULT;
    /** The other pool that has a node id, if any: such a node is never registered here. */
    private java.util.function.Function<String, Optional<String>> elsewhere = id -> Optional.empty();
    /** Nodes this backend lists that another pool has, already logged. */
    private final java.util.Set<String> foreign = new java.util.HashSet<>();
    /**
     * The records of the restore topics this pool's state is made of, for snapshots ({@link PoolRouter#snapshot}),
     * kept as records are restored, handled and published. Per job not ended: the grant of its newest run, with its
     * start while live or its release once ended (for the attempt a stale dispatch is refused by, and the nodes a
     * next run avoids), its newest deferral, its newest dispatch until that run is released (the plan of a live run,
     * the gang of a reservation), the first preemption of its live run and the first stop placement asked of it (its
     * notice and deadline); written before the nodes, so a release replayed from a snapshot meets no node state (see
     * {@link #writeJobs}).
     */
    private final SnapshotRecords keptJobs = new SnapshotRecords();
    /**
     * Per node: its newest valid registration (control labels: cordons, drains, foreign load), its newest invalid
     * one, its newest failure or recovery, the heartbeat of the highest sequence on {@code placement.node-events}.
     */
    private final SnapshotRecords keptNodes = new SnapshotRecords();
    /** Specs of dispatched runs seen during restore, keyed by job id; only needed to re-create live runs. */
    private final Map<String, JobDispatched> restoredDispatches = new HashMap<>();
    /** Preemptions read back at restore, by job id, the first per attempt; applied once allocations are known. */
    private final Map<String, Map<Integer, QueuePreemptionEvent>> restoredPreemptions = new HashMap<>();
    /**
     * The stops placement asked at restore ({@code placement.stop-events}), the first per allocation, of runs not
     * known released; applied once allocations are known, so a stop under way ends as it would have without the
     * restart: the run is released with the stop's reason whatever it exits with, at the deadline it was told at the
     * latest. A bounded drain's or a borrower's stop is recorded nowhere else.
     */
    private final Map<String, io.gantry.events.StopEvent> restoredStops = new java.util.TreeMap<>();
    private final Map<String, Long> heartbeatSequence = new HashMap<>();
    private final DeferredGangs deferredGangs = new DeferredGangs();
    /** Registered nodes of this backend it no longer lists, already logged. */
    private final java.util.Set<String> gone = new java.util.HashSet<>();
    /**
     * How many trial placements a release makes at most to check deferred gangs (one per distinct shape), and over how
     * many of them (the longest-deferred first; each carried on the release as a verdict).
     */
    static final int DEFERRED_TRIALS = 128;
    static final int DEFERRED_SCANNED = 1024;
    /** Registrations read back at restore that were invalid, node id to why. */
    private final Map<String, String> rejectedRegistrations = new HashMap<>();
    private Instant newestRestored;
    private List<Integer> typicalRequests = List.of(8);
    private boolean dirty = true;
    private volatile double fragmentation;
    private Instant nextHeartbeat = Instant.MIN;
    /** Per-run utilisation windows from the backend's samples (nothing when the backend reports none). */
    private io.gantry.placement.core.UtilisationSampler utilisation =
            new io.gantry.placement.core.UtilisationSampler(UtilisationSettings.DEFAULT.window(),
                    UtilisationSettings.DEFAULT.idlePercent());
    private java.time.Duration utilisationEvery = UtilisationSettings.DEFAULT.sampleEvery();
    private Instant nextUtilisation = Instant.MIN;

    /**
     * How often the backend's GPU utilisation is sampled, how long a window of a run's facts is, and at most what
     * percent of what it holds a run may use to count as idle.
     */
    public record UtilisationSettings(java.time.Duration sampleEvery, java.time.Duration window, int idlePercent) {
        public static final UtilisationSettings DEFAULT =
                new UtilisationSettings(java.time.Duration.ofSeconds(10), java.time.Duration.ofMinutes(5), 5);
    }

    /** Samples utilisation as {@code settings} say (defaults: every 10 s, 5-minute windows, idle at 5 %). */
    public PlacementHandler utilisation(UtilisationSettings settings) {
        this.utilisation = new io.gantry.placement.core.UtilisationSampler(settings.window(), settings.idlePercent());
        this.utilisationEvery = settings.sampleEvery();
        return this;
    }
    /** How stale the fragmentation gauge may get while allocations change. */
    static final Duration FRAGMENTATION_EVERY = Duration.ofSeconds(5);
    private Instant nextFragmentation = Instant.MIN;
    /** Device faults published per node per tick at most: a flooding node waits, the others are not starved. */
    static final int FAULTS_PER_NODE_PER_TICK = 8;
    /** How often a dispatch re-places a gang after failed pre-flight checks before it defers the gang. */
    static final int PREFLIGHT_ROUNDS = 3;

    public PlacementHandler(ClusterState state, ExecutionBackend backend, VirtualClock clock, Duration heartbeatInterval) {
        this.state = state;
        this.backend = backend;
        this.clock = clock;
        this.heartbeatInterval = heartbeatInterval;
    }

    public ClusterState state() {
        return state;
    }

    /** This handler's pool: it publishes every registration, grant, deferral and free capacity under that name. */
    public PlacementHandler inPool(String name) {
        this.pool = io.gantry.placement.core.Pools.checkName(name);
        return this;
    }

    public String pool() {
        return pool;
    }

    public ExecutionBackend backend() {
        return backend;
    }

    /** Which other pool has a node id, if any: a node this backend lists that another pool has is not registered. */
    PlacementHandler nodesElsewhere(java.util.function.Function<String, Optional<String>> otherPool) {
        this.elsewhere = otherPool;
        return this;
    }

    /** The request sizes (GPUs) the fragmentation metric is computed for. */
    public PlacementHandler typicalRequests(List<Integer> sizes) {
        this.typicalRequests = List.copyOf(sizes);
        return this;
    }

    public List<Integer> typicalRequests() {
        return typicalRequests;
    }

    /** The fragmentation of the eligible pool as of the last tick (see {@code Inventory#fragmentation}). */
    public double fragmentation() {
        return fragmentation;
    }

    /** Placement's (virtual) clock now. */
    public Instant now() {
        return clock.instant();
    }

    public Map<String, String> rejectedRegistrations() {
        return Map.copyOf(rejectedRegistrations);
    }

    // ---------------------------------------------------------------- restore

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        restoreOne(value);
        remember(value);
    }

    private void restoreOne(Object value) {
        if (value instanceof AllocationEvent e) {
            seen(e.getOccurredAt());
            if (e.getPayload() instanceof JobRunStarted s) {
                state.allocation(s.getAllocationId())
                        .ifPresent(a -> state.replay(new PlacementFact.RunStarted(a, s.getStartedAt())));
            } else {
                PlacementFact f = WireMapping.fact(e);
                if (f != null) {
                    state.replay(f);
                }
                if (e.getPayload() instanceof io.gantry.events.AllocationReleased r) {
                    restoredStops.remove(r.getAllocationId());
                }
            }
        } else if (value instanceof NodeEvent e) {
            seen(e.getOccurredAt());
            if (e.getPayload() instanceof NodeRegistered r) {
                try {
                    state.replay(new PlacementFact.NodeRegistered(WireMapping.node(e.getNodeId(), r)));
                } catch (IllegalArgumentException bad) {
                    // a restore topic has no dead letter: skip it loudly, the node stays unknown
                    LOG.warn("ignoring the registration of node {}: {}", e.getNodeId(), bad.getMessage());
                    rejectedRegistrations.put(e.getNodeId(), bad.getMessage());
                }
            } else if (e.getPayload() instanceof NodeHeartbeat h) {
                heartbeatSequence.merge(e.getNodeId(), h.getSequence(), Math::max);
            }
        } else if (value instanceof NodeHealthEvent e) {
            if (e.getPayload() instanceof NodeFailed) {
                state.replay(new PlacementFact.NodeFailed(e.getNodeId()));
            } else if (e.getPayload() instanceof NodeRecovered) {
                state.replay(new PlacementFact.NodeRecovered(e.getNodeId()));
            }
        } else if (value instanceof QueueJobEvent e && e.getPayload() instanceof JobDispatched d) {
            // the newest attempt's (one partition per job: the last read, unless a stale one was sent again)
            restoredDispatches.merge(e.getJobId(), d, (old, now) -> now.getAttempt() >= old.getAttempt() ? now : old);
        } else if (value instanceof QueuePreemptionEvent e && e.getPayload() instanceof JobPreempted p) {
            // cross-topic order is not guaranteed: the allocation may not be replayed yet
            restoredPreemptions.computeIfAbsent(e.getJobId(), j -> new HashMap<>()).putIfAbsent(p.getAttempt(), e);
        } else if (value instanceof io.gantry.events.StopEvent e
                && e.getPayload() instanceof io.gantry.events.RunStopRequested r && !released(e.getJobId(), r)) {
            // cross-topic order again: its grant may come later
            restoredStops.putIfAbsent(r.getAllocationId(), e);
        }
    }

    /** Whether the run a stop is about is known to be over (granted, and no longer live). */
    private boolean released(String jobId, io.gantry.events.RunStopRequested stop) {
        return state.allocation(stop.getAllocationId()).isEmpty()
                && state.grantedAttempt(jobId).orElse(0) >= stop.getAttempt();
    }

    /**
     * The queue ended the job ({@code end}: the record saying so; null: ended earlier in this restore). Nothing of it
     * is kept but a run still live (a cancellation comes before its release), kept with the end, so a restore of the
     * snapshot forgets the job too.
     */
    void jobEnded(String jobId, QueueJobEvent end) {
        state.forget(jobId);
        restoredDispatches.remove(jobId);
        restoredPreemptions.remove(jobId);
        keptJobs.remove("dispatch/" + jobId);
        keptJobs.remove("preempt/" + jobId);
        String slot = "job/" + jobId;
        if (state.liveAllocation(jobId).isEmpty()) {
            keptJobs.remove(slot);
            keptJobs.remove("stop/" + jobId);
        } else if (end != null && keptJobs.values(slot).stream().noneMatch(v -> v instanceof QueueJobEvent)) {
            keptJobs.append(slot, Topics.QUEUE_JOB_EVENTS, jobId, end);
        }
    }

    /** The job's dispatch is another pool's: its grant or deferral is there. */
    void dispatchedElsewhere(String jobId) {
        keptJobs.remove("dispatch/" + jobId);
    }

    /**
     * Keeps (or drops) what a record of a restore topic contributes to the state, once the state has taken it: every
     * record restored, every input of a restore topic (before it is handled: its place in the history) and every
     * record published on one ({@link PoolRouter} routes them like a restore does).
     */
    void remember(Object value) {
        if (value instanceof AllocationEvent e) {
            rememberAllocation(e);
        } else if (value instanceof NodeEvent e && e.getNodeId() != null) {
            if (e.getPayload() instanceof NodeRegistered r) {
                boolean valid;
                try {
                    WireMapping.node(e.getNodeId(), r);
                    valid = true;
                } catch (IllegalArgumentException bad) {
                    valid = false;
                }
                keptNodes.put((valid ? "node/" : "rejected/") + e.getNodeId(), Topics.PLACEMENT_NODE_EVENTS,
                        e.getNodeId(), e);
            } else if (e.getPayload() instanceof NodeHeartbeat h) {
                String slot = "heartbeat/" + e.getNodeId();
                if (keptNodes.values(slot).stream().allMatch(v -> sequence(v) < h.getSequence())) {
                    keptNodes.put(slot, Topics.PLACEMENT_NODE_EVENTS, e.getNodeId(), e);
                }
            }
        } else if (value instanceof NodeHealthEvent e
                && (e.getPayload() instanceof NodeFailed || e.getPayload() instanceof NodeRecovered)) {
            keptNodes.put("health/" + e.getNodeId(), Topics.RECOVERY_NODE_EVENTS, e.getNodeId(), e);
        } else if (value instanceof QueueJobEvent e && e.getPayload() instanceof JobDispatched d) {
            // the newest attempt's, while it is to be placed or runs (a stale one, handled again, changes nothing)
            String slot = "dispatch/" + e.getJobId();
            java.util.OptionalInt granted = state.grantedAttempt(e.getJobId());
            boolean current = granted.isEmpty() || d.getAttempt() > granted.getAsInt()
                    || state.liveAllocation(e.getJobId()).filter(a -> a.attempt() == d.getAttempt()).isPresent();
            if (current && keptJobs.values(slot).stream().allMatch(v -> dispatchedAttempt(v) <= d.getAttempt())) {
                keptJobs.put(slot, Topics.QUEUE_JOB_EVENTS, e.getJobId(), e);
            }
        } else if (value instanceof QueuePreemptionEvent e && e.getPayload() instanceof JobPreempted p) {
            // only the live run's, the first per attempt (the one whose grace period a restore counts from)
            String slot = "preempt/" + e.getJobId();
            boolean live = state.liveAllocation(e.getJobId()).filter(a -> a.attempt() == p.getAttempt()).isPresent();
            if (live && keptJobs.values(slot).stream().noneMatch(v -> preemptedAttempt(v) == p.getAttempt())) {
                keptJobs.append(slot, Topics.QUEUE_PREEMPTION_EVENTS, e.getJobId(), e);
            }
        } else if (value instanceof io.gantry.events.StopEvent e
                && e.getPayload() instanceof io.gantry.events.RunStopRequested r) {
            keepStop(e, r);
        }
    }

    /**
     * Keeps the first stop of a live run (one read back before its grant is kept by {@link #restored}, once it
     * applied it).
     */
    private void keepStop(io.gantry.events.StopEvent e, io.gantry.events.RunStopRequested r) {
        String slot = "stop/" + e.getJobId();
        if (state.allocation(r.getAllocationId()).isPresent()
                && keptJobs.values(slot).stream().noneMatch(v -> stopped(v).equals(r.getAllocationId()))) {
            keptJobs.append(slot, Topics.PLACEMENT_STOP_EVENTS, e.getJobId(), e);
        }
    }

    private void rememberAllocation(AllocationEvent e) {
        String job = e.getJobId();
        String slot = "job/" + job;
        Object p = e.getPayload();
        if (p instanceof io.gantry.events.AllocationGranted g) {
            if (state.allocation(g.getAllocationId()).isPresent()) {
                keptJobs.put(slot, Topics.PLACEMENT_ALLOCATION_EVENTS, job, e);
                keptJobs.removeIf("preempt/" + job, v -> preemptedAttempt(v) < g.getAttempt());
                keptJobs.removeIf("stop/" + job, v -> stoppedAttempt(v) < g.getAttempt());
            }
        } else if (p instanceof JobRunStarted s) {
            if (state.isStarted(s.getAllocationId()) && keptJobs.values(slot).stream()
                    .anyMatch(v -> keptPayload(v) instanceof io.gantry.events.AllocationGranted g
                            && g.getAllocationId().equals(s.getAllocationId()))
                    && keptJobs.values(slot).stream().noneMatch(v -> keptPayload(v) instanceof JobRunStarted)) {
                keptJobs.append(slot, Topics.PLACEMENT_ALLOCATION_EVENTS, job, e);
            }
        } else if (p instanceof io.gantry.events.AllocationReleased r) {
            keptJobs.removeIf("preempt/" + job, v -> preemptedAttempt(v) <= r.getAttempt());
            keptJobs.removeIf("stop/" + job, v -> stopped(v).equals(r.getAllocationId()));
            keptJobs.removeIf("dispatch/" + job, v -> dispatchedAttempt(v) <= r.getAttempt());
            if (state.liveAllocation(job).isEmpty() && state.grantedAttempt(job).isEmpty()) {
                keptJobs.remove(slot); // the job ended before its run was released (a cancellation)
            } else if (state.allocation(r.getAllocationId()).isEmpty()
                    && keptJobs.values(slot).stream().noneMatch(v -> keptPayload(v) instanceof io.gantry.events.AllocationReleased)
                    && keptJobs.values(slot).stream().anyMatch(v -> keptPayload(v) instanceof io.gantry.events.AllocationGranted g
                            && g.getAllocationId().equals(r.getAllocationId()))) {
                keptJobs.removeIf(slot, v -> keptPayload(v) instanceof JobRunStarted);
                keptJobs.append(slot, Topics.PLACEMENT_ALLOCATION_EVENTS, job, e);
            }
            // a release of another run (late, or of an older attempt) adds only nodes to avoid: see writeJobs
        } else if (p instanceof io.gantry.events.PlacementDeferred) {
            keptJobs.removeIf(slot, v -> keptPayload(v) instanceof io.gantry.events.PlacementDeferred);
            keptJobs.append(slot, Topics.PLACEMENT_ALLOCATION_EVENTS, job, e);
        }
        // a run's success or failure holds nothing: its release follows
    }

    private static Object keptPayload(Object v) {
        return ((AllocationEvent) v).getPayload();
    }

    private static int dispatchedAttempt(Object v) {
        return ((JobDispatched) ((QueueJobEvent) v).getPayload()).getAttempt();
    }

    private static int preemptedAttempt(Object v) {
        return ((JobPreempted) ((QueuePreemptionEvent) v).getPayload()).getAttempt();
    }

    private static io.gantry.events.RunStopRequested stop(Object v) {
        return (io.gantry.events.RunStopRequested) ((io.gantry.events.StopEvent) v).getPayload();
    }

    private static String stopped(Object v) {
        return stop(v).getAllocationId();
    }

    private static int stoppedAttempt(Object v) {
        return stop(v).getAttempt();
    }

    private static long sequence(Object v) {
        return ((NodeHeartbeat) ((NodeEvent) v).getPayload()).getSequence();
    }

    /**
     * This pool's jobs for a snapshot. The nodes a job's next run avoids were worked out when its run was released,
     * from the node states then (only the failed or cordoned nodes of the run); so a release is written with just
     * those nodes in its placements, before any node record: replayed, it avoids exactly them. A job avoiding nodes
     * without a release kept (one came late for an earlier run) gets such a release of its own, of no allocation.
     */
    void writeJobs(SnapshotWriter out, java.util.Set<Object> written) {
        java.util.Set<String> avoiding = state.avoidingJobs();
        keptJobs.writeBySlot(new SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                if (value instanceof AllocationEvent e && e.getPayload() instanceof io.gantry.events.AllocationReleased r
                        && avoiding.remove(e.getJobId())) {
                    out.add(Topics.PLACEMENT_ALLOCATION_EVENTS, key, avoided(e, io.gantry.events.AllocationReleased
                            .newBuilder(r).setAllocationId(r.getAllocationId())));
                    return;
                }
                out.add(topic, key, value);
            }
        }, written);
        for (String job : avoiding) {
            Optional<Allocation> live = state.liveAllocation(job);
            if (live.isEmpty()) {
                continue; // every release is kept with its grant until the next grant or the job's end
            }
            Allocation a = live.get();
            AllocationEvent e = AllocationEvent.newBuilder().setEventId("avoided/" + job).setJobId(job)
                    .setOccurredAt(a.grantedAt()).setPayload(io.gantry.events.AllocationReleased.newBuilder()
                            .setAllocationId("avoided/" + a.allocationId()).setTenant(a.tenant())
                            .setAttempt(a.attempt()).setReason(io.gantry.events.ReleaseReason.NODE_FAILED)
                            .setGrantedAt(a.grantedAt()).setReleasedAt(a.grantedAt()).setPlacements(List.of())
                            .setBackend(a.backend()).build()).build();
            out.add(Topics.PLACEMENT_ALLOCATION_EVENTS, job, avoided(e,
                    io.gantry.events.AllocationReleased.newBuilder((io.gantry.events.AllocationReleased) e.getPayload())));
        }
    }

    /** The release with one placement per node the job avoids (no devices): what a replay makes it avoid. */
    private AllocationEvent avoided(AllocationEvent e, io.gantry.events.AllocationReleased.Builder release) {
        List<io.gantry.events.TaskPlacement> placements = new ArrayList<>();
        int replica = 0;
        for (String node : state.avoiding(e.getJobId())) {
            placements.add(io.gantry.events.TaskPlacement.newBuilder().setTask("avoided").setReplica(replica++)
                    .setNodeId(node).setGpuIndices(List.of()).setCpuMillis(0).setMemoryMiB(0).build());
        }
        return AllocationEvent.newBuilder(e).setPayload(release.setReason(io.gantry.events.ReleaseReason.NODE_FAILED)
                .setPlacements(placements).build()).build();
    }

    /** This pool's nodes for a snapshot (after every pool's jobs). */
    void writeNodes(SnapshotWriter out, java.util.Set<Object> written) {
        keptNodes.writeBySlot(out, written);
    }

    /** The newest heartbeat sequence read per node (a restart heartbeats on from there). */
    Map<String, Long> heartbeatSequences() {
        return Map.copyOf(heartbeatSequence);
    }

    void seen(Instant at) {
        if (at != null && (newestRestored == null || at.isAfter(newestRestored))) {
            newestRestored = at;
        }
    }

    /** Placement's clock goes on from the newest time read back (never back before it). */
    void clockNotBeforeRestored() {
        clock.notBefore(newestRestored);
    }

    @Override
    public void restored(Output out) {
        clockNotBeforeRestored();
        Instant now = clock.instant();
        for (NodeSpec node : backend.nodes()) {
            if (state.knows(node.nodeId()) || elsewhere.apply(node.nodeId()).isEmpty()) {
                emit(state.register(node), now, out);
            }
        }
        // a stop asked before the restart (a queue preemption, a bounded drain, a borrower's): as it was told, so the
        // run's end is classified as it would have been (a task that exits on its SIGTERM was stopped, not done)
        for (io.gantry.events.StopEvent e : restoredStops.values()) {
            io.gantry.events.RunStopRequested r = (io.gantry.events.RunStopRequested) e.getPayload();
            state.allocation(r.getAllocationId()).ifPresent(a -> {
                Instant notice = e.getOccurredAt().isBefore(a.grantedAt()) ? a.grantedAt() : e.getOccurredAt();
                state.replay(new PlacementFact.PreemptionRequested(a, notice, r.getDeadline(), r.getMessage(),
                        io.gantry.placement.core.ReleaseCause.valueOf(r.getReason().name())));
                keepStop(e, r);
            });
        }
        restoredStops.clear();
        // a preemption pending at the restart whose stop was not read back: its grace period counts from the
        // request's time
        restoredPreemptions.values().stream().flatMap(m -> m.values().stream())
                .sorted(Comparator.comparing(QueuePreemptionEvent::getOccurredAt)).forEach(e -> {
                    JobPreempted p = (JobPreempted) e.getPayload();
                    state.preempt(e.getJobId(), p.getAttempt(), p.getGraceSeconds(), e.getOccurredAt(),
                            WireMapping.stopCause(p.getReason())).forEach(state::replay);
                });
        restoredPreemptions.clear();
        List<ExecutionBackend.LiveRun> live = new ArrayList<>();
        for (Allocation a : state.liveAllocations()) {
            // the dispatch has all of the plan (environment, success policy, ...); the allocation itself only the run
            // times, enough for the simulated backend when the dispatch is gone
            JobDispatched d = restoredDispatches.get(a.jobId());
            JobSpec spec = d != null && d.getAttempt() == a.attempt() ? d.getSpec() : null;
            RunPlan plan = spec != null ? WireMapping.plan(spec) : WireMapping.plan(a);
            live.add(new ExecutionBackend.LiveRun(a, plan));
        }
        // a drain bounded before the restart is bounded again (the gang as the queue last dispatched it); its stops
        // under way were restored above and stand (checkpoints are not restored: a run that saved one before the
        // restart is stopped only after its next)
        List<GangRequest> drains = new ArrayList<>();
        for (CapacityReservation r : state.reservations()) {
            JobDispatched d = restoredDispatches.get(r.jobId());
            if (d != null) {
                drains.add(WireMapping.gang(r.jobId(), d));
            }
        }
        restoredDispatches.clear();
        List<RunOutcome> outcomes = new ArrayList<>(backend.adopt(live, now));
        // runs that ended while placement was down, so they are ordered against deadlines that also passed
        outcomes.addAll(backend.poll(now));
        for (Allocation a : state.stopping()) {
            backend.terminate(a.allocationId());
        }
        settle(outcomes, now, out);
        for (GangRequest gang : drains) {
            reservedGangs.put(gang.jobId(), gang);
            emit(state.stopDrainBlockers(gang, now), now, out);
        }
        reviewBorrowers(now, out);
    }

    // ---------------------------------------------------------------- inputs

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        Instant now = clock.instant();
        if (value instanceof QueuePreemptionEvent e && e.getPayload() instanceof JobPreempted p) {
            // the run's notice gives the queue's own sentence
            emit(state.preempt(e.getJobId(), p.getAttempt(), p.getGraceSeconds(), now,
                            WireMapping.stopCause(p.getReason())).stream()
                    .map(f -> f instanceof PlacementFact.PreemptionRequested r ? r.because(p.getMessage()) : f)
                    .toList(), now, out);
        } else if (value instanceof QueueReservationEvent e) {
            if (e.getPayload() instanceof CapacityReservationRequested r) {
                GangRequest gang = WireMapping.gang(e.getJobId(), r); // throws on a malformed spec before anything changes
                List<PlacementFact> facts = state.reserve(gang, now, r.getMaxDrainSeconds() == null ? null
                        : java.time.Duration.ofSeconds(Math.max(0, r.getMaxDrainSeconds())));
                if (facts.isEmpty()) {
                    LOG.info("no capacity reserved for job {} attempt {} (already reserved, placed, or it fits "
                            + "nowhere even when drained)", e.getJobId(), r.getAttempt());
                }
                emit(facts, now, out);
                // runs there that would hold the drained GPUs past the drain bound are stopped (from checkpoints)
                reservedGangs.put(gang.jobId(), gang);
                emit(state.stopDrainBlockers(gang, now), now, out);
                reviewBorrowers(now, out);
            } else if (e.getPayload() instanceof CapacityReservationCancelled c) {
                emit(state.cancelReservation(e.getJobId(), c.getAttempt()), now, out);
            }
        } else if (value instanceof io.gantry.events.CheckpointEvent e
                && e.getPayload() instanceof io.gantry.events.CheckpointCommitted c) {
            state.checkpointCommitted(e.getJobId(), c.getAttempt(), c.getCommittedAt());
            // a run in a bounded drain's way may be stoppable now that it can resume
            List<String> active = new ArrayList<>();
            for (CapacityReservation r : state.reservations()) {
                active.add(r.jobId());
                GangRequest gang = reservedGangs.get(r.jobId());
                if (gang != null) {
                    emit(state.stopDrainBlockers(gang, now), now, out);
                }
            }
            reservedGangs.keySet().retainAll(active);
        } else if (value instanceof QueueJobEvent e) {
            if (e.getPayload() instanceof JobDispatched d) {
                dispatch(e.getJobId(), d, now, out);
            } else if (e.getPayload() instanceof JobCancelled c) {
                deferredGangs.forget(e.getJobId());
                state.forget(e.getJobId());
                emit(state.cancel(e.getJobId(), c.getAttempt(), now), now, out);
            } else if (e.getPayload() instanceof io.gantry.events.JobSucceeded
                    || e.getPayload() instanceof io.gantry.events.JobFailed) {
                deferredGangs.forget(e.getJobId());
                state.forget(e.getJobId());
            }
        } else if (value instanceof NodeHealthEvent e) {
            if (e.getPayload() instanceof NodeFailed) {
                emit(state.nodeFailed(e.getNodeId(), now), now, out);
            } else if (e.getPayload() instanceof NodeRecovered) {
                emit(state.nodeRecovered(e.getNodeId()), now, out);
            }
        } else if (value instanceof DeviceHealthEvent e && e.getPayload() instanceof DeviceFaultDecided d) {
            // the cordon is a registration on placement.node-events, so a restart keeps it; the stopped runs'
            // releases say DEVICE_FAULT (recovery requeues them) or RUN_FAILED (an application fault)
            List<PlacementFact> facts = state.deviceFault(e.getNodeId(), d.getGpuIndex(),
                    DeviceAction.valueOf(d.getAction().name()), d.getMessage(), d.getFaultAt(), now);
            LOG.info("device fault on {}: {} ({} facts)", e.getNodeId(), d.getMessage(), facts.size());
            emit(facts, now, out);
        }
    }

    /** The job is no longer deferred here (the queue dispatched it to another pool). */
    void forgetDeferred(String jobId) {
        deferredGangs.forget(jobId);
    }

    /**
     * An operator returns cordoned GPUs of a node to service after repair ({@code gpus} empty: all). Empty when the
     * node is unknown; else the GPUs still cordoned.
     */
    public Optional<java.util.SortedSet<Integer>> uncordonGpus(String nodeId, java.util.Set<Integer> gpus, Output out) {
        if (!state.knows(nodeId)) {
            return Optional.empty();
        }
        emit(state.uncordonGpus(nodeId, gpus), clock.instant(), out);
        return state.node(nodeId).map(NodeSpec::cordonedGpus);
    }

    /**
     * An operator cordons or uncordons a node: the new registration (with or without the control label) is
     * published on {@code placement.node-events}, so a restart keeps it. Empty when the node is unknown.
     */
    public Optional<Boolean> cordon(String nodeId, boolean cordon, Output out) {
        if (!state.knows(nodeId)) {
            return Optional.empty();
        }
        Instant now = clock.instant();
        emit(state.cordon(nodeId, cordon), now, out);
        return Optional.of(state.isCordoned(nodeId));
    }

    private void dispatch(String jobId, JobDispatched d, Instant now, Output out) {
        GangRequest gang = WireMapping.gang(jobId, d); // throws on a malformed spec before anything changes
        List<PlacementFact> facts = preflighted(gang, state.dispatch(gang, now), now, out);
        // remembered so releases can tell the queue which parked gangs fit now
        deferredGangs.afterDispatch(gang, facts);
        // each run gets a secret token of its own: the tasks have it, the grant names only its hash
        Map<String, String> tokens = new HashMap<>();
        for (PlacementFact f : facts) {
            if (f instanceof PlacementFact.AllocationGranted g) {
                tokens.put(g.allocation().allocationId(), RunTokens.newToken(g.allocation().jobId(),
                        g.allocation().attempt()));
            }
        }
        emit(facts, now, out, tokens);
        for (PlacementFact f : facts) {
            if (f instanceof PlacementFact.AllocationGranted g) {
                Allocation a = g.allocation();
                Optional<RunOutcome> failure = backend.start(a, WireMapping.plan(d.getSpec())
                        .withRunToken(tokens.get(a.allocationId())).resumingFrom(d.getResumeFrom()), now);
                if (failure.isPresent()) {
                    finish(failure.get(), now, out);
                } else {
                    emit(state.runStarted(a.allocationId(), now), now, out);
                }
            }
        }
    }

    /**
     * Runs the backend's pre-flight check on every node of a grant before anything starts. A failing node is
     * cordoned (with the reason) and reported on {@code placement.device-events}, and the gang is placed again
     * without it: nothing was granted yet, so it is no job failure and holds no quota longer than the decision.
     * After {@value #PREFLIGHT_ROUNDS} rounds with failures the gang is deferred (the queue retries it when capacity
     * changes). A node passes at most once per dispatch.
     */
    private List<PlacementFact> preflighted(GangRequest gang, List<PlacementFact> facts, Instant now, Output out) {
        java.util.Set<String> passed = new java.util.HashSet<>();
        for (int round = 0; ; round++) {
            PlacementFact.AllocationGranted grant = facts.stream()
                    .filter(f -> f instanceof PlacementFact.AllocationGranted)
                    .map(f -> (PlacementFact.AllocationGranted) f).findFirst().orElse(null);
            if (grant == null) {
                return facts;
            }
            List<String> failed = new ArrayList<>();
            for (String nodeId : new java.util.TreeSet<>(grant.allocation().placements().stream()
                    .map(p -> p.nodeId()).toList())) {
                if (passed.contains(nodeId)) {
                    continue;
                }
                NodeSpec node = state.node(nodeId).orElse(null);
                Optional<String> failure = node == null ? Optional.empty() : backend.preflight(node, now);
                if (failure.isEmpty()) {
                    passed.add(nodeId);
                    continue;
                }
                failed.add(nodeId);
                String reason = "pre-flight check failed: " + abbreviate(failure.get());
                LOG.warn("node {} {}; cordoned, job {} is placed again without it", nodeId, reason, gang.jobId());
                emit(state.cordon(nodeId, true, reason), now, out);
                publishFault(new DeviceFault(nodeId, null, DeviceFault.Kind.PREFLIGHT_FAILED, null, "preflight",
                        reason + " (before job " + gang.jobId() + " attempt " + gang.attempt() + ")"), now, out);
            }
            if (failed.isEmpty()) {
                return facts;
            }
            if (round + 1 >= PREFLIGHT_ROUNDS) {
                return List.of(new PlacementFact.PlacementDeferred(gang.jobId(), gang.tenant(), gang.attempt(),
                        DeferralCause.CORDONED, "pre-flight checks failed on " + String.join(", ", failed)
                        + " in " + PREFLIGHT_ROUNDS + " placement rounds; the nodes are cordoned and the gang waits "
                        + "for capacity"));
            }
            facts = state.dispatch(gang, now);
        }
    }

    private static String abbreviate(String s) {
        String one = s.strip().replaceAll("\\s+", " ");
        return one.length() <= 200 ? one : one.substring(0, 197) + "...";
    }

    private void publishFault(DeviceFault f, Instant now, Output out) {
        out.send(Topics.PLACEMENT_DEVICE_EVENTS, f.nodeId(), WireMapping.deviceEvent(f, now));
    }

    @Override
    public void tick(Instant wallNow, Output out) {
        Instant now = clock.instant();
        // bounded per node, so a flooding node cannot starve the others' reports (nor the loop)
        for (DeviceFault f : backend.pollFaults(now, FAULTS_PER_NODE_PER_TICK)) {
            publishFault(f, now, out);
        }
        settle(backend.poll(now), now, out);
        if (dirty && !now.isBefore(nextFragmentation)) {
            // O(nodes): a gauge, not a decision, so at most once per FRAGMENTATION_EVERY of placement's clock
            dirty = false;
            nextFragmentation = now.plus(FRAGMENTATION_EVERY);
            fragmentation = state.inventory().fragmentation(typicalRequests);
        }
        if (!now.isBefore(nextUtilisation)) {
            nextUtilisation = now.plus(utilisationEvery);
            var busy = backend.gpuUtilisation(now);
            if (!busy.isEmpty() || utilisation.watched() > 0) {
                for (var w : utilisation.observe(now, busy, state.liveAllocations())) {
                    out.send(Topics.PLACEMENT_UTILISATION_EVENTS, w.jobId(), WireMapping.utilisationEvent(w, now));
                }
            }
        }
        if (!wallNow.isBefore(nextHeartbeat)) {
            nextHeartbeat = wallNow.plus(heartbeatInterval);
            List<NodeSpec> listed = backend.nodes();
            syncNodes(listed, now, out);
            for (NodeSpec node : listed) {
                if (!foreign.contains(node.nodeId()) && backend.heartbeating(node.nodeId())) {
                    long seq = heartbeatSequence.merge(node.nodeId(), 1L, Long::sum);
                    out.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, node.nodeId(), NodeHeartbeatEvent.newBuilder()
                            .setEventId(UUID.randomUUID().toString()).setNodeId(node.nodeId()).setOccurredAt(now)
                            .setPayload(NodeHeartbeat.newBuilder().setSequence(seq).build()).build());
                }
            }
        }
    }

    /**
     * Once per heartbeat interval: a node the backend lists that placement does not know (it joined after the start)
     * or whose spec changed is registered now; a registered node the backend no longer lists is logged once and
     * stops heartbeating, so recovery declares it failed (its runs are interrupted like on any node failure); the
     * GPUs held there outside Gantry are taken off the free count (or given back) as the backend last counted them.
     */
    private void syncNodes(List<NodeSpec> listed, Instant now, Output out) {
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (NodeSpec node : listed) {
            Optional<String> other = state.knows(node.nodeId()) ? Optional.empty() : elsewhere.apply(node.nodeId());
            if (other.isPresent()) {
                if (foreign.add(node.nodeId())) {
                    LOG.warn("node {} of pool {} is not registered: pool {} has a node with that id (node ids must be "
                            + "unique across pools)", node.nodeId(), pool, other.get());
                }
                continue;
            }
            foreign.remove(node.nodeId());
            ids.add(node.nodeId());
            List<PlacementFact> facts = state.sync(node);
            if (!facts.isEmpty()) {
                LOG.info("node {} {} the backend's inventory", node.nodeId(),
                        state.knows(node.nodeId()) ? "changed in" : "joined");
                emit(facts, now, out);
            }
        }
        gone.retainAll(state.nodes().stream().map(NodeSpec::nodeId).collect(java.util.stream.Collectors.toSet()));
        for (NodeSpec known : state.nodes()) {
            if (known.backend().equals(backend.name()) && !ids.contains(known.nodeId()) && gone.add(known.nodeId())) {
                LOG.warn("node {} is no longer in the backend's inventory: it stops heartbeating and recovery will "
                        + "declare it failed", known.nodeId());
            }
        }
        gone.removeAll(ids);
        backend.foreignLoad().ifPresent(load -> {
            for (NodeSpec node : listed) {
                ForeignLoad f = load.get(node.nodeId());
                emit(state.foreignLoad(node.nodeId(), f == null ? 0 : f.gpus(), f == null ? null : f.holders()),
                        now, out);
            }
        });
    }

    /**
     * The next run end the backend knows of, the next deadline (grace end, time limit) and the next heartbeat,
     * whichever comes first; null (tick every interval) when the backend cannot tell when its runs end. (Heartbeats
     * follow the loop's clock, runs placement's; the virtual-time driver, the only caller, runs both at speed 1.)
     */
    @Override
    public Instant nextTickAt(Instant wallNow) {
        Instant outcome = backend.nextOutcomeAt();
        if (outcome == null) {
            return null;
        }
        Instant next = outcome;
        Instant deadline = state.nextDeadline();
        if (deadline != null && deadline.isBefore(next)) {
            next = deadline;
        }
        if (nextHeartbeat.isBefore(next)) {
            next = nextHeartbeat;
        }
        if (dirty && nextFragmentation.isBefore(next)) {
            next = nextFragmentation;
        }
        Instant fault = backend.nextFaultAt();
        if (fault != null && fault.isBefore(next)) {
            next = fault;
        }
        return next;
    }

    /**
     * Applies the backend's outcomes and the core's due deadlines in time order, so a run that ended naturally
     * before its grace period or time limit is a normal outcome, and one still running at the deadline is stopped
     * there (an outcome at the very instant of a deadline counts as natural).
     */
    private void settle(List<RunOutcome> outcomes, Instant now, Output out) {
        List<RunOutcome> ordered = new ArrayList<>(outcomes);
        ordered.sort(Comparator.comparing((RunOutcome o) -> o.result().finishedAt()));
        for (RunOutcome o : ordered) {
            emit(state.expireBefore(o.result().finishedAt()), now, out);
            finish(o, now, out);
        }
        emit(state.expire(now), now, out);
    }

    private void finish(RunOutcome outcome, Instant now, Output out) {
        emit(state.runEnded(outcome.allocationId(), outcome.result()), now, out);
        reviewBorrowers(now, out);
    }

    /**
     * After a run ended (or a reservation began, or a restore): a reservation whose gang is now due gets back the
     * drained GPUs that runs with checkpoints borrowed meanwhile.
     */
    private void reviewBorrowers(Instant now, Output out) {
        for (CapacityReservation r : state.reservations()) {
            GangRequest gang = reservedGangs.get(r.jobId());
            if (gang != null) {
                emit(state.stopBorrowers(gang, now), now, out);
            }
        }
    }

    /** Replays each fact, publishes the ones placement owns, and stops the tasks of every released allocation. */
    private void emit(List<PlacementFact> facts, Instant now, Output out) {
        emit(facts, now, out, Map.of());
    }

    private void emit(List<PlacementFact> facts, Instant now, Output out, Map<String, String> runTokens) {
        for (PlacementFact f : facts) {
            state.replay(f);
            dirty = true;
            if (f instanceof PlacementFact.NodeRegistered r) {
                out.send(Topics.PLACEMENT_NODE_EVENTS, r.node().nodeId(),
                        WireMapping.inPool(WireMapping.nodeRegistered(r.node(), state.placer().sharing().mig(), now),
                                pool));
                continue;
            }
            if (f instanceof PlacementFact.PreemptionRequested p) {
                // the notice first (the run's API answer and its notice file), so a task woken by SIGTERM finds it
                PreemptionNotice notice = PreemptionNotice.of(p, now);
                out.send(Topics.PLACEMENT_STOP_EVENTS, p.allocation().jobId(), WireMapping.stopEvent(p, notice, now));
                backend.notice(p.allocation().allocationId(), notice);
                backend.terminate(p.allocation().allocationId());
                continue;
            }
            // a release carries the free capacity right after it, and which deferred gangs fit now, so the queue
            // wakes only gangs that could fit
            boolean release = f instanceof PlacementFact.AllocationReleased;
            String token = f instanceof PlacementFact.AllocationGranted g ? runTokens.get(g.allocation().allocationId())
                    : null;
            AllocationEvent event = WireMapping.allocationEvent(f, now, release ? state.freeCapacity() : List.of(),
                    release ? state.checkDeferred(deferredGangs.oldestFirst(), now, DEFERRED_TRIALS,
                            DEFERRED_SCANNED) : List.of(),
                    token == null ? null : RunTokens.sha256(token), pool);
            if (event != null) {
                out.send(Topics.PLACEMENT_ALLOCATION_EVENTS, event.getJobId(), event);
            }
            if (f instanceof PlacementFact.AllocationReleased r) {
                backend.stop(r.allocation().allocationId());
            }
        }
    }
}
