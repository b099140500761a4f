package io.gantry.placement.http;

import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;
import java.util.concurrent.TimeUnit;

/** Admin controls of the simulated cluster: make a node fail (silent, tasks stuck) or come back. */
@Controller("/v1/admin/simulation/nodes/{nodeId}")
@ExecuteOn(TaskExecutors.BLOCKING)
public class SimulationController {
    private final PlacementProcessor placement;

    public SimulationController(PlacementProcessor placement) {
        this.placement = placement;
    }

    @Serdeable
    public record SimulatedNode(String nodeId, boolean failed) {
    }

    @Post("/fail")
    public HttpResponse<?> fail(@Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                @PathVariable String nodeId) throws Exception {
        return change(caller, nodeId, true);
    }

    @Post("/revive")
    public HttpResponse<?> revive(@Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                  @PathVariable String nodeId) throws Exception {
        return change(caller, nodeId, false);
    }

    private HttpResponse<?> change(Caller caller, String nodeId, boolean fail) throws Exception {
        if (caller == null || !caller.admin()) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the admin role is required", List.of());
        }
        if (!(placement.backend() instanceof SimulatedBackend sim)) {
            return Problem.response(HttpStatus.CONFLICT, "Not simulated",
                    "the active backend is " + placement.backend().name() + "; only simulated nodes can be failed",
                    List.of());
        }
        Boolean known = placement.query(h -> {
            if (!sim.knows(nodeId)) {
                return false;
            }
            if (fail) {
                sim.fail(nodeId);
            } else {
                sim.revive(nodeId);
            }
            return true;
        }).get(10, TimeUnit.SECONDS);
        if (!known) {
            return Problem.response(HttpStatus.NOT_FOUND, "Not found", "no simulated node " + nodeId,
                    List.of(new Problem.FieldError("nodeId", "unknown simulated node")));
        }
        return HttpResponse.ok(new SimulatedNode(nodeId, fail));
    }
}
