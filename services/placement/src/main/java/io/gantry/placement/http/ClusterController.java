package io.gantry.placement.http;

import io.gantry.placement.core.Inventory;
import io.gantry.placement.core.NodeSpec;
import io.gantry.runtime.http.Caller;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.annotation.RequestAttribute;
import java.time.Instant;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.Units;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import io.gantry.placement.kafka.PlacementHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cluster at a glance: capacity, free GPUs per rack, fragmentation and the placer in use, over all pools, and
 * the same per pool ({@code pools}).
 */
@Controller("/v1/cluster")
@ExecuteOn(TaskExecutors.BLOCKING)
public class ClusterController {
    private final PlacementProcessor placement;

    private final io.micronaut.json.JsonMapper json;

    public ClusterController(PlacementProcessor placement, io.micronaut.json.JsonMapper json) {
        this.placement = placement;
        this.json = json;
    }

    @Serdeable
    public record RackBody(String spine, String rack, int nodes, int eligibleNodes, int gpus, int freeGpus) {
    }

    /** A drain under way: for which job, where, and when it is expected to end (null: unknown). */
    @Serdeable
    public record ReservationBody(String job, int attempt, String domain, List<String> nodes,
                                  @Nullable Instant estimate) {
    }

    /** One pool: its backend and placer, and its capacity over its eligible nodes. */
    @Serdeable
    public record PoolBody(String pool, String backend, String placer, int nodes, int eligibleNodes, int gpus,
                           int freeGpus, double fragmentation) {
    }

    @Serdeable
    public record ClusterBody(String placer, int nodes, int eligibleNodes, int gpus, int freeGpus,
                              double fragmentation, List<Integer> fragmentationTypicalGpus, List<RackBody> racks,
                              Map<String, String> rejectedRegistrations, List<String> cordonedNodes,
                              List<ReservationBody> reservations, List<PoolBody> pools) {
    }

    @Get
    public HttpResponse<?> summary(io.micronaut.http.HttpRequest<?> request,
                                   @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        List<ClusterBody> parts = new ArrayList<>();
        placement.queryOwned(router -> parts(router, caller)).get(10, TimeUnit.SECONDS).forEach(parts::addAll);
        try {
            // split by pool: the pools other instances own, as they answer the same request
            parts.addAll(Units.others(placement.units(), request, json,
                    io.micronaut.core.type.Argument.of(ClusterBody.class)));
        } catch (Units.Unavailable u) {
            return u.answer();
        }
        List<String> order = placement.pools().stream().map(PlacementProcessor.Pool::name).toList();
        return HttpResponse.ok(merge(parts, order));
    }

    /** A unit's parts, one per pool: its capacity, racks, cordons, reservations and rejected registrations. */
    private static List<ClusterBody> parts(io.gantry.placement.kafka.PoolRouter router, Caller caller) {
        List<ClusterBody> parts = new ArrayList<>();
        List<Integer> typical = router.fallback().typicalRequests();
        for (PlacementHandler h : router.pools().values()) {
            Inventory inv = h.state().inventory();
            List<RackBody> racks = new ArrayList<>();
            inv.rackSummaries().forEach(r -> racks.add(new RackBody(r.spine(), r.rack(), r.nodes(),
                    r.eligibleNodes(), r.gpus(), r.freeGpus())));
            Instant now = h.now();
            List<String> cordoned = h.state().nodes().stream().filter(NodeSpec::cordoned).map(NodeSpec::nodeId)
                    .toList();
            List<ReservationBody> reservations = h.state().reservations().stream().map(r -> new ReservationBody(
                    caller != null && !caller.mayAccess(r.tenant()) ? NodesController.OTHER_TENANT : r.jobId(),
                    r.attempt(), r.domain(), r.nodes(), h.state().estimate(r.jobId(), now))).toList();
            double fragmentation = inv.fragmentation(typical);
            String placer = h.state().placer().toString();
            parts.add(new ClusterBody(placer, inv.nodeCount(), inv.eligibleNodes(), inv.eligibleGpus(),
                    inv.eligibleFreeGpus(), fragmentation, typical, racks, new TreeMap<>(h.rejectedRegistrations()),
                    cordoned, reservations, List.of(new PoolBody(h.pool(), h.backend().name(), placer,
                    inv.nodeCount(), inv.eligibleNodes(), inv.eligibleGpus(), inv.eligibleFreeGpus(), fragmentation))));
        }
        return parts;
    }

    /**
     * The parts of several pools as one: counts added, lists joined, pools in configuration {@code order}, the
     * fragmentation weighted by each pool's free GPUs (each pool's is a share of its free GPUs, so this is exact);
     * the placer of the pool a job naming none runs in ({@code default}, else the first), the typical requests of any.
     */
    static ClusterBody merge(List<ClusterBody> parts, List<String> order) {
        if (parts.size() == 1) {
            return parts.get(0);
        }
        List<RackBody> racks = new ArrayList<>();
        Map<String, String> rejected = new TreeMap<>();
        List<String> cordoned = new ArrayList<>();
        List<ReservationBody> reservations = new ArrayList<>();
        List<PoolBody> pools = new ArrayList<>();
        int nodes = 0;
        int eligible = 0;
        int gpus = 0;
        int free = 0;
        for (ClusterBody p : parts) {
            racks.addAll(p.racks());
            rejected.putAll(p.rejectedRegistrations());
            cordoned.addAll(p.cordonedNodes());
            reservations.addAll(p.reservations());
            pools.addAll(p.pools());
            nodes += p.nodes();
            eligible += p.eligibleNodes();
            gpus += p.gpus();
            free += p.freeGpus();
        }
        pools.sort(java.util.Comparator.comparingInt((PoolBody p) -> order.indexOf(p.pool())));
        double stranded = pools.stream().mapToDouble(p -> p.fragmentation() * p.freeGpus()).sum();
        String fallback = order.contains(io.gantry.placement.core.Pools.DEFAULT) ? io.gantry.placement.core.Pools.DEFAULT
                : order.isEmpty() ? "" : order.get(0);
        String placer = pools.stream().filter(p -> p.pool().equals(fallback)).map(PoolBody::placer).findFirst()
                .orElse(parts.get(0).placer());
        return new ClusterBody(placer, nodes, eligible, gpus, free, free == 0 ? 0.0 : stranded / free,
                parts.get(0).fragmentationTypicalGpus(), racks, rejected, cordoned, reservations, pools);
    }
}
