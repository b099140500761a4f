package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.DeferralReason;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementConfigApplied;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.PlacementPool;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.placement.core.Pools;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Placement's event handler: one {@link PlacementHandler} (core, backend, deferred gangs, reservations) per pool,
 * and the routing of each record to the pool it concerns. A dispatch goes to {@code JobDispatched.pool}, else the
 * spec's {@code pool}, else the pool {@code default} (or the first configured); a reservation request to the pool
 * the job was last dispatched to; node health and device faults to the pool that has the node (node ids are unique
 * across pools); at restore, registrations, grants and deferrals to the pool they name and the rest of a job's
 * allocation history to the pool of its grant. Everything a pool without the job or node ignores anyway
 * (cancellations, preemptions, checkpoints, a dispatch read back at restore) goes to every pool. Each pool decides
 * alone, on its own state: a pool whose backend answers nothing (no nodes, no outcomes) never delays another.
 * With one pool every record goes to it, so a configuration without pools behaves as placement always did.
 *
 * <p>It also publishes {@code PlacementConfigApplied} (the GPU tiers and the pools) once state is restored, only
 * when it differs from the newest one on the topic.
 *
 * <p>When placement is split by pool ({@code gantry.placement.shard-by-pool}) each unit's router has the handlers of
 * the pools it owns and knows every configured pool: it reads every record and acts on its own pools' only (a
 * dispatch to another unit's pool, that pool's grants and nodes, are skipped; what concerns no configured pool is
 * handled by the unit owning the fallback pool, which alone publishes the configuration).
 *
 * <p>It takes placement's snapshots: the newest configuration published, each pool's jobs, then each pool's nodes
 * (see {@link PlacementHandler#writeJobs}), then one record carrying the newest time read back. Every record of a
 * restore topic, restored, consumed or published, reaches the pools that would restore it, which keep what their
 * state is made of; a job the queue ended is forgotten by every pool.
 */
public final class PoolRouter implements EventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(PoolRouter.class);
    private final Map<String, PlacementHandler> pools = new LinkedHashMap<>();
    /** The fallback pool's handler when this router owns it, else its first pool's (clock and tiers). */
    private final PlacementHandler fallback;
    /** Every configured pool's backend, in configuration order, owned here or not. */
    private final Map<String, String> configured = new LinkedHashMap<>();
    /** The pool a job naming none runs in: {@code default}, else the first configured. */
    private final String fallbackPool;
    /** The pool of each job's latest dispatch, grant or deferral (restored from grants and deferrals). */
    private final Map<String, String> jobPool = new HashMap<>();
    /** The pool each registration read back at restore named, by node id. */
    private final Map<String, String> nodePool = new HashMap<>();
    /** The newest {@code PlacementConfigApplied} read back; null when none was ever published. */
    private Map<String, List<String>> publishedTiers;
    private Map<String, String> publishedPools;
    /** The topics a restore reads (the snapshot holds records of these only); all of placement's by default. */
    private java.util.Set<Topic<?>> restoreTopics = java.util.Set.of(Topics.PLACEMENT_ALLOCATION_EVENTS,
            Topics.PLACEMENT_NODE_EVENTS, Topics.RECOVERY_NODE_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS,
            Topics.PLACEMENT_CONFIG_EVENTS, Topics.QUEUE_JOB_EVENTS, Topics.PLACEMENT_STOP_EVENTS);
    /** The newest {@code PlacementConfigApplied} read back or published, for snapshots; null: none. */
    private PlacementConfigEvent config;
    /** The newest time of a record a pool took its clock's lower bound from (allocations, nodes, configuration). */
    private Instant newest;
    /** Jobs the queue ended, read back at this restore: forgotten again once every topic is read (any order). */
    private final java.util.Set<String> endedAtRestore = new java.util.HashSet<>();

    /** @param handlers one per pool, each {@link PlacementHandler#inPool named}, in configuration order */
    public PoolRouter(List<PlacementHandler> handlers) {
        this(handlers, null);
    }

    /**
     * A unit of placement split by pool: the handlers of the pools it owns, and every configured pool's backend by
     * name in configuration order (null: the owned pools are all there are).
     */
    public PoolRouter(List<PlacementHandler> handlers, Map<String, String> configuredPools) {
        if (handlers.isEmpty()) {
            throw new IllegalArgumentException("placement needs at least one pool");
        }
        for (PlacementHandler h : handlers) {
            if (pools.putIfAbsent(h.pool(), h) != null) {
                throw new IllegalArgumentException("pool " + h.pool() + " is configured twice");
            }
        }
        if (configuredPools == null) {
            handlers.forEach(h -> configured.put(h.pool(), h.backend().name()));
        } else {
            configured.putAll(configuredPools);
            if (!configured.keySet().containsAll(pools.keySet())) {
                throw new IllegalArgumentException("owned pools " + pools.keySet() + " are not all configured: "
                        + configured.keySet());
            }
        }
        fallbackPool = configured.containsKey(Pools.DEFAULT) ? Pools.DEFAULT : configured.keySet().iterator().next();
        fallback = pools.getOrDefault(fallbackPool, handlers.get(0));
        for (PlacementHandler h : handlers) {
            h.nodesElsewhere(nodeId -> pools.values().stream().filter(o -> o != h && o.state().knows(nodeId))
                    .map(PlacementHandler::pool).findFirst());
        }
    }

    /** The topics a restore reads: a snapshot holds records of these only. */
    public PoolRouter restoring(java.util.Collection<Topic<?>> topics) {
        this.restoreTopics = java.util.Set.copyOf(topics);
        return this;
    }

    /** The pools' handlers, in configuration order. */
    public Map<String, PlacementHandler> pools() {
        return java.util.Collections.unmodifiableMap(pools);
    }

    /**
     * The pool a job naming none runs in ({@code default}, else the first configured) when this router owns it; else
     * the first pool it owns.
     */
    public PlacementHandler fallback() {
        return fallback;
    }

    /** Whether this router is one unit of placement split by pool (other units own other pools). */
    private boolean split() {
        return configured.size() > pools.size();
    }

    /** Whether this router owns the fallback pool: it handles what concerns no configured pool. */
    private boolean ownsFallback() {
        return pools.containsKey(fallbackPool);
    }

    /** The handler of the pool that has the node, if any. */
    public Optional<PlacementHandler> owner(String nodeId) {
        return pools.values().stream().filter(h -> h.state().knows(nodeId)).findFirst();
    }

    /** Free-GPU-weighted fragmentation over the pools (exact: each pool's is a share of its free GPUs). */
    public double fragmentation() {
        double stranded = 0;
        long free = 0;
        for (PlacementHandler h : pools.values()) {
            int f = h.state().inventory().eligibleFreeGpus();
            stranded += h.fragmentation() * f;
            free += f;
        }
        return free == 0 ? 0.0 : stranded / free;
    }

    /** Cordons or uncordons a node in its pool; empty when no pool has it. */
    public Optional<Boolean> cordon(String nodeId, boolean cordon, Output out) {
        return owner(nodeId).flatMap(h -> h.cordon(nodeId, cordon, remembering(out)));
    }

    /** Returns cordoned GPUs of a node to service, in its pool; empty when no pool has it. */
    public Optional<java.util.SortedSet<Integer>> uncordonGpus(String nodeId, java.util.Set<Integer> gpus, Output out) {
        return owner(nodeId).flatMap(h -> h.uncordonGpus(nodeId, gpus, remembering(out)));
    }

    // ---------------------------------------------------------------- restore

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        if (value instanceof PlacementConfigEvent e) {
            fallback.seen(e.getOccurredAt());
            newest(e.getOccurredAt());
            if (e.getPayload() instanceof PlacementConfigApplied c) {
                // one key, one partition: the last read is the newest
                publishedTiers = tiers(c.getTiers());
                publishedPools = backends(c.getPools());
                config = e;
            }
            return;
        }
        List<PlacementHandler> to = route(value);
        if (to.isEmpty() && !ofAnotherUnit(value)) {
            if (value instanceof AllocationEvent e) {
                LOG.warn("ignoring an allocation event of job {} read back at restore: no configured pool matches it",
                        e.getJobId());
            } else if (value instanceof NodeEvent e) {
                LOG.warn("ignoring the registration of node {} read back at restore: no configured pool matches it",
                        e.getNodeId());
            }
            return;
        }
        to.forEach(h -> h.restore(topic, key, value));
        String over = released(value);
        if (over != null) {
            endedAtRestore.add(over);
        }
        String job = endedJob(value);
        if (job != null) {
            endedAtRestore.add(job);
            ended(job, (QueueJobEvent) value);
        }
    }

    /**
     * The pools a record of a restore topic goes to, as a restore routes it (and the routing it teaches: the pool of
     * a job's grant or deferral, of a node's registration); none when it is to be ignored.
     */
    private List<PlacementHandler> route(Object value) {
        if (value instanceof AllocationEvent e) {
            String pool;
            if (e.getPayload() instanceof AllocationGranted g) {
                pool = known(g.getPool(), g.getBackend());
            } else if (e.getPayload() instanceof PlacementDeferred d) {
                pool = known(d.getPool(), null);
            } else {
                pool = jobPool.get(e.getJobId());
                if (pool == null && split()) {
                    // split, a job this unit has not seen granted is another unit's (granted before this unit's
                    // snapshot: the snapshot holds this unit's jobs only)
                    return List.of();
                }
                pool = pool == null ? fallbackPool : pool;
            }
            if (pool == null) {
                return List.of();
            }
            if (e.getPayload() instanceof AllocationGranted || e.getPayload() instanceof PlacementDeferred) {
                jobPool.put(e.getJobId(), pool);
                String p = pool;
                pools.values().stream().filter(h -> !h.pool().equals(p)).forEach(h -> h.dispatchedElsewhere(e.getJobId()));
            }
            newest(e.getOccurredAt());
            PlacementHandler h = pools.get(pool);
            return h == null ? List.of() : List.of(h); // another unit's pool
        } else if (value instanceof NodeEvent e) {
            String pool = e.getPayload() instanceof NodeRegistered r ? known(r.getPool(), r.getBackend())
                    : nodePool.get(e.getNodeId());
            if (pool == null && !(e.getPayload() instanceof NodeRegistered) && split()) {
                return List.of(); // split: a node this unit has not seen registered is another unit's
            }
            pool = pool == null && !(e.getPayload() instanceof NodeRegistered) ? fallbackPool : pool;
            if (pool == null) {
                return List.of();
            }
            nodePool.put(e.getNodeId(), pool);
            newest(e.getOccurredAt());
            PlacementHandler h = pools.get(pool);
            return h == null ? List.of() : List.of(h); // another unit's pool
        }
        // node health, dispatches and preemptions may come before the registration or grant they concern
        // (no order across topics): every pool keeps them, each uses only what concerns its own nodes and jobs
        return List.copyOf(pools.values());
    }

    /**
     * Whether a record of a restore topic that reaches none of this router's pools is another unit's (split by
     * pool): it names or belongs to a configured pool another unit owns, or to a job or node this unit never saw
     * granted or registered. Skipped quietly; the rest is worth a warning.
     */
    private boolean ofAnotherUnit(Object value) {
        if (!split()) {
            return false;
        }
        String pool;
        boolean names;
        if (value instanceof AllocationEvent e) {
            names = e.getPayload() instanceof AllocationGranted || e.getPayload() instanceof PlacementDeferred;
            pool = e.getPayload() instanceof AllocationGranted g ? known(g.getPool(), g.getBackend())
                    : e.getPayload() instanceof PlacementDeferred d ? known(d.getPool(), null) : jobPool.get(e.getJobId());
        } else if (value instanceof NodeEvent e) {
            names = e.getPayload() instanceof NodeRegistered;
            pool = e.getPayload() instanceof NodeRegistered r ? known(r.getPool(), r.getBackend())
                    : nodePool.get(e.getNodeId());
        } else {
            return false;
        }
        return pool == null ? !names : !pools.containsKey(pool);
    }

    private void newest(Instant at) {
        if (at != null && (newest == null || at.isAfter(newest))) {
            newest = at;
        }
    }

    /** The job a record of the queue says ended for good, or null. */
    private static String endedJob(Object value) {
        return value instanceof QueueJobEvent e && (e.getPayload() instanceof JobSucceeded
                || e.getPayload() instanceof JobFailed || e.getPayload() instanceof JobCancelled) ? e.getJobId() : null;
    }

    /** Every pool forgets the ended job (a run still live stays until its release, and so does its pool). */
    private void ended(String jobId, QueueJobEvent end) {
        pools.values().forEach(h -> h.jobEnded(jobId, end));
        if (pools.values().stream().allMatch(h -> h.state().liveAllocation(jobId).isEmpty())) {
            jobPool.remove(jobId);
        }
    }

    /**
     * A release that ends its job for good (its run succeeded, or the job was cancelled: the queue dispatches it never
     * again, as recovery reads it too) makes every pool forget the job, and so does the release of the last run of a
     * job that ended; returns the job in the first case, else null.
     */
    private String released(Object value) {
        if (!(value instanceof AllocationEvent e && e.getPayload() instanceof io.gantry.events.AllocationReleased r)) {
            return null;
        }
        if (r.getReason() == io.gantry.events.ReleaseReason.RUN_SUCCEEDED
                || r.getReason() == io.gantry.events.ReleaseReason.CANCELLED) {
            ended(e.getJobId(), null);
            return e.getJobId();
        }
        if (pools.values().stream().allMatch(h -> h.state().liveAllocation(e.getJobId()).isEmpty()
                && h.state().grantedAttempt(e.getJobId()).isEmpty())) {
            jobPool.remove(e.getJobId());
        }
        return null;
    }

    /** What a record of a restore topic, consumed or published, leaves in the pools' snapshots. */
    private void remember(Topic<?> topic, Object value) {
        if (!restoreTopics.contains(topic)) {
            return;
        }
        if (value instanceof PlacementConfigEvent e) {
            newest(e.getOccurredAt());
            if (e.getPayload() instanceof PlacementConfigApplied) {
                config = e;
            }
            return;
        }
        route(value).forEach(h -> h.remember(value));
        released(value);
    }

    /** The output, with what goes to a restore topic remembered for snapshots. */
    private Output remembering(Output out) {
        return new Output() {
            @Override
            public <V> void send(Topic<V> topic, String key, V value) {
                out.send(topic, key, value);
                remember(topic, value);
            }
        };
    }

    @Override
    public boolean snapshot(SnapshotWriter out) {
        if (config != null) {
            out.add(Topics.PLACEMENT_CONFIG_EVENTS, "placement-config", config);
        }
        java.util.Set<Object> written = new java.util.HashSet<>(); // node health and dispatches reach every pool
        pools.values().forEach(h -> h.writeJobs(out, written));
        pools.values().forEach(h -> h.writeNodes(out, written));
        if (newest != null) {
            // the newest time read back, so the clock never goes back: a run start of no allocation (changes nothing)
            out.add(Topics.PLACEMENT_ALLOCATION_EVENTS, "", AllocationEvent.newBuilder().setEventId("newest")
                    .setJobId("").setOccurredAt(newest).setPayload(JobRunStarted.newBuilder().setAllocationId("")
                            .setTenant("").setAttempt(0).setStartedAt(newest).build()).build());
        }
        return true;
    }

    /** How many records the next snapshot holds. */
    long snapshotRecords() {
        long[] records = {0};
        snapshot(new SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                records[0]++;
            }
        });
        return records[0];
    }

    /**
     * The configured pool a record read back names; a record of a pool no longer configured goes to the only pool,
     * else to the only pool of its backend (a configuration that gave the pool of today a name); null when none.
     */
    private String known(CharSequence pool, CharSequence backend) {
        if (pool != null && configured.containsKey(pool.toString())) {
            return pool.toString();
        }
        if (configured.size() == 1) {
            return fallbackPool;
        }
        if (backend != null) {
            List<String> same = configured.entrySet().stream().filter(c -> c.getValue().equals(backend.toString()))
                    .map(Map.Entry::getKey).toList();
            if (same.size() == 1) {
                return same.get(0);
            }
        }
        return null;
    }

    @Override
    public void restored(Output raw) {
        Output out = remembering(raw);
        // a job's end may have been read before its runs (no order across topics)
        endedAtRestore.forEach(job -> ended(job, null));
        endedAtRestore.clear();
        // one clock: every pool starts from the newest time any pool read back (a pool restored first would else
        // settle its runs at an earlier time than the next)
        pools.values().forEach(PlacementHandler::clockNotBeforeRestored);
        for (PlacementHandler h : pools.values()) {
            h.restored(out);
        }
        if (ownsFallback()) {
            publishConfig(fallback.now(), out);
        }
    }

    /**
     * Tells the other services the GPU tiers placement resolves and its pools (admission refuses an unknown
     * {@code gpuTier} or {@code pool}), only when they differ from the newest published, so a restart with the same
     * configuration adds nothing and the topic reads as the history of configurations. A record written before
     * pools stands for the one pool {@code default}.
     */
    private void publishConfig(Instant now, Output out) {
        Map<String, List<String>> tiers = tiers(fallback.state().placer().tiers().tiers());
        Map<String, String> backends = new TreeMap<>(configured);
        boolean samePools = backends.equals(publishedPools) || (publishedPools != null && publishedPools.isEmpty()
                && backends.keySet().equals(java.util.Set.of(Pools.DEFAULT)));
        if (tiers.equals(publishedTiers) && samePools) {
            return;
        }
        Map<String, PlacementPool> wire = new HashMap<>();
        backends.forEach((pool, backend) -> wire.put(pool, PlacementPool.newBuilder().setBackend(backend).build()));
        out.send(Topics.PLACEMENT_CONFIG_EVENTS, "placement-config", PlacementConfigEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setOccurredAt(now)
                .setPayload(PlacementConfigApplied.newBuilder().setTiers(new HashMap<>(tiers)).setPools(wire).build())
                .build());
        publishedTiers = tiers;
        publishedPools = backends;
        LOG.info("published the GPU tiers {} and the pools {} on {}", tiers.keySet(), backends,
                Topics.PLACEMENT_CONFIG_EVENTS.name());
    }

    /** Tier name to models, as plain strings and lists whatever the decoder handed over, for comparing. */
    private static Map<String, List<String>> tiers(Map<? extends CharSequence, ? extends List<? extends CharSequence>> raw) {
        Map<String, List<String>> out = new TreeMap<>();
        if (raw != null) {
            raw.forEach((tier, models) -> out.put(tier.toString(), models.stream().map(CharSequence::toString).toList()));
        }
        return out;
    }

    private static Map<String, String> backends(Map<String, PlacementPool> raw) {
        Map<String, String> out = new TreeMap<>();
        if (raw != null) {
            raw.forEach((pool, p) -> out.put(pool, p.getBackend()));
        }
        return out;
    }

    // ---------------------------------------------------------------- inputs

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output raw) {
        // on its topic before what handling it publishes
        remember(topic, value);
        Output out = remembering(raw);
        handleOne(topic, key, value, out);
        String job = endedJob(value);
        if (job != null) {
            // kept (with a run still live) only when a restore reads it too: a snapshot holds restore topics only
            ended(job, restoreTopics.contains(topic) ? (QueueJobEvent) value : null);
        }
    }

    private void handleOne(Topic<?> topic, String key, Object value, Output out) {
        if (value instanceof QueueJobEvent e && e.getPayload() instanceof JobDispatched d) {
            try {
                WireMapping.gang(e.getJobId(), d); // throws on a malformed spec before anything changes
            } catch (RuntimeException malformed) {
                if (split() && !ownsFallback()) {
                    return; // every unit finds it malformed: the fallback pool's unit dead-letters it, once
                }
                throw malformed;
            }
            String pool = d.getPool() != null ? d.getPool().toString()
                    : d.getSpec().getPool() != null ? d.getSpec().getPool().toString() : fallbackPool;
            PlacementHandler h = pools.get(pool);
            if (h == null && configured.containsKey(pool)) {
                // another unit's pool places it: this unit forgets what it kept of the job
                jobPool.put(e.getJobId(), pool);
                pools.values().forEach(o -> o.forgetDeferred(e.getJobId()));
                return;
            }
            if (h == null) {
                if (ownsFallback()) {
                    deferUnknownPool(e.getJobId(), d, pool, out);
                }
                return;
            }
            jobPool.put(e.getJobId(), pool);
            pools.values().stream().filter(o -> o != h).forEach(o -> o.forgetDeferred(e.getJobId()));
            h.handle(topic, key, value, out);
        } else if (value instanceof QueueReservationEvent e && e.getPayload() instanceof CapacityReservationRequested r) {
            String pool = jobPool.getOrDefault(e.getJobId(), r.getSpec() != null && r.getSpec().getPool() != null
                    ? r.getSpec().getPool().toString() : fallbackPool);
            PlacementHandler h = pools.get(pool);
            if (h == null) {
                if (!configured.containsKey(pool) && ownsFallback()) {
                    LOG.info("no capacity reserved for job {}: its pool {} is not configured", e.getJobId(), pool);
                }
                return;
            }
            h.handle(topic, key, value, out);
        } else if (value instanceof NodeHealthEvent e) {
            route(e.getNodeId(), topic, key, value, out);
        } else if (value instanceof DeviceHealthEvent e) {
            route(e.getNodeId(), topic, key, value, out);
        } else {
            // cancellations, job ends, preemptions, reservation cancellations, checkpoints: only the pool holding
            // the job's allocation, reservation or deferred gang acts on them
            pools.values().forEach(h -> h.handle(topic, key, value, out));
        }
    }

    /** A node's record to the pool that has the node; to every pool while none has it (each ignores it then). */
    private void route(String nodeId, Topic<?> topic, String key, Object value, Output out) {
        Optional<PlacementHandler> owner = owner(nodeId);
        if (owner.isPresent()) {
            owner.get().handle(topic, key, value, out);
        } else {
            pools.values().forEach(h -> h.handle(topic, key, value, out));
        }
    }

    /** A dispatch to a pool placement does not have (configured away since admission accepted the job). */
    private void deferUnknownPool(String jobId, JobDispatched d, String pool, Output out) {
        String message = "pool " + pool + " is not configured (pools: " + String.join(", ", configured.keySet()) + ")";
        LOG.info("job {} attempt {} deferred: {}", jobId, d.getAttempt(), message);
        out.send(Topics.PLACEMENT_ALLOCATION_EVENTS, jobId, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(jobId).setOccurredAt(fallback.now())
                .setPayload(PlacementDeferred.newBuilder().setTenant(d.getTenant()).setAttempt(d.getAttempt())
                        .setReason(DeferralReason.NO_HEALTHY_NODES).setMessage(message).setPool(pool).build())
                .build());
    }

    @Override
    public void tick(Instant wallNow, Output raw) {
        Output out = remembering(raw);
        for (PlacementHandler h : pools.values()) {
            h.tick(wallNow, out);
        }
    }

    /** The earliest of the pools' next ticks; null (tick every interval) when any pool cannot tell. */
    @Override
    public Instant nextTickAt(Instant wallNow) {
        Instant next = null;
        for (PlacementHandler h : pools.values()) {
            Instant at = h.nextTickAt(wallNow);
            if (at == null) {
                return null;
            }
            next = next == null || at.isBefore(next) ? at : next;
        }
        return next;
    }
}
