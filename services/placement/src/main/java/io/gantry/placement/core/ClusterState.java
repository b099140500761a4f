package io.gantry.placement.core;

import java.time.Duration;
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
    /** When each pending stop was told to its run (see {@link #runEnded}). */
    private final Map<String, Instant> stopNotice = new HashMap<>();
    /** The release reason of each pending stop (PREEMPTED unless the queue stopped the run for idling). */
    private final Map<String, ReleaseCause> stopCause = new HashMap<>();
    /** Every pending deadline (grace ends, time limits), earliest first: a tick reads only the due head. */
    private final TreeSet<Deadline> deadlines = new TreeSet<>();
    /** The free-capacity index placers search; kept in step with every replayed fact. */
    private final Inventory inventory;
    /** Live placements per node id, kept for nodes not registered yet too (replay order is not guaranteed). */
    private final Map<String, List<Inventory.Holding>> liveOnNode = new HashMap<>();
    /** Highest attempt of each job that was ever granted: a dispatch of that attempt or older is stale. */
    private final Map<String, Integer> grantedAttempt = new HashMap<>();
    /**
     * Job id to the nodes where infrastructure failed its earlier runs (a node failure, a hardware fault): its next
     * grant goes elsewhere when it fits elsewhere. Forgotten at that grant and when the job ends.
     */
    private final Map<String, Set<String>> avoid = new HashMap<>();
    /** Cordoned nodes (from their registrations' control label). */
    private final TreeSet<String> cordoned = new TreeSet<>();
    /** Job id to the nodes drained for its capacity reservation (from the registrations' control labels). */
    private final TreeMap<String, TreeSet<String>> reservedNodes = new TreeMap<>();
    /** What an allocation without a time limit is assumed to have left to run when a drain is costed. */
    static final long NO_LIMIT_SECONDS = 1_000_000_000L;

    /**
     * @param backend the execution backend of this placement; only its nodes are placed on
     * @param placer  the placement algorithm
     */
    public ClusterState(String backend, GangPlacer placer) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.placer = Objects.requireNonNull(placer, "placer");
        this.inventory = new Inventory(backend, placer.sharing());
    }

    /** The grace period of a run stopped for a reservation (its tasks get SIGTERM, then the kill). */
    private int drainGraceSeconds = 30;
    /**
     * When each live allocation's run last committed a checkpoint (from {@code admission.checkpoint-events}; not
     * rebuilt at a restore: until its next checkpoint a run counts as one that saved none, which is never stopped).
     */
    private final Map<String, Instant> lastCheckpoint = new HashMap<>();

    /** The run of {@code attempt} of the job committed a checkpoint at {@code at}; nothing for another attempt. */
    public void checkpointCommitted(String jobId, int attempt, Instant at) {
        Allocation a = liveByJob.get(jobId);
        if (a != null && a.attempt() == attempt) {
            lastCheckpoint.merge(a.allocationId(), at, (x, y) -> x.isAfter(y) ? x : y);
        }
    }

    /** The grace period of runs stopped to bound a drain ({@link #stopDrainBlockers}); 30 s unless set. */
    public void drainGrace(int graceSeconds) {
        this.drainGraceSeconds = graceSeconds;
    }

    public GangPlacer placer() {
        return placer;
    }

    public String backend() {
        return backend;
    }

    // ---------------------------------------------------------------- decisions

    /**
     * A node (re-)registers. A node placement already knows keeps its control labels (cordon, reservation) from
     * the previous registration: the backend re-registers every node at start and must not undo an operator's
     * cordon or a drain under way.
     */
    public List<PlacementFact> register(NodeSpec node) {
        NodeSpec previous = nodes.get(node.nodeId());
        return List.of(new PlacementFact.NodeRegistered(previous == null ? node : node.withControlOf(previous)));
    }

    /**
     * A node as the backend lists it now (a node joining after the start, or one whose GPUs or labels changed):
     * registered like {@link #register} when placement does not know it or its spec differs (control labels
     * aside); nothing when it is as registered, so the backend's list can be compared as often as it is read.
     */
    public List<PlacementFact> sync(NodeSpec node) {
        NodeSpec previous = nodes.get(node.nodeId());
        return previous != null && node.withControlOf(previous).equals(previous) ? List.of() : register(node);
    }

    /**
     * A dispatched run: place the whole gang now or defer it; nothing for a job already holding devices.
     * Cordoned nodes and capacity drained for another gang are not placed on (except backfill that ends before
     * that drain does); a gang with a reservation of its own tries its drained nodes first, and its grant ends the
     * reservation.
     */
    public List<PlacementFact> dispatch(GangRequest gang, Instant now) {
        if (liveByJob.containsKey(gang.jobId())) {
            return List.of();
        }
        if (grantedAttempt.getOrDefault(gang.jobId(), 0) >= gang.attempt()) {
            return List.of();
        }
        PlacementDecision decision = null;
        Set<String> avoided = avoid.getOrDefault(gang.jobId(), Set.of());
        if (!avoided.isEmpty()) {
            // elsewhere if it fits there; else where it fits at all (a preference never makes a job wait)
            Set<String> out = new TreeSet<>(cordoned);
            out.addAll(avoided);
            PlacementDecision elsewhere = decide(gang, now, out);
            decision = elsewhere instanceof PlacementDecision.Placed ? elsewhere : null;
        }
        if (decision == null) {
            decision = decide(gang, now);
        }
        if (decision instanceof PlacementDecision.Deferred d) {
            if (cordoned.isEmpty() && reservedNodes.isEmpty()) {
                fittedNothing.put(gang.jobId(), new Unfit(gang.attempt(), null));
            }
            return List.of(new PlacementFact.PlacementDeferred(gang.jobId(), gang.tenant(), gang.attempt(), d.reason(),
                    d.message()));
        }
        List<PlacedTask> placements = withRunSeconds(gang, ((PlacementDecision.Placed) decision).placements());
        placements = placements.stream().map(p -> p.withRdmaNics(p.closestNics(nodes.get(p.nodeId())))).toList();
        checkPlacements(gang, placements);
        Allocation a = new Allocation(allocationId(gang.jobId(), gang.attempt()), gang.jobId(), gang.tenant(),
                gang.attempt(), placements, now, backend, gang.timeLimitSeconds());
        List<PlacementFact> facts = new ArrayList<>();
        facts.add(new PlacementFact.AllocationGranted(a));
        facts.addAll(endReservation(gang.jobId()));
        return facts;
    }

    /**
     * A deferred gang checked again: whether it would be placed now, on its own, and {@code onlyPlace}, when known,
     * the one node it fits on and what that node has free (null: unknown, or several nodes).
     */
    public record DeferredCheck(String jobId, int attempt, boolean fits, Room onlyPlace) {
        public DeferredCheck(String jobId, int attempt, boolean fits) {
            this(jobId, attempt, fits, null);
        }
    }

    /** A node and what it has free: whole GPUs, the thousandths free of each shared GPU, CPU millicores, memory. */
    public record Room(String node, int freeGpus, List<Integer> partFreeMilli, long freeCpuMillis,
                       long freeMemoryMiB) {
        public Room {
            Objects.requireNonNull(node, "node");
            partFreeMilli = List.copyOf(partFreeMilli);
        }
    }

    /**
     * Checks gangs deferred earlier against the capacity now, in the order given (the longest-deferred first):
     * whether each would be placed now, on its own. Changes nothing. This is what lets the queue wake only the parked
     * gangs that fit, where the free-capacity summary cannot tell (GPUs, CPU and memory free on different nodes).
     *
     * <p>Each on its own, never holding capacity for one while checking the next: the queue may not dispatch a gang
     * that fits (quota, order), so a "no" must stay exact or a parked gang would wait for nothing. What keeps it
     * cheap: gangs that ask for the same thing (tasks, topology, time limit, checkpoints, policy) and hold no
     * reservation of their own fit alike, so a shape is tried once; a gang that needs at least as much of everything
     * as one that did not fit does not fit either; a one-replica gang that fitted nothing when last looked at (the
     * last check, or its deferral since), or nothing but the one node the last check named, is looked at again only
     * on the nodes changed since (and that node); trials skip working out why a gang does not fit. At most
     * {@code trials} trial placements, over at most {@code scanned} gangs.
     */
    public List<DeferredCheck> checkDeferred(Iterable<GangRequest> deferred, Instant now, int trials, int scanned) {
        List<DeferredCheck> out = new ArrayList<>();
        // shapes are interned (shapeOf), so these compare them by identity instead of hashing their task lists
        Map<GangShape, Boolean> alone = new java.util.IdentityHashMap<>();
        List<GangShape> failed = new ArrayList<>();
        if (shapes.size() > 4L * Math.max(256, scanned)) {
            shapes.clear(); // gangs long placed or forgotten: start over rather than keep them
            internedShapes.clear();
        }
        boolean plain = cordoned.isEmpty() && reservedNodes.isEmpty();
        Map<String, String> onlyNode = new HashMap<>();
        Set<String> stillNothing = plain ? fitNothingYet(deferred, scanned, onlyNode) : Set.of();
        Map<String, Unfit> noneNow = new HashMap<>();
        int seen = 0;
        int left = trials;
        for (GangRequest g : deferred) {
            if (liveByJob.containsKey(g.jobId()) || grantedAttempt.getOrDefault(g.jobId(), 0) >= g.attempt()) {
                continue;
            }
            if (seen++ >= scanned) {
                break;
            }
            // a gang with a reservation of its own is placed there first: its answer is its own
            GangShape shape = activeReservation(g.jobId()) ? null : shapeOf(g);
            Boolean fits = shape == null ? null : alone.get(shape);
            if (fits == null && shape != null && (stillNothing.contains(g.jobId())
                    || needsAtLeastAFailed(shape, failed))) {
                fits = false; // exact: what it needs is in the shape, so alike gangs fit nowhere either
            }
            if (fits == null) {
                if (left-- <= 0) {
                    continue;
                }
                fits = placement(g, now) != null;
            }
            if (shape != null && alone.put(shape, fits) == null && !fits) {
                failed.add(shape);
            }
            String only = fits ? onlyNode.get(g.jobId()) : null;
            if (plain && (!fits || only != null)) {
                // fits nowhere, or nowhere but there: the next check looks only at that and what changes after this
                noneNow.put(g.jobId(), new Unfit(g.attempt(), only));
            }
            out.add(new DeferredCheck(g.jobId(), g.attempt(), fits, only == null ? null : inventory.roomOn(only)));
        }
        // what fitted nothing now, on the inventory as it is now: the next check looks at what changes after this
        fittedNothing.clear();
        fittedNothing.putAll(noneNow);
        inventory.forgetTouched();
        return out;
    }

    /**
     * The gang's shape, one instance per distinct shape: the check runs after every release over up to a thousand
     * parked gangs, and building and hashing each one's shape anew was most of its cost. Kept by gang instance (the
     * deferred gangs are the same objects from one check to the next) until {@link #checkDeferred} starts over.
     */
    private GangShape shapeOf(GangRequest g) {
        GangShape s = shapes.get(g);
        if (s == null) {
            GangShape fresh = GangShape.of(g);
            GangShape known = internedShapes.putIfAbsent(fresh, fresh);
            s = known == null ? fresh : known;
            shapes.put(g, s);
        }
        return s;
    }

    private final Map<GangRequest, GangShape> shapes = new java.util.IdentityHashMap<>();
    private final Map<GangShape, GangShape> internedShapes = new HashMap<>();

    /**
     * Gangs known to have fitted no node (but the one named) when last looked at (at the last check, or deferred
     * since), with no cordon or reservation then or now: each change since is on a node the inventory marked as
     * touched. Only the inventory's changes are; so only such plain states are trusted.
     */
    private final Map<String, Unfit> fittedNothing = new HashMap<>();

    /** An attempt that fitted no node when last looked at, except perhaps {@code except} (null: none). */
    private record Unfit(int attempt, String except) {
    }

    /**
     * Of the gangs that fitted nothing when last looked at, those that still fit none of the nodes changed since
     * (the placer can tell for one replica): they fit nowhere now, without a trial over the whole pool. Those that
     * might fit just one of them go into {@code onlyNode}: if they fit now, it is there and nowhere else.
     */
    private Set<String> fitNothingYet(Iterable<GangRequest> deferred, int scanned, Map<String, String> onlyNode) {
        Set<String> out = new HashSet<>();
        Set<String> touched = inventory.touched();
        int seen = 0;
        for (GangRequest g : deferred) {
            if (seen++ >= scanned) {
                break;
            }
            Unfit unfit = fittedNothing.get(g.jobId());
            if (unfit == null || unfit.attempt() != g.attempt()) {
                continue;
            }
            Set<String> where = touched;
            if (unfit.except() != null && !touched.contains(unfit.except())) {
                where = new java.util.LinkedHashSet<>(touched);
                where.add(unfit.except());
            }
            Set<String> some = placer.mightFitNodes(inventory, g, where, 2);
            if (some != null && some.isEmpty()) {
                out.add(g.jobId());
            } else if (some != null && some.size() == 1) {
                onlyNode.put(g.jobId(), some.iterator().next());
            }
        }
        return out;
    }

    private static boolean needsAtLeastAFailed(GangShape shape, List<GangShape> failed) {
        for (GangShape f : failed) {
            if (shape.needsAtLeast(f)) {
                return true;
            }
        }
        return false;
    }

    /** The first {@code limit} deferred gangs ({@link #checkDeferred(Iterable, Instant, int, int)}). */
    public List<DeferredCheck> checkDeferred(Iterable<GangRequest> deferred, Instant now, int limit) {
        return checkDeferred(deferred, now, limit, limit);
    }

    /**
     * What a placement decision depends on besides the job's identity (no reservation of its own): per task group
     * what it needs (not its name or run time), the topology, the time limit and declared checkpoints (backfill on
     * drained nodes) and the policy.
     */
    private record GangShape(List<TaskNeed> tasks, Topology topology, Long timeLimitSeconds, PlacementPolicy policy,
                             boolean checkpoints) {
        static GangShape of(GangRequest g) {
            return new GangShape(g.tasks().stream().map(TaskNeed::of).toList(), g.topology(), g.timeLimitSeconds(),
                    g.policy(), g.checkpoints());
        }

        /** Whether this gang needs at least as much as {@code other} everywhere: if {@code other} does not fit, neither does it. */
        boolean needsAtLeast(GangShape other) {
            if (!topology.equals(other.topology) || !Objects.equals(timeLimitSeconds, other.timeLimitSeconds)
                    || policy != other.policy || checkpoints != other.checkpoints || tasks.size() != other.tasks.size()) {
                return false;
            }
            for (int i = 0; i < tasks.size(); i++) {
                if (!tasks.get(i).atLeast(other.tasks.get(i))) {
                    return false;
                }
            }
            return true;
        }
    }

    private record TaskNeed(int replicas, int gpus, int cpuMillis, long memoryMiB, Integer gpuMilli, Long gpuMemoryMiB,
                            String gpuModel, List<String> gpuModels, String gpuTier, String migProfile) {
        static TaskNeed of(TaskGroup t) {
            return new TaskNeed(t.replicas(), t.gpus(), t.cpuMillis(), t.memoryMiB(), t.gpuMilli(), t.gpuMemoryMiB(),
                    t.gpuModel(), t.gpuModels(), t.gpuTier(), t.migProfile());
        }

        boolean atLeast(TaskNeed o) {
            return replicas >= o.replicas && gpus >= o.gpus && cpuMillis >= o.cpuMillis && memoryMiB >= o.memoryMiB
                    && atLeast(gpuMilli, o.gpuMilli) && atLeast(gpuMemoryMiB, o.gpuMemoryMiB)
                    && Objects.equals(gpuModel, o.gpuModel) && gpuModels.equals(o.gpuModels)
                    && Objects.equals(gpuTier, o.gpuTier) && Objects.equals(migProfile, o.migProfile);
        }

        private static <N extends Number> boolean atLeast(N mine, N theirs) {
            return mine == null ? theirs == null : theirs != null && mine.longValue() >= theirs.longValue();
        }
    }

    private PlacementDecision decide(GangRequest gang, Instant now) {
        return decide(gang, now, cordoned);
    }

    /** The placement {@link #decide} would make, or null, without working out why not where it can skip that. */
    private PlacementDecision.Placed placement(GangRequest gang, Instant now) {
        if (cordoned.isEmpty() && reservedNodes.isEmpty()) {
            return placer.tryPlace(inventory, gang);
        }
        return decide(gang, now) instanceof PlacementDecision.Placed p ? p : null;
    }

    /**
     * The decision with {@code excluded} in the place of the cordoned nodes: out of the search, and named as cordoned
     * when the gang would fit only with them.
     */
    private PlacementDecision decide(GangRequest gang, Instant now, Set<String> excluded) {
        if (excluded.isEmpty() && reservedNodes.isEmpty()) {
            return placer.place(inventory, gang); // the common case costs nothing extra
        }
        TreeSet<String> own = activeReservation(gang.jobId()) ? reservedNodes.get(gang.jobId()) : null;
        List<CapacityReservation> blocking = new ArrayList<>();
        Set<String> reserved = new TreeSet<>();
        for (String job : reservedNodes.keySet()) {
            if (!job.equals(gang.jobId()) && activeReservation(job) && !mayBackfill(gang, job, now)) {
                blocking.add(reservation(job).orElseThrow());
                reserved.addAll(reservedNodes.get(job));
            }
        }
        if (own != null) {
            Set<String> outside = new HashSet<>(nodes.keySet());
            outside.removeAll(own);
            outside.addAll(excluded);
            PlacementDecision there = placeWithout(gang, outside);
            if (there instanceof PlacementDecision.Placed) {
                return there;
            }
        }
        Set<String> hidden = new TreeSet<>(excluded);
        hidden.addAll(reserved);
        PlacementDecision d = placeWithout(gang, hidden);
        if (d instanceof PlacementDecision.Placed || (own == null && hidden.isEmpty())) {
            return d;
        }
        if (own != null) {
            CapacityReservation r = reservation(gang.jobId()).orElseThrow();
            return new PlacementDecision.Deferred(DeferralCause.DRAINING, "reserved: waiting for node drain of "
                    + r.domain() + " (" + estimatePhrase(estimate(gang.jobId(), now), now) + ")");
        }
        PlacementDecision whole = null; // the whole pool's answer, when already known
        PlacementDecision withReserved = reserved.isEmpty() ? null : placeWithout(gang, excluded);
        if (excluded.isEmpty()) {
            whole = withReserved;
        }
        if (withReserved instanceof PlacementDecision.Placed) {
            StringBuilder m = new StringBuilder("would fit only on capacity reserved for ");
            for (int i = 0; i < blocking.size() && i < 3; i++) {
                CapacityReservation r = blocking.get(i);
                m.append(i == 0 ? "" : "; ").append("job ").append(r.jobId()).append(" (").append(r.domain())
                        .append(", drain ").append(estimatePhrase(estimate(r.jobId(), now), now)).append(")");
            }
            if (blocking.size() > 3) {
                m.append(" and ").append(blocking.size() - 3).append(" more");
            }
            m.append("; a run whose time limit ends before the drain may use it");
            return new PlacementDecision.Deferred(DeferralCause.RESERVED, m.toString());
        }
        if (!excluded.isEmpty()) {
            PlacementDecision withCordoned = placeWithout(gang, reserved);
            boolean needsBoth = false;
            if (!(withCordoned instanceof PlacementDecision.Placed) && !reserved.isEmpty()) {
                withCordoned = placer.place(inventory, gang);
                needsBoth = true;
            }
            if (withCordoned instanceof PlacementDecision.Placed) {
                List<String> names = new ArrayList<>(excluded);
                String list = String.join(", ", names.subList(0, Math.min(5, names.size())))
                        + (names.size() > 5 ? " and " + (names.size() - 5) + " more" : "");
                return new PlacementDecision.Deferred(DeferralCause.CORDONED, "would fit only with cordoned nodes ("
                        + list + ")" + (needsBoth ? " and capacity reserved for other gangs" : ""));
            }
            return withCordoned;
        }
        return whole != null ? whole : placer.place(inventory, gang);
    }

    /** The placer's answer with {@code hidden} nodes out of the search; the index is left as it was. */
    private PlacementDecision placeWithout(GangRequest gang, Set<String> hidden) {
        if (hidden.isEmpty()) {
            return placer.place(inventory, gang);
        }
        hidden.forEach(inventory::block);
        try {
            return placer.place(inventory, gang);
        } finally {
            hidden.forEach(inventory::unblock);
        }
    }

    // ---------------------------------------------------------------- cordon, reservations

    /** Cordon (or uncordon) a node: it gets no new work, running work continues. Nothing when already so. */
    public List<PlacementFact> cordon(String nodeId, boolean cordon) {
        return cordon(nodeId, cordon, null);
    }

    /**
     * Like {@link #cordon(String, boolean)}, recording why ({@code reason} null: none recorded); an uncordon clears
     * the reason unless GPUs of the node stay cordoned.
     */
    public List<PlacementFact> cordon(String nodeId, boolean cordon, String reason) {
        NodeSpec n = nodes.get(nodeId);
        if (n == null || n.cordoned() == cordon) {
            return List.of();
        }
        NodeSpec after = n.withLabel(NodeSpec.CORDONED_LABEL, cordon ? "true" : null);
        if (cordon && reason != null) {
            after = after.withLabel(NodeSpec.CORDON_REASON_LABEL, reason);
        } else if (!cordon && n.cordonedGpus().isEmpty()) {
            after = after.withLabel(NodeSpec.CORDON_REASON_LABEL, null);
        }
        return List.of(new PlacementFact.NodeRegistered(after));
    }

    /**
     * The queue asks to reserve capacity for a starving gang. Picks the cheapest domain of the gang's required
     * level where the gang would fit once the allocations running there were gone ("cheapest": the least
     * GPU-seconds still to run there by their time limits, one without a limit counting {@value #NO_LIMIT_SECONDS}
     * s; then fewer allocations; then domain order), and drains the nodes the gang would use there. Within a
     * domain nodes are taken cheapest first, so free capacity is used before busy nodes are drained. Nothing when
     * the job holds an allocation, was granted this attempt, already has a reservation, or fits nowhere even
     * empty (cordoned and otherwise reserved nodes are not considered).
     */
    public List<PlacementFact> reserve(GangRequest gang, Instant now) {
        return reserve(gang, now, null);
    }

    /**
     * {@link #reserve(GangRequest, Instant)} with a bound on the drain: {@code maxDrain} (null: only wait) is recorded
     * on the drained nodes, and {@link #stopDrainBlockers} stops what would hold them longer.
     */
    public List<PlacementFact> reserve(GangRequest gang, Instant now, Duration maxDrain) {
        String job = gang.jobId();
        if (liveByJob.containsKey(job) || grantedAttempt.getOrDefault(job, 0) >= gang.attempt()
                || reservedNodes.containsKey(job)) {
            return List.of();
        }
        TopologyLevel level = gang.topology().required();
        Map<String, List<NodeSpec>> domains = new TreeMap<>();
        for (NodeSpec n : nodes.values()) {
            String reservedFor = n.reservedFor();
            if (!inventory.isEligible(n.nodeId()) || n.cordoned()
                    || (reservedFor != null && activeReservation(reservedFor))) {
                continue;
            }
            String key = switch (level) {
                case NVLINK, NODE -> "node " + n.nodeId();
                case RACK -> "rack " + (n.spine().equals(NodeSpec.UNLABELLED) ? n.rack() : n.spine() + "/" + n.rack());
                case SPINE -> "spine " + n.spine();
                case CLUSTER -> "";
            };
            domains.computeIfAbsent(key, k -> new ArrayList<>()).add(n);
        }
        Drain best = null;
        for (Map.Entry<String, List<NodeSpec>> e : domains.entrySet()) {
            Drain d = drain(gang, e.getKey(), e.getValue(), now);
            if (d != null && (best == null || d.compareTo(best) < 0)) {
                best = d;
            }
        }
        if (best == null) {
            return List.of();
        }
        String domain = best.domain().isEmpty() ? (best.nodes().size() == 1 ? "node " : "nodes ")
                + String.join(", ", best.nodes()) : best.domain();
        List<PlacementFact> facts = new ArrayList<>();
        for (String id : best.nodes()) {
            NodeSpec n = nodes.get(id).withLabel(NodeSpec.RESERVED_FOR_LABEL, job)
                    .withLabel(NodeSpec.RESERVED_TENANT_LABEL, gang.tenant())
                    .withLabel(NodeSpec.RESERVED_ATTEMPT_LABEL, Integer.toString(gang.attempt()))
                    .withLabel(NodeSpec.RESERVED_DOMAIN_LABEL, domain)
                    .withLabel(NodeSpec.RESERVED_AT_LABEL, Long.toString(now.toEpochMilli()))
                    .withLabel(NodeSpec.RESERVED_MAX_DRAIN_LABEL,
                            maxDrain == null ? null : Long.toString(maxDrain.toSeconds()));
            facts.add(new PlacementFact.NodeRegistered(n));
        }
        return facts;
    }

    /** A candidate drain: its cost (milli-GPU-seconds still to run), blocking allocations, domain and nodes. */
    private record Drain(long cost, int allocations, String domain, List<String> nodes) implements Comparable<Drain> {
        @Override
        public int compareTo(Drain o) {
            int c = Long.compare(cost, o.cost);
            if (c == 0) {
                c = Integer.compare(allocations, o.allocations);
            }
            if (c == 0) {
                c = domain.compareTo(o.domain);
            }
            return c != 0 ? c : String.join(",", nodes).compareTo(String.join(",", o.nodes));
        }
    }

    /** The cheapest set of nodes of one domain the gang fits once emptied, or null when it never fits there. */
    private Drain drain(GangRequest gang, String domain, List<NodeSpec> candidates, Instant now) {
        Map<String, Long> cost = new HashMap<>();
        Map<String, Set<String>> blockers = new HashMap<>();
        for (NodeSpec n : candidates) {
            long c = 0;
            Set<String> allocs = new TreeSet<>();
            for (Inventory.Holding h : liveOnNode.getOrDefault(n.nodeId(), List.of())) {
                Allocation a = liveByJob.get(h.jobId());
                if (a == null) {
                    continue;
                }
                allocs.add(a.allocationId());
                Instant end = runEnd(a);
                // a limit further off than NO_LIMIT_SECONDS still costs less than none
                long left = end == null ? NO_LIMIT_SECONDS
                        : Math.min(NO_LIMIT_SECONDS - 1, Math.max(0, java.time.Duration.between(now, end).toSeconds()));
                c = TimeMath.saturatedAdd(c, TimeMath.saturatedMultiply(Math.max(1, h.task().gpuMilli()), left));
            }
            cost.put(n.nodeId(), c);
            blockers.put(n.nodeId(), allocs);
        }
        List<NodeSpec> order = new ArrayList<>(candidates);
        order.sort(Comparator.comparingLong((NodeSpec n) -> cost.get(n.nodeId()))
                .thenComparingInt(n -> blockers.get(n.nodeId()).size()).thenComparing(NodeSpec::nodeId));
        Inventory trial = new Inventory(backend, placer.sharing());
        int gpus = 0;
        for (NodeSpec n : order) {
            trial.put(n, true, List.of());
            gpus += n.gpuCount();
            if (gpus < gang.totalGpus()) {
                continue;
            }
            if (placer.place(trial, gang) instanceof PlacementDecision.Placed p) {
                TreeSet<String> used = new TreeSet<>();
                p.placements().forEach(t -> used.add(t.nodeId()));
                long total = 0;
                Set<String> allocs = new HashSet<>();
                for (String id : used) {
                    total = TimeMath.saturatedAdd(total, cost.get(id));
                    allocs.addAll(blockers.get(id));
                }
                return new Drain(total, allocs.size(), domain, List.copyOf(used));
            }
        }
        return null;
    }

    /**
     * Bounds the drain of {@code gang}'s reservation: the runs on its drained nodes that will end within the
     * reservation's maxDrain of {@code now} (by their time limits, or a stop under way) are waited for; of the
     * others, only runs that committed a checkpoint can be stopped (they resume from it; one that saved none would
     * start over), the fewest the gang needs gone, those losing the least GPU time since their checkpoint first, each
     * by a PreemptionRequested due after the drain grace period. Nothing when the reservation only waits (no bound
     * recorded), does not count, the gang fits once the waited-for runs are gone, or it would not fit even with
     * every checkpointed run stopped (then the drain waits, and a later checkpoint calls this again).
     * Idempotent: the handler calls it after the reservation and again after a restore.
     */
    public List<PlacementFact> stopDrainBlockers(GangRequest gang, Instant now) {
        String job = gang.jobId();
        if (!activeReservation(job)) {
            return List.of();
        }
        TreeSet<String> on = reservedNodes.get(job);
        String seconds = nodes.get(on.first()).labels().get(NodeSpec.RESERVED_MAX_DRAIN_LABEL);
        if (seconds == null) {
            return List.of();
        }
        Instant bound;
        try {
            bound = TimeMath.plusSeconds(now, Long.parseLong(seconds));
        } catch (NumberFormatException e) {
            return List.of(); // a label written by hand: only wait
        }
        Map<String, Allocation> blockers = new TreeMap<>();
        for (String id : on) {
            for (Inventory.Holding h : liveOnNode.getOrDefault(id, List.of())) {
                Allocation a = liveByJob.get(h.jobId());
                Instant end = a == null ? null : runEnd(a);
                if (a != null && !a.jobId().equals(job) && (end == null || end.isAfter(bound))) {
                    blockers.put(a.allocationId(), a);
                }
            }
        }
        List<Allocation> order = new ArrayList<>();
        for (Allocation a : blockers.values()) {
            if (lastCheckpoint.containsKey(a.allocationId())) {
                order.add(a);
            }
        }
        if (order.isEmpty()) {
            return List.of();
        }
        List<Allocation> stop = fewestToStop(gang, on, blockers.keySet(), List.of(), order, now);
        if (stop == null) {
            return List.of(); // runs that saved no checkpoint are in the way too: wait for them
        }
        long minutes = Math.max(1, (Long.parseLong(seconds) + 59) / 60);
        return stopRequests(stop, on, now, " drain for job " + job + ", which has waited too long; the drain is bounded"
                + " to " + minutes + " min, so this run stops and resumes from its last checkpoint");
    }

    /**
     * The fewest of {@code candidates} to stop, those losing the least GPU time since their last checkpoint (or
     * their start) first, so that the gang fits on the drained nodes {@code on} with them and the runs already
     * {@code leaving} gone (any stop it turns out not to need given back, newest choice first); null when it does not
     * fit even with all of them gone.
     */
    private List<Allocation> fewestToStop(GangRequest gang, Set<String> on, Set<String> blockers,
                                          List<Allocation> leaving, List<Allocation> candidates, Instant now) {
        List<Allocation> order = new ArrayList<>(candidates);
        order.sort(Comparator.comparingLong((Allocation a) -> lostSinceCheckpoint(a, now))
                .thenComparing(Allocation::allocationId));
        List<Allocation> stop = new ArrayList<>(leaving);
        for (Allocation a : order) {
            if (fitsOnDrained(gang, on, blockers, stop)) {
                break;
            }
            stop.add(a);
        }
        if (!fitsOnDrained(gang, on, blockers, stop)) {
            return null;
        }
        for (int i = stop.size() - 2; i >= leaving.size(); i--) {
            Allocation a = stop.remove(i);
            if (!fitsOnDrained(gang, on, blockers, stop)) {
                stop.add(i, a);
            }
        }
        return stop.subList(leaving.size(), stop.size());
    }

    /** A stop after the drain grace period for each run, saying which drained nodes it held and {@code why}. */
    private List<PlacementFact> stopRequests(List<Allocation> stop, Set<String> on, Instant now, String why) {
        List<PlacementFact> facts = new ArrayList<>();
        for (Allocation a : stop) {
            List<String> held = a.placements().stream().map(PlacedTask::nodeId).filter(on::contains).distinct()
                    .sorted().toList();
            Instant notice = now.isBefore(a.grantedAt()) ? a.grantedAt() : now;
            facts.add(new PlacementFact.PreemptionRequested(a, notice, TimeMath.plusSeconds(notice, drainGraceSeconds),
                    (held.size() == 1 ? "node " : "nodes ") + String.join(", ", held) + why));
        }
        return facts;
    }

    /**
     * Reservations whose gang would fit on their drained nodes once the runs that borrowed them are gone: no new run
     * borrows there. Transient (recomputed by {@link #stopBorrowers} after every release and at a restore).
     */
    private final Set<String> dueReservations = new HashSet<>();

    /** When the reservation of {@code jobId} began (its nodes' label), or null when unknown or none. */
    private Instant reservedAt(String jobId) {
        TreeSet<String> on = reservedNodes.get(jobId);
        String at = on == null ? null : nodes.get(on.first()).labels().get(NodeSpec.RESERVED_AT_LABEL);
        try {
            return at == null ? null : Instant.ofEpochMilli(Long.parseLong(at));
        } catch (NumberFormatException e) {
            return null; // a label written by hand: no borrowing
        }
    }

    /**
     * When the gang of a reservation is due — it fits on the drained nodes once the runs that borrowed them are gone
     * (the runs that were there before the reservation having ended, or leaving room) — stops the fewest borrowers
     * it needs gone, those losing the least GPU time since their last checkpoint (or their start) first, each after
     * the drain grace period; the others keep running. Nothing while the gang is not due, or when it fits already.
     * Idempotent: runs already being stopped are not asked again, and count as gone. The handler calls it after
     * every release, after a reservation and after a restore.
     */
    public List<PlacementFact> stopBorrowers(GangRequest gang, Instant now) {
        String job = gang.jobId();
        Instant at = reservedAt(job);
        if (!activeReservation(job) || at == null) {
            dueReservations.remove(job);
            return List.of();
        }
        TreeSet<String> on = reservedNodes.get(job);
        Map<String, Allocation> there = new TreeMap<>();
        List<Allocation> borrowers = new ArrayList<>();
        List<Allocation> leaving = new ArrayList<>();
        for (String id : on) {
            for (Inventory.Holding h : liveOnNode.getOrDefault(id, List.of())) {
                Allocation a = liveByJob.get(h.jobId());
                if (a == null || a.jobId().equals(job) || there.put(a.allocationId(), a) != null) {
                    continue;
                }
                if (stopDeadline.containsKey(a.allocationId())) {
                    leaving.add(a);
                } else if (a.grantedAt().isAfter(at)) {
                    borrowers.add(a);
                }
            }
        }
        List<Allocation> all = new ArrayList<>(leaving);
        all.addAll(borrowers);
        if (!fitsOnDrained(gang, on, there.keySet(), all)) {
            dueReservations.remove(job);
            return List.of(); // what was there before the reservation is still in the way: keep lending
        }
        dueReservations.add(job);
        List<Allocation> stop = fewestToStop(gang, on, there.keySet(), leaving, borrowers, now);
        return stopRequests(stop, on, now, " were lent to this run while they drained for job " + job
                + ", which is due now; this run stops and resumes from its last checkpoint");
    }

    /**
     * Thousandths of a GPU x seconds since the run's last checkpoint (its start when it saved none): what stopping it
     * now would lose.
     */
    private long lostSinceCheckpoint(Allocation a, Instant now) {
        Instant from = lastCheckpoint.getOrDefault(a.allocationId(), a.grantedAt());
        long seconds = Math.max(0, java.time.Duration.between(from, now).toSeconds());
        long milli = a.placements().stream().mapToLong(PlacedTask::gpuMilli).sum();
        return TimeMath.saturatedMultiply(Math.max(1, milli), seconds);
    }

    /**
     * Whether the gang fits on the drained nodes {@code on} once the runs there that are not {@code blockers} (they
     * end within the bound) and the {@code stopped} ones are gone.
     */
    private boolean fitsOnDrained(GangRequest gang, Set<String> on, Set<String> blockers, List<Allocation> stopped) {
        Set<String> gone = new HashSet<>();
        stopped.forEach(a -> gone.add(a.allocationId()));
        Inventory trial = new Inventory(backend, placer.sharing());
        for (String id : on) {
            List<Inventory.Holding> staying = new ArrayList<>();
            for (Inventory.Holding h : liveOnNode.getOrDefault(id, List.of())) {
                Allocation a = liveByJob.get(h.jobId());
                if (a != null && blockers.contains(a.allocationId()) && !gone.contains(a.allocationId())) {
                    staying.add(h);
                }
            }
            trial.put(nodes.get(id), inventory.isEligible(id), staying);
        }
        return placer.place(trial, gang) instanceof PlacementDecision.Placed;
    }

    /** The queue no longer needs the reservation of {@code attempt} (or older) of the job. */
    public List<PlacementFact> cancelReservation(String jobId, int attempt) {
        Optional<CapacityReservation> r = reservation(jobId);
        if (r.isEmpty() || r.get().attempt() > attempt) {
            return List.of();
        }
        return endReservation(jobId);
    }

    private List<PlacementFact> endReservation(String jobId) {
        dueReservations.remove(jobId);
        TreeSet<String> on = reservedNodes.get(jobId);
        if (on == null) {
            return List.of();
        }
        List<PlacementFact> facts = new ArrayList<>();
        for (String id : on) {
            NodeSpec n = nodes.get(id).withLabel(NodeSpec.RESERVED_FOR_LABEL, null)
                    .withLabel(NodeSpec.RESERVED_TENANT_LABEL, null).withLabel(NodeSpec.RESERVED_ATTEMPT_LABEL, null)
                    .withLabel(NodeSpec.RESERVED_DOMAIN_LABEL, null).withLabel(NodeSpec.RESERVED_AT_LABEL, null)
                    .withLabel(NodeSpec.RESERVED_MAX_DRAIN_LABEL, null);
            facts.add(new PlacementFact.NodeRegistered(n));
        }
        return facts;
    }

    /** A reservation still counts while its job holds nothing and its attempt was not granted. */
    private boolean activeReservation(String jobId) {
        Optional<CapacityReservation> r = reservation(jobId);
        return r.isPresent() && !liveByJob.containsKey(jobId)
                && grantedAttempt.getOrDefault(jobId, 0) < r.get().attempt();
    }

    /**
     * Backfill: a run whose time limit ends no later than the drain of {@code jobId}'s reservation is expected to; or
     * a run of a job that declares checkpoints, which borrows the drained GPUs until the gang is due (then it is
     * stopped, {@link #stopBorrowers}), so a drain whose end nobody knows does not hold GPUs idle meanwhile.
     */
    private boolean mayBackfill(GangRequest gang, String jobId, Instant now) {
        if (gang.checkpoints() && reservedAt(jobId) != null && !dueReservations.contains(jobId)) {
            return true;
        }
        Instant ends = TimeMath.deadline(now, gang.timeLimitSeconds());
        if (ends == null) {
            return false;
        }
        Instant drained = estimate(jobId, now);
        return drained != null && !ends.isAfter(drained);
    }

    /**
     * When the drain for {@code jobId} is expected to end: when the last allocation on its nodes (other than the
     * job's own, and runs that borrowed them: they leave when the gang is due) reaches its time limit; {@code now}
     * when none is left; null (unknown) when one has no limit.
     */
    public Instant estimate(String jobId, Instant now) {
        Instant end = now;
        Set<String> seen = new HashSet<>();
        Instant lentFrom = reservedAt(jobId);
        for (String id : reservedNodes.getOrDefault(jobId, new TreeSet<>())) {
            for (Inventory.Holding h : liveOnNode.getOrDefault(id, List.of())) {
                Allocation a = liveByJob.get(h.jobId());
                if (a == null || a.jobId().equals(jobId) || !seen.add(a.allocationId())) {
                    continue;
                }
                if (lentFrom != null && a.grantedAt().isAfter(lentFrom) && a.timeLimitSeconds() == null
                        && !stopDeadline.containsKey(a.allocationId())) {
                    continue; // a borrower: it leaves when the gang is due, so it does not make the drain longer
                }
                Instant e = runEnd(a);
                if (e == null) {
                    return null;
                }
                end = e.isAfter(end) ? e : end;
            }
        }
        return end;
    }

    /** When the run ends at the latest: its time limit, or sooner the end of a stop under way; null: unknown. */
    private Instant runEnd(Allocation a) {
        Instant limit = TimeMath.deadline(started.getOrDefault(a.allocationId(), a.grantedAt()), a.timeLimitSeconds());
        Instant stop = stopDeadline.get(a.allocationId());
        return stop != null && (limit == null || stop.isBefore(limit)) ? stop : limit;
    }

    private static String estimatePhrase(Instant estimate, Instant now) {
        if (estimate == null) {
            return "est. unknown: a run there has no time limit";
        }
        long seconds = Math.max(0, java.time.Duration.between(now, estimate).toSeconds());
        return "est. " + (seconds + 59) / 60 + " min";
    }

    public boolean knows(String nodeId) {
        return nodes.containsKey(nodeId);
    }

    public boolean isCordoned(String nodeId) {
        return cordoned.contains(nodeId);
    }

    /** The job's capacity reservation, as its nodes' labels record it (also one that no longer counts). */
    public Optional<CapacityReservation> reservation(String jobId) {
        TreeSet<String> on = reservedNodes.get(jobId);
        if (on == null) {
            return Optional.empty();
        }
        NodeSpec first = nodes.get(on.first());
        int attempt;
        try {
            attempt = Integer.parseInt(first.labels().getOrDefault(NodeSpec.RESERVED_ATTEMPT_LABEL, "1"));
        } catch (NumberFormatException e) {
            attempt = 1;
        }
        return Optional.of(new CapacityReservation(jobId, first.labels().getOrDefault(NodeSpec.RESERVED_TENANT_LABEL, ""),
                attempt, first.labels().getOrDefault(NodeSpec.RESERVED_DOMAIN_LABEL, "node " + first.nodeId()),
                List.copyOf(on)));
    }

    /**
     * Whole GPUs free on the drained nodes of the reservations that still count: capacity held idle for starving
     * gangs (the simulator integrates it into idle GPU-hours under reservations).
     */
    public int idleReservedGpus() {
        int idle = 0;
        for (Map.Entry<String, TreeSet<String>> r : reservedNodes.entrySet()) {
            if (activeReservation(r.getKey())) {
                for (String id : r.getValue()) {
                    idle += inventory.freeGpus(id);
                }
            }
        }
        return idle;
    }

    /** Reservations that still hold capacity, by job id. */
    public List<CapacityReservation> reservations() {
        return reservedNodes.keySet().stream().filter(this::activeReservation)
                .map(j -> reservation(j).orElseThrow()).toList();
    }

    public List<PlacementFact> runStarted(String allocationId, Instant now) {
        Allocation a = liveById.get(allocationId);
        if (a == null || started.containsKey(allocationId)) {
            return List.of();
        }
        return List.of(new PlacementFact.RunStarted(a, now));
    }

    /**
     * The backend's outcome; ignored when the allocation was already released (cancelled, node failed). A run that
     * ended once its stop was told (the notice, SIGTERM) ended as that stop, whatever its exit code: a task that saves
     * its state and exits 0 on the notice (as the guide shows) was stopped, not done, so the run is released with the
     * stop's cause ({@code PREEMPTED}: requeued from its newest checkpoint) and no outcome. A success that finished
     * before the notice stands, even when reported after it, and so does one the backend knows the run reached on its
     * own ({@link RunResult#onItsOwn()}: a simulated run's modelled end). A run the backend lost
     * ({@link RunResult#lost()}) is released {@code NODE_FAILED} with no outcome: recovery requeues it.
     */
    public List<PlacementFact> runEnded(String allocationId, RunResult result) {
        Allocation a = liveById.get(allocationId);
        if (a == null) {
            return List.of();
        }
        Instant at = result.finishedAt().isBefore(a.grantedAt()) ? a.grantedAt() : result.finishedAt();
        Instant notice = stopNotice.get(allocationId);
        if (notice != null && (!result.succeeded() || !result.onItsOwn() && !at.isBefore(notice))) {
            return List.of(new PlacementFact.AllocationReleased(a, stopCause(allocationId), at));
        }
        if (result.succeeded()) {
            return List.of(new PlacementFact.RunSucceeded(a, at), new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_SUCCEEDED, at));
        }
        if (result.lost()) {
            // not the job's failure: released as a node failure's runs are, so recovery requeues it
            return List.of(new PlacementFact.AllocationReleased(a, ReleaseCause.NODE_FAILED, at));
        }
        return List.of(new PlacementFact.RunFailed(a, result.exitCode(), result.message(), at),
                new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_FAILED, at));
    }

    /** The job was cancelled at {@code attempt}: release its allocation unless that belongs to a newer run. */
    public List<PlacementFact> cancel(String jobId, int attempt, Instant now) {
        Allocation a = liveByJob.get(jobId);
        List<PlacementFact> facts = new ArrayList<>(cancelReservation(jobId, attempt));
        if (a == null || a.attempt() > attempt) {
            return facts;
        }
        facts.add(0, new PlacementFact.AllocationReleased(a, ReleaseCause.CANCELLED, releaseTime(a, now)));
        return facts;
    }

    /** The node is gone: never place on it again until it recovers, and release every allocation touching it. */
    public List<PlacementFact> nodeFailed(String nodeId, Instant now) {
        List<PlacementFact> facts = new ArrayList<>();
        facts.add(new PlacementFact.NodeFailed(nodeId));
        liveById.values().stream().filter(a -> a.touches(nodeId))
                .sorted(Comparator.comparing(Allocation::jobId))
                .forEach(a -> facts.add(new PlacementFact.AllocationReleased(a, ReleaseCause.NODE_FAILED, releaseTime(a, now))));
        return facts;
    }

    /**
     * Recovery decided a device fault of {@code nodeId} ({@code gpuIndex} null: the whole node). An application fault
     * ({@link DeviceAction#FAIL_RUNS}) hits only runs granted no later than {@code faultAt}: it came from the program
     * then on the GPU, so a repeated or late decision never fails a later run. A hardware fault hits every run holding
     * the device now, including one placed between the report and this cordon (placement keeps granting a GPU until
     * the decision comes back, a round trip or a recovery restart later), since the device is broken for it too; a
     * run granted after the cordon is spared only because none can be (the placers never grant a cordoned GPU), so a
     * repeated decision stops nothing new. A cordon already in place is not written again. Facts: the node's new
     * registration first (so the release that follows reports capacity without the cordoned device), then per hit
     * run, by job id, either a failure and a {@code RUN_FAILED} release ({@link DeviceAction#FAIL_RUNS}) or a
     * {@code DEVICE_FAULT} release.
     *
     * @param reason the sentence recorded as the cordon reason and on a failed run
     */
    public List<PlacementFact> deviceFault(String nodeId, Integer gpuIndex, DeviceAction action, String reason,
                                           Instant faultAt, Instant now) {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(faultAt, "faultAt");
        List<PlacementFact> facts = new ArrayList<>();
        NodeSpec n = nodes.get(nodeId);
        if (n != null && action != DeviceAction.FAIL_RUNS) {
            NodeSpec after = n;
            boolean wholeNode = gpuIndex == null || action != DeviceAction.CORDON_DEVICE;
            if (wholeNode && !after.cordoned()) {
                after = after.withLabel(NodeSpec.CORDONED_LABEL, "true");
            }
            boolean device = gpuIndex != null && action != DeviceAction.CORDON_NODE
                    && n.gpus().stream().anyMatch(g -> g.index() == gpuIndex);
            if (device && !after.cordonedGpus().contains(gpuIndex)) {
                Set<Integer> gpus = new TreeSet<>(after.cordonedGpus());
                gpus.add(gpuIndex);
                after = after.withCordonedGpus(gpus);
            }
            if (after != n) {
                facts.add(new PlacementFact.NodeRegistered(after.withLabel(NodeSpec.CORDON_REASON_LABEL, reason)));
            }
        }
        boolean application = action == DeviceAction.FAIL_RUNS;
        liveById.values().stream()
                .filter(a -> holds(a, nodeId, gpuIndex) && (!application || !a.grantedAt().isAfter(faultAt)))
                .sorted(Comparator.comparing(Allocation::jobId))
                .forEach(a -> {
                    Instant at = releaseTime(a, now);
                    if (action == DeviceAction.FAIL_RUNS) {
                        facts.add(new PlacementFact.RunFailed(a, null, reason, at));
                        facts.add(new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_FAILED, at));
                    } else {
                        facts.add(new PlacementFact.AllocationReleased(a, ReleaseCause.DEVICE_FAULT, at));
                    }
                });
        return facts;
    }

    /**
     * The nodes of an allocation infrastructure just failed: those failed or cordoned (wholly, or a GPU it held) now;
     * all of them when none is (the release replayed before the failure at a restore: cross-topic order).
     */
    private Set<String> culprits(Allocation a) {
        Set<String> on = new TreeSet<>();
        Set<String> bad = new TreeSet<>();
        for (PlacedTask p : a.placements()) {
            on.add(p.nodeId());
            NodeSpec n = nodes.get(p.nodeId());
            if (failed.contains(p.nodeId()) || cordoned.contains(p.nodeId()) || n != null
                    && (p.gpuIndices().stream().anyMatch(n.cordonedGpus()::contains)
                    || p.gpuShares().stream().anyMatch(g -> n.cordonedGpus().contains(g.index())))) {
                bad.add(p.nodeId());
            }
        }
        return bad.isEmpty() ? on : bad;
    }

    /**
     * The job ended: nothing of its earlier runs matters to a placement any more, neither the nodes it avoided nor
     * its granted attempts (the queue never dispatches an ended job again), so the state holds nothing of the jobs
     * that ran. A run still live (a cancellation comes before its release) stays until it is released.
     */
    public void forget(String jobId) {
        avoid.remove(jobId);
        grantedAttempt.remove(jobId);
    }

    /** The highest attempt of the job ever granted, unless the job was {@link #forget forgotten}; empty: none. */
    public java.util.OptionalInt grantedAttempt(String jobId) {
        Integer attempt = grantedAttempt.get(jobId);
        return attempt == null ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(attempt);
    }

    /** The jobs whose next grant avoids nodes ({@link #avoiding}), by job id. */
    public java.util.SortedSet<String> avoidingJobs() {
        return new TreeSet<>(avoid.keySet());
    }

    /** The nodes the job's next grant avoids when it fits elsewhere (empty: none). */
    public Set<String> avoiding(String jobId) {
        return java.util.Collections.unmodifiableSet(avoid.getOrDefault(jobId, Set.of()));
    }

    /** Whether the allocation holds GPU {@code gpuIndex} of the node, whole or shared (null: anything there). */
    private static boolean holds(Allocation a, String nodeId, Integer gpuIndex) {
        for (PlacedTask p : a.placements()) {
            if (!p.nodeId().equals(nodeId)) {
                continue;
            }
            if (gpuIndex == null || p.gpuIndices().contains(gpuIndex)
                    || p.gpuShares().stream().anyMatch(s -> s.index() == gpuIndex)) {
                return true;
            }
        }
        return false;
    }

    /**
     * An operator returns GPUs to service after repair ({@code gpus} empty: all of them), keeping every other
     * control label; nothing when none of them was cordoned or the node is unknown.
     */
    public List<PlacementFact> uncordonGpus(String nodeId, Set<Integer> gpus) {
        NodeSpec n = nodes.get(nodeId);
        if (n == null || n.cordonedGpus().isEmpty()) {
            return List.of();
        }
        Set<Integer> left = new TreeSet<>(n.cordonedGpus());
        if (gpus.isEmpty()) {
            left.clear();
        } else {
            left.removeAll(gpus);
        }
        if (left.equals(n.cordonedGpus())) {
            return List.of();
        }
        NodeSpec after = n.withCordonedGpus(left);
        if (left.isEmpty() && !after.cordoned()) {
            after = after.withLabel(NodeSpec.CORDON_REASON_LABEL, null);
        }
        return List.of(new PlacementFact.NodeRegistered(after));
    }

    /**
     * The backend counted {@code gpus} GPUs of the node held by workloads Gantry did not start ({@code holders}: who,
     * for operators). They are taken off the node's free count (capacity taken, never double-booked) until a later
     * count says they are gone; Gantry's own holders are never displaced. Recorded as control labels on a
     * re-published registration, so a restart keeps the count until the backend counts again and the queue sees a
     * capacity change. Nothing for an unknown node or when count and holders are as recorded.
     */
    public List<PlacementFact> foreignLoad(String nodeId, int gpus, String holders) {
        NodeSpec n = nodes.get(nodeId);
        if (n == null) {
            return List.of();
        }
        int count = Math.max(0, Math.min(gpus, n.gpuCount()));
        String who = holders == null || holders.isBlank() ? null
                : holders.length() <= MAX_HOLDERS_LENGTH ? holders : holders.substring(0, MAX_HOLDERS_LENGTH - 3) + "...";
        NodeSpec after = n.withForeign(count, who);
        return after.equals(n) ? List.of() : List.of(new PlacementFact.NodeRegistered(after));
    }

    /** The longest description of foreign holders kept on a node (a label, read by operators). */
    static final int MAX_HOLDERS_LENGTH = 200;

    public List<PlacementFact> nodeRecovered(String nodeId) {
        return List.of(new PlacementFact.NodeRecovered(nodeId));
    }

    /**
     * The queue preempts {@code attempt} of the job: its tasks are asked to stop and the allocation is released
     * {@code PREEMPTED} {@code graceSeconds} after {@code from} (never counted from before the grant), or when
     * the run ends first. Nothing for an unknown job, another attempt, a released allocation or a preemption
     * already pending (the first one's deadline stands).
     *
     * @param from when the grace period starts: the handling instant live, the request's time at restore
     */
    public List<PlacementFact> preempt(String jobId, int attempt, int graceSeconds, Instant from) {
        return preempt(jobId, attempt, graceSeconds, from, ReleaseCause.PREEMPTED);
    }

    /**
     * {@link #preempt(String, int, int, Instant)} released with {@code reason}: {@code PREEMPTED}, or {@code IDLE}
     * when the queue stops the run because its GPUs stayed idle (the job then ends instead of being requeued).
     */
    public List<PlacementFact> preempt(String jobId, int attempt, int graceSeconds, Instant from, ReleaseCause reason) {
        Allocation a = liveByJob.get(jobId);
        if (a == null || a.attempt() != attempt || stopDeadline.containsKey(a.allocationId())) {
            return List.of();
        }
        Instant start = from.isBefore(a.grantedAt()) ? a.grantedAt() : from;
        return List.of(new PlacementFact.PreemptionRequested(a, start, TimeMath.plusSeconds(start, graceSeconds), null,
                reason));
    }

    private ReleaseCause stopCause(String allocationId) {
        return stopCause.getOrDefault(allocationId, ReleaseCause.PREEMPTED);
    }

    /**
     * The deadlines due at or before {@code now}, earliest first: a preemption whose grace period ended is
     * released {@code PREEMPTED} at its deadline; a run at its time limit fails ({@code TIME_LIMIT}) and is
     * released at the instant the limit was reached. Reads only the due head of a sorted set.
     */
    public List<PlacementFact> expire(Instant now) {
        return due(now, true);
    }

    /** The earliest pending deadline (a grace end or a time limit), or null when none is pending. */
    public Instant nextDeadline() {
        return deadlines.isEmpty() ? null : deadlines.first().at();
    }

    /** Like {@link #expire} for deadlines strictly before {@code t}: what must happen before an outcome at {@code t}. */
    public List<PlacementFact> expireBefore(Instant t) {
        return due(t, false);
    }

    private List<PlacementFact> due(Instant upTo, boolean inclusive) {
        List<PlacementFact> facts = new ArrayList<>();
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
                facts.add(new PlacementFact.AllocationReleased(a, stopCause(a.allocationId()), d.at()));
            } else {
                facts.add(new PlacementFact.RunFailed(a, null, "time limit " + a.timeLimitSeconds() + " s reached", d.at(),
                        FailureCause.TIME_LIMIT));
                facts.add(new PlacementFact.AllocationReleased(a, ReleaseCause.TIME_LIMIT, d.at()));
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

    public void replay(PlacementFact fact) {
        Objects.requireNonNull(fact, "fact");
        if (fact instanceof PlacementFact.NodeRegistered f) {
            NodeSpec old = nodes.put(f.node().nodeId(), f.node());
            index(old, false);
            index(f.node(), true);
            inventory.put(f.node(), !failed.contains(f.node().nodeId()),
                    liveOnNode.getOrDefault(f.node().nodeId(), List.of()));
        } else if (fact instanceof PlacementFact.NodeFailed f) {
            failed.add(f.nodeId());
            inventory.setHealthy(f.nodeId(), false);
        } else if (fact instanceof PlacementFact.NodeRecovered f) {
            failed.remove(f.nodeId());
            inventory.setHealthy(f.nodeId(), true);
        } else if (fact instanceof PlacementFact.AllocationGranted f) {
            avoid.remove(f.allocation().jobId());
            grant(f.allocation());
        } else if (fact instanceof PlacementFact.RunStarted f) {
            Allocation a = liveById.get(f.allocation().allocationId());
            if (a != null && !started.containsKey(a.allocationId())) {
                started.put(a.allocationId(), f.startedAt());
                Instant limit = TimeMath.deadline(f.startedAt(), a.timeLimitSeconds());
                if (limit != null) {
                    deadlines.add(new Deadline(limit, a.allocationId(), false));
                }
            }
        } else if (fact instanceof PlacementFact.PreemptionRequested f) {
            Allocation a = liveById.get(f.allocation().allocationId());
            if (a != null && !stopDeadline.containsKey(a.allocationId())) {
                stopDeadline.put(a.allocationId(), f.deadline());
                stopNotice.put(a.allocationId(), f.noticeAt());
                stopCause.put(a.allocationId(), f.reason());
                deadlines.add(new Deadline(f.deadline(), a.allocationId(), true));
            }
        } else if (fact instanceof PlacementFact.AllocationReleased f) {
            if (f.reason() == ReleaseCause.NODE_FAILED || f.reason() == ReleaseCause.DEVICE_FAULT) {
                avoid.computeIfAbsent(f.allocation().jobId(), j -> new TreeSet<>()).addAll(culprits(f.allocation()));
            }
            release(f.allocation().allocationId());
        }
        // PlacementDeferred, RunSucceeded and RunFailed hold nothing: the release that follows frees the devices.
    }

    /** Keeps the cordon and reservation indexes in step with the nodes' control labels. */
    private void index(NodeSpec n, boolean add) {
        if (n == null) {
            return;
        }
        if (n.cordoned()) {
            if (add) {
                cordoned.add(n.nodeId());
            } else {
                cordoned.remove(n.nodeId());
            }
        }
        String job = n.reservedFor();
        if (job != null) {
            if (add) {
                reservedNodes.computeIfAbsent(job, j -> new TreeSet<>()).add(n.nodeId());
            } else {
                TreeSet<String> on = reservedNodes.get(job);
                if (on != null) {
                    on.remove(n.nodeId());
                    if (on.isEmpty()) {
                        reservedNodes.remove(job);
                    }
                }
            }
        }
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
        lastCheckpoint.remove(allocationId);
        Instant startedAt = started.remove(allocationId);
        Instant limit = startedAt == null ? null : TimeMath.deadline(startedAt, a.timeLimitSeconds());
        if (limit != null) {
            deadlines.remove(new Deadline(limit, allocationId, false));
        }
        Instant grace = stopDeadline.remove(allocationId);
        stopNotice.remove(allocationId);
        stopCause.remove(allocationId);
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

    /** The node's current registration, if known. */
    public Optional<NodeSpec> node(String nodeId) {
        return Optional.ofNullable(nodes.get(nodeId));
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
