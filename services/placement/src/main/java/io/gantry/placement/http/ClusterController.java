package io.gantry.placement.http;

import io.gantry.placement.core.Inventory;
import io.gantry.placement.core.NodeSpec;
import io.gantry.runtime.http.Caller;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.annotation.RequestAttribute;
import java.time.Instant;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Problem;
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
        List<ClusterBody> parts = new ArrayList<>(placement.queryOwned(router -> body(router, caller))
                .get(10, TimeUnit.SECONDS));
        try {
            // split by pool: the pools other instances own, as they answer the same request
            parts.addAll(Units.others(placement, request, json, io.micronaut.core.type.Argument.of(ClusterBody.class)));
        } catch (Units.Unavailable u) {
            return u.answer();
        }
        return HttpResponse.ok(merge(parts));
    }

    /** One unit's part: its pools' capacity, racks, cordons, reservations and rejected registrations. */
    private static ClusterBody body(io.gantry.placement.kafka.PoolRouter router, Caller caller) {
        {
            List<RackBody> racks = new ArrayList<>();
            Map<String, String> rejected = new TreeMap<>();
            List<String> cordoned = new ArrayList<>();
            List<ReservationBody> reservations = new ArrayList<>();
            List<PoolBody> pools = new ArrayList<>();
            int nodes = 0;
            int eligible = 0;
            int gpus = 0;
            int free = 0;
            double stranded = 0;
            List<Integer> typical = router.fallback().typicalRequests();
            for (PlacementHandler h : router.pools().values()) {
                Inventory inv = h.state().inventory();
                inv.rackSummaries().forEach(r -> racks.add(new RackBody(r.spine(), r.rack(), r.nodes(),
                        r.eligibleNodes(), r.gpus(), r.freeGpus())));
                Instant now = h.now();
                h.state().nodes().stream().filter(NodeSpec::cordoned).map(NodeSpec::nodeId).forEach(cordoned::add);
                h.state().reservations().forEach(r -> reservations.add(new ReservationBody(
                        caller != null && !caller.mayAccess(r.tenant()) ? NodesController.OTHER_TENANT : r.jobId(),
                        r.attempt(), r.domain(), r.nodes(), h.state().estimate(r.jobId(), now))));
                rejected.putAll(h.rejectedRegistrations());
                double fragmentation = inv.fragmentation(typical);
                pools.add(new PoolBody(h.pool(), h.backend().name(), h.state().placer().toString(), inv.nodeCount(),
                        inv.eligibleNodes(), inv.eligibleGpus(), inv.eligibleFreeGpus(), fragmentation));
                nodes += inv.nodeCount();
                eligible += inv.eligibleNodes();
                gpus += inv.eligibleGpus();
                free += inv.eligibleFreeGpus();
                stranded += fragmentation * inv.eligibleFreeGpus();
            }
            // each pool's fragmentation is a share of its free GPUs, so weighting by them is exact
            double fragmentation = pools.size() == 1 ? pools.get(0).fragmentation() : free == 0 ? 0.0 : stranded / free;
            return new ClusterBody(router.fallback().state().placer().toString(), nodes, eligible, gpus, free,
                    fragmentation, typical, racks, rejected, cordoned, reservations, pools);
        }
    }

    /**
     * The parts of several units as one: counts added, lists joined (pools by name), fragmentation weighted by each
     * pool's free GPUs as within a unit; the placer and typical requests of the first part (the fallback pool's).
     */
    static ClusterBody merge(List<ClusterBody> parts) {
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
        pools.sort(java.util.Comparator.comparing(PoolBody::pool));
        cordoned.sort(null);
        double stranded = pools.stream().mapToDouble(p -> p.fragmentation() * p.freeGpus()).sum();
        ClusterBody first = parts.get(0);
        return new ClusterBody(first.placer(), nodes, eligible, gpus, free, free == 0 ? 0.0 : stranded / free,
                first.fragmentationTypicalGpus(), racks, rejected, cordoned, reservations, pools);
    }
}
