package io.gantry.placement.http;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeView;
import io.gantry.placement.kafka.PlacementProcessor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.TaskScheduler;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Named;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Placement's inventory as Prometheus gauges, refreshed from the live state every
 * {@code gantry.placement.metrics.refresh} (one query on the loop thread):
 * <ul>
 *   <li>{@code gantry_placement_fragmentation{pool}} (0..1, as of the pool's last tick)</li>
 *   <li>{@code gantry_placement_gpus{pool,model,state}}: state is {@code allocated} (held whole or in shares),
 *       {@code free} (placeable now), {@code cordoned} (free on a cordoned node), {@code foreign} (held by a workload Gantry did not start)
 *       or {@code unhealthy} (on a node recovery declared failed)</li>
 *   <li>{@code gantry_placement_stranded_gpus{pool,size}}: free GPUs on eligible nodes that cannot host a task of
 *       {@code size} GPUs of one model, for each typical size
 *       ({@code gantry.placement.fragmentation.typical-gpus})</li>
 *   <li>{@code gantry_placement_node_gpus{node,pool,state}}: the same states per node (per-node GPU health)</li>
 * </ul>
 * The pool is the placement pool the node is in ({@code default} without pools). Labels are bounded by the
 * inventory; job ids are never labels.
 *
 * <p>Each pool's series come from the instance that owns the pool (the owner, or split by pool the owner of its
 * unit); a standby exports none of them, not even zeros, so a sum over the instances Prometheus scrapes is the
 * cluster's figure.
 */
