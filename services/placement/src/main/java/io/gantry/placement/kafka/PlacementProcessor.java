package io.gantry.placement.kafka;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.GangPlacer;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.ServiceLoop;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.gantry.schemas.Topic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Owns placement's event processor: restores from placement's topics (its configuration history included, so the
 * GPU tiers are published only when they changed; plus the dispatched specs on the queue's
 * topic, to re-create simulated runs, and the queue's preemptions, to finish a grace period pending at a restart),
 * then consumes the queue's job, preemption and capacity-reservation events and recovery's node events.
 */
@Context
public class PlacementProcessor implements AutoCloseable, io.gantry.runtime.http.OwnedWork,
        io.gantry.runtime.http.EventLoops {
    private static final Logger LOG = LoggerFactory.getLogger(PlacementProcessor.class);

    /** One processor, or with {@code shard-by-pool} one per pool (a unit each), in configuration order. */
    private final List<EventProcessor> processors = new ArrayList<>();
    private final List<Pool> pools;
    /** Who owns each unit: the pools' names, in configuration order (one unit: not split). */
    private final io.gantry.runtime.http.UnitOwners units;
    private final List<Integer> typicalGpus;
    /** The newest router of each processor (its handler since its last start), by processor. */
    private final java.util.Map<EventProcessor, PoolRouter> current = new java.util.concurrent.ConcurrentHashMap<>();

    public PlacementProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.kafka.partitions:1}") int partitions,
                            @Value("${gantry.placement.tick-interval:200ms}") Duration tickInterval,
                            Configured pools, VirtualClock clock,
                            @Value("${gantry.placement.restore-dispatches:true}") boolean restoreDispatches,
                            @Value("${gantry.placement.fragmentation.typical-gpus:8}") List<Integer> typicalGpus,
                            @Value("${gantry.placement.reservations.grace-period:30s}") Duration drainGrace,
                            @Value("${gantry.placement.utilisation.sample-every:10s}") Duration utilisationEvery,
                            @Value("${gantry.placement.utilisation.window:5m}") Duration utilisationWindow,
                            @Value("${gantry.placement.utilisation.idle-percent:5}") int idlePercent,
                            @Value("${gantry.placement.shard-by-pool:false}") boolean shardByPool,
                            io.gantry.runtime.http.Instance instance) {
        this.pools = pools.pools();
        this.typicalGpus = List.copyOf(typicalGpus);
        PlacementHandler.UtilisationSettings utilisation = new PlacementHandler.UtilisationSettings(utilisationEvery,
                utilisationWindow, idlePercent);
        // split by pool: each pool a unit of its own (consumer group, transactional id, snapshots, owner), spread
        // over the instances; otherwise one unit holding every pool
        List<List<Pool>> split = shardByPool && this.pools.size() > 1
                ? this.pools.stream().map(List::of).toList() : List.of(this.pools);
        java.util.Map<String, String> configured = new java.util.LinkedHashMap<>();
        this.pools.forEach(p -> configured.put(p.name(), p.backend().name()));
        for (int i = 0; i < split.size(); i++) {
            EventProcessor.Builder b = instance.configure(EventProcessor.builder(Service.PLACEMENT, bootstrap));
            if (split.size() > 1) {
                b.unit("pool-" + split.get(i).get(0).name(), i);
            }
            EventProcessor[] self = new EventProcessor[1];
            self[0] = b.loop(loop(split.get(i), configured, clock, restoreDispatches, this.typicalGpus, tickInterval,
                            (int) drainGrace.toSeconds(), utilisation)
                            .observed(h -> current.put(self[0], (PoolRouter) h)))
                    .partitions(partitions)
                    .build();
            processors.add(self[0]);
        }
        units = new io.gantry.runtime.http.UnitOwners("pool", split.stream().map(u -> u.get(0).name()).toList(),
                processors);
        processors.forEach(EventProcessor::start);
        for (Pool p : this.pools) {
            LOG.info("placement pool {} started with the {} backend and the {} placer", p.name(), p.backend().name(),
                    p.placer());
        }
    }

    /**
     * One pool of the cluster: its name, execution backend, placer (its policy included) and the heartbeat period
     * of its backend's nodes.
     */
    public record Pool(String name, ExecutionBackend backend, GangPlacer placer, Duration heartbeatInterval) {
        public Pool {
            io.gantry.placement.core.Pools.checkName(name);
        }
    }

    /** The configured pools, in configuration order (one pool {@code default} without pools). */
    public record Configured(List<Pool> pools) {
        public Configured {
            pools = List.copyOf(pools);
        }
    }

    /**
     * Placement's event loop, declared once: dispatches, preemptions, reservations and node health in; its own
     * allocations and nodes (and, for allocations written before runs carried their run time, the dispatches) to
     * restore from; a tick every {@code tickInterval} to start, poll and stop runs on the backend. The backend lives
     * across restarts of the loop (its runs are real processes or simulated ones that outlive a handler).
     */
    public static ServiceLoop loop(ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                                   Duration heartbeatInterval, boolean restoreDispatches, List<Integer> typicalGpus,
                                   Duration tickInterval) {
        return loop(backend, clock, placer, heartbeatInterval, restoreDispatches, typicalGpus, tickInterval, 30);
    }

    /**
     * The loop with the grace period of runs stopped to bound a capacity reservation's drain (the bound itself comes
     * with each reservation, from the queue's configuration).
     */
    public static ServiceLoop loop(ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                                   Duration heartbeatInterval, boolean restoreDispatches, List<Integer> typicalGpus,
                                   Duration tickInterval, int drainGraceSeconds) {
        return loop(List.of(new Pool(io.gantry.placement.core.Pools.DEFAULT, backend, placer, heartbeatInterval)),
                clock, restoreDispatches, typicalGpus, tickInterval, drainGraceSeconds);
    }

    /** The loop of a cluster of pools: one core per pool behind a {@link PoolRouter}, on one clock. */
    public static ServiceLoop loop(List<Pool> pools, VirtualClock clock, boolean restoreDispatches,
                                   List<Integer> typicalGpus, Duration tickInterval, int drainGraceSeconds) {
        return loop(pools, clock, restoreDispatches, typicalGpus, tickInterval, drainGraceSeconds,
                PlacementHandler.UtilisationSettings.DEFAULT);
    }

    /** The loop with its utilisation sampling ({@code gantry.placement.utilisation.*}), each pool its own. */
    public static ServiceLoop loop(List<Pool> pools, VirtualClock clock, boolean restoreDispatches,
                                   List<Integer> typicalGpus, Duration tickInterval, int drainGraceSeconds,
                                   PlacementHandler.UtilisationSettings utilisation) {
        return loop(pools, null, clock, restoreDispatches, typicalGpus, tickInterval, drainGraceSeconds, utilisation);
    }

    /**
     * The loop of one unit of placement split by pool: the handlers of {@code pools}, knowing every configured
     * pool's backend by name ({@code configured}; null: {@code pools} are all there are).
     */
    public static ServiceLoop loop(List<Pool> pools, java.util.Map<String, String> configured, VirtualClock clock,
                                   boolean restoreDispatches, List<Integer> typicalGpus, Duration tickInterval,
                                   int drainGraceSeconds, PlacementHandler.UtilisationSettings utilisation) {
        // the stops it asked are restored too: a bounded drain's or a borrower's stop is recorded nowhere else, and a
        // run that exits on its SIGTERM after a restart is stopped (PREEMPTED), not failed or done
        List<Topic<?>> restore = new ArrayList<>(List.of(Topics.PLACEMENT_ALLOCATION_EVENTS,
                Topics.PLACEMENT_NODE_EVENTS, Topics.RECOVERY_NODE_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS,
                Topics.PLACEMENT_CONFIG_EVENTS, Topics.PLACEMENT_STOP_EVENTS));
        if (restoreDispatches) {
            restore.add(Topics.QUEUE_JOB_EVENTS);
        }
        return new ServiceLoop(Service.PLACEMENT,
                List.of(Topics.QUEUE_JOB_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS, Topics.QUEUE_RESERVATION_EVENTS,
                        Topics.RECOVERY_NODE_EVENTS, Topics.RECOVERY_DEVICE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS),
                restore, tickInterval,
                () -> new PoolRouter(pools.stream().map(p -> {
                    ClusterState state = new ClusterState(p.backend().name(), p.placer());
                    state.drainGrace(drainGraceSeconds);
                    return new PlacementHandler(state, p.backend(), clock, p.heartbeatInterval()).inPool(p.name())
                            .typicalRequests(List.copyOf(typicalGpus)).utilisation(utilisation);
                }).toList(), configured).restoring(restore));
    }

    /** How the last start rebuilt the state (from a snapshot and the history after it, or the whole history). */
    public io.gantry.runtime.kafka.EventProcessor.Restored lastRestore() {
        return api().lastRestore();
    }

    /**
     * The processor of the one unit, or split by pool the unit of the pool a job naming none runs in
     * ({@code default}, else the first): its ownership is the instance's on {@code gantry_instance_owner}. Split,
     * the controllers read the units owned here ({@link #queryOwned}) and add the others' parts ({@code http.Units}).
     */
    private EventProcessor api() {
        if (processors.size() == 1) {
            return processors.get(0);
        }
        int i = 0;
        for (; i < pools.size(); i++) {
            if (pools.get(i).name().equals(io.gantry.placement.core.Pools.DEFAULT)) {
                break;
            }
        }
        return processors.get(i < pools.size() ? i : 0);
    }

    /** Every unit's processor, in configuration order (one unless split by pool). */
    public List<EventProcessor> processors() {
        return List.copyOf(processors);
    }

    @Override
    public List<EventProcessor> eventLoops() {
        return processors();
    }

    /** Runs {@code query} against the live state on the loop thread. */
    public <T> CompletableFuture<T> query(Function<PoolRouter, T> query) {
        EventProcessor p = api();
        return p.submit(out -> query.apply(current.get(p)));
    }

    /**
     * Runs {@code query} on the loop thread of {@code pool}'s unit (split by pool; it must be owned here), or of the
     * one unit; null or an unknown pool: the API's unit.
     */
    public <T> CompletableFuture<T> queryPool(String pool, Function<PoolRouter, T> query) {
        EventProcessor p = api();
        for (int i = 0; split() && pool != null && i < pools.size(); i++) {
            if (pools.get(i).name().equals(pool)) {
                p = processors.get(i);
            }
        }
        EventProcessor unit = p;
        return unit.submit(out -> query.apply(current.get(unit)));
    }

    /** Runs {@code command} on the loop thread; what it sends commits in the loop's transaction. */
    public <T> CompletableFuture<T> command(java.util.function.BiFunction<PoolRouter, io.gantry.runtime.kafka.Output, T> command) {
        EventProcessor p = api();
        return p.submit(out -> command.apply(current.get(p), out));
    }

    /** The configured pools, in configuration order. */
    public List<Pool> pools() {
        return pools;
    }

    /** The pools' backends of one kind (e.g. every Slurm backend), in pool order. */
    public <T extends ExecutionBackend> List<T> backends(Class<T> kind) {
        return pools.stream().map(Pool::backend).filter(kind::isInstance).map(kind::cast).toList();
    }

    public List<Integer> typicalGpus() {
        return typicalGpus;
    }

    /**
     * Whether this instance owns placement's work and has its state (a standby forwards its requests); split by
     * pool, whether every unit is placed: owned here and restored, or owned by another instance.
     */
    public boolean isReady() {
        return split() ? units.allPlaced() : api().isOwner();
    }

    /** Whether placement is split by pool into units (then each request is routed to the pools it concerns). */
    public boolean split() {
        return units.split();
    }

    @Override
    public boolean forwardsToOwner() {
        return !split();
    }

    /**
     * Runs {@code query} on the router of every unit this instance owns (the one unit, unless split by pool),
     * each on its loop thread: one result per owned unit, in configuration order.
     */
    public <T> CompletableFuture<List<T>> queryOwned(Function<PoolRouter, T> query) {
        if (!split()) {
            return query(query).thenApply(List::of);
        }
        List<CompletableFuture<T>> parts = new ArrayList<>();
        for (EventProcessor p : processors) {
            if (p.isOwner()) {
                parts.add(p.submit(out -> query.apply(current.get(p))));
            }
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> parts.stream().map(CompletableFuture::join).toList());
    }

    /**
     * Runs {@code command} on each unit this instance owns in turn until one answers something present (the unit
     * whose pool has the node or job); empty when none does.
     */
    public <T> java.util.Optional<T> commandOwned(
            java.util.function.BiFunction<PoolRouter, io.gantry.runtime.kafka.Output, java.util.Optional<T>> command,
            Duration timeout) throws Exception {
        for (EventProcessor p : split() ? processors : List.of(api())) {
            if (split() && !p.isOwner()) {
                continue;
            }
            java.util.Optional<T> r = p.submit(out -> command.apply(current.get(p), out))
                    .get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            if (r.isPresent()) {
                return r;
            }
        }
        return java.util.Optional.empty();
    }

    /** Who owns each pool's unit (split by pool), for requests the HTTP side routes ({@code Units}). */
    public io.gantry.runtime.http.UnitOwners units() {
        return units;
    }

    /** This instance's HTTP address as the others reach it. */
    public String advertisedUrl() {
        return api().ownership().advertisedUrl();
    }

    @Override
    public io.gantry.runtime.kafka.Ownership ownership() {
        return api().ownership();
    }

    @PreDestroy
    @Override
    public void close() {
        processors.forEach(EventProcessor::close);
        pools.forEach(p -> p.backend().close());
    }
}
