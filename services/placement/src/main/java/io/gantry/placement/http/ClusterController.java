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

    public ClusterController(PlacementProcessor placement) {
        this.placement = placement;
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
    public HttpResponse<?> summary(@Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        ClusterBody body = placement.query(router -> {
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
        }).get(10, TimeUnit.SECONDS);
        return HttpResponse.ok(body);
    }
}
