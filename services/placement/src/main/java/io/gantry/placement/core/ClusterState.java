package io.gantry.placement.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The node inventory and the live allocations, as a replayable state machine.
 *
 * <p>Decision methods read the state and return the facts that follow; they change nothing. {@link #replay} is
 * the only mutator, used both for facts just decided and for facts read back from the topics at start. Replay
 * tolerates any cross-topic order: an allocation may arrive before the node it sits on registered, a
 * {@code NodeFailed} before its {@code NodeRegistered}.
 */
public final class ClusterState {
    private final String backend;
    private final GangPlacer placer;
    private final Map<String, NodeSpec> nodes = new TreeMap<>();
    private final Set<String> failed = new HashSet<>();
    private final Map<String, Allocation> liveByJob = new HashMap<>();
    private final Map<String, Allocation> liveById = new HashMap<>();
    /** Allocation id to when its run started: a time limit counts from there. */
    private final Map<String, Instant> started = new HashMap<>();
    /** Allocation id to the end of its preemption grace period, for runs being preempted. */
    private final Map<String, Instant> stopDeadline = new HashMap<>();
    /** Every pending deadline (grace ends, time limits), earliest first: a tick reads only the due head. */
    private final TreeSet<Deadline> deadlines = new TreeSet<>();
    /** The free-capacity index placers search; kept in step with every replayed fact. */
    private final Inventory inventory;
    /** Live placements per node id, kept for nodes not registered yet too (replay order is not guaranteed). */
    private final Map<String, List<Inventory.Holding>> liveOnNode = new HashMap<>();
    /** Highest attempt of each job that was ever granted: a dispatch of that attempt or older is stale. */
    private final Map<String, Integer> grantedAttempt = new HashMap<>();

    /**
     * @param backend the execution backend of this placement; only its nodes are placed on
     * @param placer  the placement algorithm
     */
    public ClusterState(String backend, GangPlacer placer) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.placer = Objects.requireNonNull(placer, "placer");
        this.inventory = new Inventory(backend, placer.sharing());
    }

    public GangPlacer placer() {
        return placer;
    }

    public String backend() {
        return backend;
    }

    // ---------------------------------------------------------------- decisions

    public List<Fact> register(NodeSpec node) {
        return List.of(new Fact.NodeRegistered(node));
    }

    /** A dispatched run: place the whole gang now or defer it; nothing for a job already holding devices. */
    public List<Fact> dispatch(GangRequest gang, Instant now) {
        if (liveByJob.containsKey(gang.jobId())) {
            return List.of();
        }
        if (grantedAttempt.getOrDefault(gang.jobId(), 0) >= gang.attempt()) {
            return List.of();
        }
        PlacementDecision decision = placer.place(inventory, gang);
        if (decision instanceof PlacementDecision.Deferred d) {
            return List.of(new Fact.PlacementDeferred(gang.jobId(), gang.tenant(), gang.attempt(), d.reason(),
                    d.message()));
        }
        List<PlacedTask> placements = withRunSeconds(gang, ((PlacementDecision.Placed) decision).placements());
        checkPlacements(gang, placements);
        Allocation a = new Allocation(allocationId(gang.jobId(), gang.attempt()), gang.jobId(), gang.tenant(),
                gang.attempt(), placements, now, backend, gang.timeLimitSeconds());
        return List.of(new Fact.AllocationGranted(a));
    }

    public List<Fact> runStarted(String allocationId, Instant now) {
        Allocation a = liveById.get(allocationId);
        if (a == null || started.containsKey(allocationId)) {
            return List.of();
        }
        return List.of(new Fact.RunStarted(a, now));
    }

    /**
     * The backend's outcome; ignored when the allocation was already released (cancelled, node failed). While a
     * preemption is pending, a failure is the stop's doing (the tasks got SIGTERM): the run is released
     * {@code PREEMPTED} with no outcome; a success stands (the run ended naturally first).
     */
    public List<Fact> runEnded(String allocationId, RunResult result) {
        Allocation a = liveById.get(allocationId);
        if (a == null) {
            return List.of();
        }
        Instant at = result.finishedAt().isBefore(a.grantedAt()) ? a.grantedAt() : result.finishedAt();
        if (result.succeeded()) {
            return List.of(new Fact.RunSucceeded(a, at), new Fact.AllocationReleased(a, ReleaseCause.RUN_SUCCEEDED, at));
        }
        if (stopDeadline.containsKey(allocationId)) {
            return List.of(new Fact.AllocationReleased(a, ReleaseCause.PREEMPTED, at));
        }
        return List.of(new Fact.RunFailed(a, result.exitCode(), result.message(), at),
                new Fact.AllocationReleased(a, ReleaseCause.RUN_FAILED, at));
    }

    /** The job was cancelled at {@code attempt}: release its allocation unless that belongs to a newer run. */
    public List<Fact> cancel(String jobId, int attempt, Instant now) {
        Allocation a = liveByJob.get(jobId);
        if (a == null || a.attempt() > attempt) {
            return List.of();
        }
        return List.of(new Fact.AllocationReleased(a, ReleaseCause.CANCELLED, releaseTime(a, now)));
    }

    /** The node is gone: never place on it again until it recovers, and release every allocation touching it. */
    public List<Fact> nodeFailed(String nodeId, Instant now) {
        List<Fact> facts = new ArrayList<>();
        facts.add(new Fact.NodeFailed(nodeId));
        liveById.values().stream().filter(a -> a.touches(nodeId))
                .sorted(Comparator.comparing(Allocation::jobId))
                .forEach(a -> facts.add(new Fact.AllocationReleased(a, ReleaseCause.NODE_FAILED, releaseTime(a, now))));
        return facts;
    }

    public List<Fact> nodeRecovered(String nodeId) {
        return List.of(new Fact.NodeRecovered(nodeId));
    }

    /**
     * The queue preempts {@code attempt} of the job: its tasks are asked to stop and the allocation is released
     * {@code PREEMPTED} {@code graceSeconds} after {@code from} (never counted from before the grant), or when
     * the run ends first. Nothing for an unknown job, another attempt, a released allocation or a preemption
     * already pending (the first one's deadline stands).
     *
     * @param from when the grace period starts: the handling instant live, the request's time at restore
     */
    public List<Fact> preempt(String jobId, int attempt, int graceSeconds, Instant from) {
        Allocation a = liveByJob.get(jobId);
        if (a == null || a.attempt() != attempt || stopDeadline.containsKey(a.allocationId())) {
            return List.of();
        }
        Instant start = from.isBefore(a.grantedAt()) ? a.grantedAt() : from;
        return List.of(new Fact.PreemptionRequested(a, start.plusSeconds(Math.max(0, graceSeconds))));
    }

    /**
     * The deadlines due at or before {@code now}, earliest first: a preemption whose grace period ended is
     * released {@code PREEMPTED} at its deadline; a run at its time limit fails ({@code TIME_LIMIT}) and is
     * released at the instant the limit was reached. Reads only the due head of a sorted set.
     */
    public List<Fact> expire(Instant now) {
        return due(now, true);
    }

    /** Like {@link #expire} for deadlines strictly before {@code t}: what must happen before an outcome at {@code t}. */
    public List<Fact> expireBefore(Instant t) {
        return due(t, false);
    }

    private List<Fact> due(Instant upTo, boolean inclusive) {
        List<Fact> facts = new ArrayList<>();
        Set<String> handled = new HashSet<>();
        for (Deadline d : deadlines) {
            int c = d.at().compareTo(upTo);
            if (c > 0 || (c == 0 && !inclusive)) {
                break;
            }
            Allocation a = liveById.get(d.allocationId());
            if (a == null || !handled.add(d.allocationId())) {
                continue;
            }
            if (d.preemption()) {
                facts.add(new Fact.AllocationReleased(a, ReleaseCause.PREEMPTED, d.at()));
            } else {
                facts.add(new Fact.RunFailed(a, null, "time limit " + a.timeLimitSeconds() + " s reached", d.at(),
                        FailureCause.TIME_LIMIT));
                facts.add(new Fact.AllocationReleased(a, ReleaseCause.TIME_LIMIT, d.at()));
            }
        }
        return facts;
    }

    /** A pending stop: a preemption's grace end or a run's time limit. */
    private record Deadline(Instant at, String allocationId, boolean preemption) implements Comparable<Deadline> {
        @Override
        public int compareTo(Deadline o) {
            int c = at.compareTo(o.at);
            if (c == 0) {
                c = allocationId.compareTo(o.allocationId);
            }
            return c != 0 ? c : Boolean.compare(preemption, o.preemption);
        }
    }

    // ---------------------------------------------------------------- the only mutator

    public void replay(Fact fact) {
        Objects.requireNonNull(fact, "fact");
        if (fact instanceof Fact.NodeRegistered f) {
            nodes.put(f.node().nodeId(), f.node());
            inventory.put(f.node(), !failed.contains(f.node().nodeId()),
                    liveOnNode.getOrDefault(f.node().nodeId(), List.of()));
        } else if (fact instanceof Fact.NodeFailed f) {
            failed.add(f.nodeId());
            inventory.setHealthy(f.nodeId(), false);
        } else if (fact instanceof Fact.NodeRecovered f) {
            failed.remove(f.nodeId());
            inventory.setHealthy(f.nodeId(), true);
        } else if (fact instanceof Fact.AllocationGranted f) {
            grant(f.allocation());
        } else if (fact instanceof Fact.RunStarted f) {
            Allocation a = liveById.get(f.allocation().allocationId());
            if (a != null && !started.containsKey(a.allocationId())) {
                started.put(a.allocationId(), f.startedAt());
                if (a.timeLimitSeconds() != null) {
                    deadlines.add(new Deadline(f.startedAt().plusSeconds(a.timeLimitSeconds()), a.allocationId(), false));
                }
            }
        } else if (fact instanceof Fact.PreemptionRequested f) {
            Allocation a = liveById.get(f.allocation().allocationId());
            if (a != null && !stopDeadline.containsKey(a.allocationId())) {
                stopDeadline.put(a.allocationId(), f.deadline());
                deadlines.add(new Deadline(f.deadline(), a.allocationId(), true));
            }
        } else if (fact instanceof Fact.AllocationReleased f) {
            release(f.allocation().allocationId());
        }
        // PlacementDeferred, RunSucceeded and RunFailed hold nothing: the release that follows frees the devices.
    }

    private void grant(Allocation a) {
        Allocation previous = liveByJob.get(a.jobId());
        if (previous != null) {
            release(previous.allocationId());
        }
        liveByJob.put(a.jobId(), a);
        liveById.put(a.allocationId(), a);
        grantedAttempt.merge(a.jobId(), a.attempt(), Math::max);
        for (PlacedTask p : a.placements()) {
            liveOnNode.computeIfAbsent(p.nodeId(), n -> new ArrayList<>()).add(new Inventory.Holding(a.jobId(), p));
            inventory.take(a.jobId(), p);
        }
    }

    private void release(String allocationId) {
        Allocation a = liveById.remove(allocationId);
        if (a == null) {
            return;
        }
        liveByJob.remove(a.jobId(), a);
        Instant startedAt = started.remove(allocationId);
        if (startedAt != null && a.timeLimitSeconds() != null) {
            deadlines.remove(new Deadline(startedAt.plusSeconds(a.timeLimitSeconds()), allocationId, false));
        }
        Instant grace = stopDeadline.remove(allocationId);
        if (grace != null) {
            deadlines.remove(new Deadline(grace, allocationId, true));
        }
        for (PlacedTask p : a.placements()) {
            List<Inventory.Holding> on = liveOnNode.get(p.nodeId());
            if (on != null) {
                on.removeIf(h -> h.task() == p);
                if (on.isEmpty()) {
                    liveOnNode.remove(p.nodeId());
                }
            }
            inventory.give(a.jobId(), p);
        }
    }

    // ---------------------------------------------------------------- reads

    public InventorySnapshot snapshot() {
        return inventory.snapshot();
    }

    /** The live index (read it on the state's thread only). */
    public Inventory inventory() {
        return inventory;
    }

    public Optional<Allocation> liveAllocation(String jobId) {
        return Optional.ofNullable(liveByJob.get(jobId));
    }

    public Optional<Allocation> allocation(String allocationId) {
        return Optional.ofNullable(liveById.get(allocationId));
    }

    /** Live allocations ordered by job id. */
    public List<Allocation> liveAllocations() {
        return liveById.values().stream().sorted(Comparator.comparing(Allocation::jobId)).toList();
    }

    public boolean isStarted(String allocationId) {
        return started.containsKey(allocationId);
    }

    /** The end of the grace period of a run being preempted. */
    public Optional<Instant> stopDeadline(String allocationId) {
        return Optional.ofNullable(stopDeadline.get(allocationId));
    }

    /** Live allocations being preempted, ordered by job id. */
    public List<Allocation> stopping() {
        return stopDeadline.keySet().stream().map(liveById::get).sorted(Comparator.comparing(Allocation::jobId)).toList();
    }

    /** How many deadlines (grace ends, time limits) are pending. */
    public int pendingDeadlines() {
        return deadlines.size();
    }

    /**
     * Free whole GPUs per model on eligible nodes and the most on one node, models by name: what the queue
     * needs to wake only parked gangs that could fit. Kept incrementally by the index.
     */
    public List<FreeCapacity> freeCapacity() {
        return inventory.freeCapacity();
    }

    public boolean isHealthy(String nodeId) {
        return !failed.contains(nodeId);
    }

    public Collection<NodeSpec> nodes() {
        return List.copyOf(nodes.values());
    }

    /** One allocation per run, the same id for the same run however often it is decided. */
    public static String allocationId(String jobId, int attempt) {
        String key = "gantry-placement/" + jobId + "/" + attempt;
        byte[] bytes = new byte[key.length() * 2];
        for (int i = 0; i < key.length(); i++) {
            bytes[2 * i] = (byte) (key.charAt(i) >> 8);
            bytes[2 * i + 1] = (byte) key.charAt(i);
        }
        return UUID.nameUUIDFromBytes(bytes).toString();
    }

    private static Instant releaseTime(Allocation a, Instant now) {
        return now.isBefore(a.grantedAt()) ? a.grantedAt() : now;
    }

    private static List<PlacedTask> withRunSeconds(GangRequest gang, List<PlacedTask> placements) {
        Map<String, Long> runSeconds = new HashMap<>();
        gang.tasks().forEach(t -> runSeconds.put(t.name(), t.runSeconds()));
        return placements.stream().map(p -> p.withRunSeconds(runSeconds.get(p.task()))).toList();
    }

    /** A placer bug must not corrupt the inventory: refuse anything that is not a clean, complete fit. */
    private void checkPlacements(GangRequest gang, List<PlacedTask> placements) {
        int expected = gang.replicaCount();
        if (placements.size() != expected) {
            throw new IllegalStateException("placer returned " + placements.size() + " placements for " + expected + " tasks");
        }
        Set<String> taken = new HashSet<>();
        for (PlacedTask p : placements) {
            if (!inventory.isEligible(p.nodeId())) {
                throw new IllegalStateException("placer used ineligible node " + p.nodeId());
            }
            for (int i : p.gpuIndices()) {
                if (!inventory.isFree(p.nodeId(), i) || !taken.add(p.nodeId() + "#" + i)) {
                    throw new IllegalStateException("placer used unavailable GPU " + i + " of " + p.nodeId());
                }
            }
            for (GpuShare s : p.gpuShares()) {
                if (!inventory.canShare(p.nodeId(), s.index()) || taken.contains(p.nodeId() + "#" + s.index())) {
                    throw new IllegalStateException("placer shared GPU " + s.index() + " of " + p.nodeId()
                            + ", which is held whole");
                }
            }
        }
    }
}