@Context
public class PlacementMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(PlacementMetrics.class);
    static final List<String> STATES = List.of("allocated", "free", "cordoned", "foreign", "unhealthy");

    private final PlacementProcessor placement;
    private final MultiGauge fragmentation;
    private final MultiGauge gpus;
    private final MultiGauge stranded;
    private final MultiGauge nodeGpus;

    private final java.util.concurrent.ScheduledFuture<?> refreshing;

    public PlacementMetrics(MeterRegistry registry, PlacementProcessor placement,
            @Named(TaskExecutors.SCHEDULED) TaskScheduler scheduler,
            @Value("${gantry.placement.metrics.refresh:5s}") java.time.Duration refresh) {
        this.placement = placement;
        this.fragmentation = MultiGauge.builder("gantry.placement.fragmentation")
                .description("Share of a pool's free GPUs stranded on nodes that cannot host a typical request "
                        + "(gantry.placement.fragmentation.typical-gpus), averaged over the typical sizes")
                .register(registry);
        this.gpus = MultiGauge.builder("gantry.placement.gpus")
                .description("GPUs by pool, model and state (allocated, free, cordoned, unhealthy)").register(registry);
        this.stranded = MultiGauge.builder("gantry.placement.stranded").baseUnit("gpus")
                .description("Free GPUs on nodes that cannot host a task of the typical size").register(registry);
        this.nodeGpus = MultiGauge.builder("gantry.placement.node.gpus")
                .description("GPUs of each node by state (allocated, free, cordoned, unhealthy)").register(registry);
        // the bean schedules itself and stops at close: a task that looked the bean up after the context closed
        // would create it again, and with it a second event loop
        this.refreshing = scheduler.scheduleWithFixedDelay(java.time.Duration.ofMillis(1000), refresh,
                this::refresh);
    }

    /** A pool as its owner sees it: its nodes, and its fragmentation as of its last tick. */
    record PoolSample(List<NodeView> nodes, double fragmentation) {
    }

    void refresh() {
        if (!placement.isReady()) {
            if (placement.ownership().role() == io.gantry.runtime.kafka.Ownership.Role.STANDBY) {
                // a standby (maybe the owner until a moment ago) reports no pool: the owner's gauges are the figures
                publish(Map.of(), placement.typicalGpus());
            }
            return;
        }
        try {
            // split by pool: the pools this instance owns (each instance reports its own; Prometheus scrapes all)
            Map<String, PoolSample> pools = new TreeMap<>();
            placement.queryOwned(router -> {
                Map<String, PoolSample> byPool = new TreeMap<>();
                router.pools().forEach((pool, h) -> byPool.put(pool,
                        new PoolSample(h.state().snapshot().nodes(), h.fragmentation())));
                return byPool;
            }).get(10, TimeUnit.SECONDS).forEach(pools::putAll);
            publish(pools, placement.typicalGpus());
        } catch (Exception e) {
            LOG.warn("placement metrics not refreshed; the next run retries: {}", e.toString());
        }
    }

    private void publish(Map<String, PoolSample> pools, List<Integer> typicalSizes) {
        Rows rows = rows(pools, typicalSizes);
        fragmentation.register(rows.fragmentation(), true);
        gpus.register(rows.gpus(), true);
        nodeGpus.register(rows.nodeGpus(), true);
        stranded.register(rows.stranded(), true);
    }

    /** What the gauges show. */
    record Rows(List<MultiGauge.Row<?>> fragmentation, List<MultiGauge.Row<?>> gpus, List<MultiGauge.Row<?>> nodeGpus,
                List<MultiGauge.Row<?>> stranded) {
    }

    /** The rows of the pools this instance owns: none at all when it owns none (a standby). */
    static Rows rows(Map<String, PoolSample> pools, List<Integer> typicalSizes) {
        Map<List<String>, Integer> byPoolModelState = new TreeMap<>(java.util.Comparator.comparing(Object::toString));
        List<MultiGauge.Row<?>> nodeRows = new ArrayList<>();
        List<MultiGauge.Row<?>> fragmentationRows = new ArrayList<>();
        List<MultiGauge.Row<?>> strandedRows = new ArrayList<>();
        for (Map.Entry<String, PoolSample> inPool : pools.entrySet()) {
            String pool = inPool.getKey();
            fragmentationRows.add(MultiGauge.Row.of(Tags.of("pool", pool), inPool.getValue().fragmentation()));
            Map<Integer, Integer> strandedBySize = new TreeMap<>();
            typicalSizes.forEach(k -> strandedBySize.put(k, 0));
            for (NodeView n : inPool.getValue().nodes()) {
                Map<String, Integer> nodeCounts = new HashMap<>();
                STATES.forEach(s -> nodeCounts.put(s, 0));
                Map<String, Integer> freeByModel = new HashMap<>();
                List<Gpu> free = n.freeGpus();
                for (Gpu g : n.spec().gpus()) {
                    String state = !n.healthy() ? "unhealthy"
                            : n.foreignGpus().contains(g.index()) ? "foreign"
                            : !free.contains(g) ? "allocated"
                            : n.spec().cordoned() || !n.eligible() ? "cordoned" : "free";
                    byPoolModelState.merge(List.of(pool, g.model(), state), 1, Integer::sum);
                    nodeCounts.merge(state, 1, Integer::sum);
                    if (state.equals("free")) {
                        freeByModel.merge(g.model(), 1, Integer::sum);
                    }
                }
                STATES.forEach(s -> nodeRows.add(MultiGauge.Row.of(
                        Tags.of("node", n.nodeId(), "pool", pool, "state", s), nodeCounts.get(s))));
                int freeHere = freeByModel.values().stream().mapToInt(Integer::intValue).sum();
                int maxOneModel = freeByModel.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                for (int k : typicalSizes) {
                    if (freeHere > 0 && maxOneModel < k) {
                        strandedBySize.merge(k, freeHere, Integer::sum);
                    }
                }
            }
            strandedBySize.forEach((k, v) -> strandedRows.add(MultiGauge.Row.of(Tags.of("pool", pool,
                    "size", Integer.toString(k)), v)));
        }
        // every state of every pool and model, so a dashboard shows 0 rather than nothing
        Map<List<String>, Integer> complete = new HashMap<>(byPoolModelState);
        byPoolModelState.keySet().forEach(k -> STATES.forEach(
                s -> complete.putIfAbsent(List.of(k.get(0), k.get(1), s), 0)));
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        complete.forEach((k, v) -> rows.add(MultiGauge.Row.of(Tags.of("pool", k.get(0), "model", k.get(1),
                "state", k.get(2)), v)));
        return new Rows(fragmentationRows, rows, nodeRows, strandedRows);
    }

    @PreDestroy
    void stop() {
        refreshing.cancel(false);
    }
}
