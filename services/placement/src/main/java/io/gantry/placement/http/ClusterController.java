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

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The pool at a glance: capacity, free GPUs per rack, fragmentation, and the placer in use. */
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

    @Serdeable
    public record ClusterBody(String placer, int nodes, int eligibleNodes, int gpus, int freeGpus,
                              double fragmentation, List<Integer> fragmentationTypicalGpus, List<RackBody> racks,
                              Map<String, String> rejectedRegistrations, List<String> cordonedNodes,
                              List<ReservationBody> reservations) {
    }

    @Get
    public HttpResponse<?> summary(@Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        ClusterBody body = placement.query(h -> {
            Inventory inv = h.state().inventory();
            List<RackBody> racks = inv.rackSummaries().stream().map(r -> new RackBody(r.spine(), r.rack(), r.nodes(),
                    r.eligibleNodes(), r.gpus(), r.freeGpus())).toList();
            Instant now = h.now();
            List<String> cordoned = h.state().nodes().stream().filter(NodeSpec::cordoned).map(NodeSpec::nodeId)
                    .toList();
            List<ReservationBody> reservations = h.state().reservations().stream().map(r -> new ReservationBody(
                    caller != null && !caller.mayAccess(r.tenant()) ? NodesController.OTHER_TENANT : r.jobId(),
                    r.attempt(), r.domain(), r.nodes(), h.state().estimate(r.jobId(), now))).toList();
            return new ClusterBody(placement.placer().toString(), inv.nodeCount(), inv.eligibleNodes(),
                    inv.eligibleGpus(), inv.eligibleFreeGpus(), inv.fragmentation(h.typicalRequests()),
                    h.typicalRequests(), racks, h.rejectedRegistrations(), cordoned, reservations);
        }).get(10, TimeUnit.SECONDS);
        return HttpResponse.ok(body);
    }
}
