package io.gantry.placement.http;

import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Units;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Cordon and uncordon: a cordoned node gets no new work (running work continues). Recorded as the control label
 * {@code gantry.io/cordoned=true} on a re-published {@code NodeRegistered}, so it survives a restart.
 */
@Controller("/v1/admin/nodes/{nodeId}")
@ExecuteOn(TaskExecutors.BLOCKING)
public class NodeAdminController {
    private final PlacementProcessor placement;

    public NodeAdminController(PlacementProcessor placement) {
        this.placement = placement;
    }

    @Serdeable
    public record CordonState(String nodeId, boolean cordoned) {
    }

    @Post("/cordon")
    public HttpResponse<?> cordon(io.micronaut.http.HttpRequest<?> request,
                                  @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                  @PathVariable String nodeId) throws Exception {
        return change(request, caller, nodeId, true);
    }

    @Post("/uncordon")
    public HttpResponse<?> uncordon(io.micronaut.http.HttpRequest<?> request,
                                    @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                    @PathVariable String nodeId) throws Exception {
        return change(request, caller, nodeId, false);
    }

    /** GPUs to return to service; empty or absent: every cordoned GPU of the node. */
    @Serdeable
    public record GpuUncordon(@Nullable List<Integer> gpus) {
    }

    @Serdeable
    public record GpuCordonState(String nodeId, List<Integer> cordonedGpus) {
    }

    /**
     * Returns GPUs cordoned after a device fault to service (after repair). The node's own cordon (a drain, a failed
     * pre-flight check) is lifted separately with {@code /uncordon}.
     */
    @Post(value = "/gpus/uncordon", consumes = MediaType.ALL)
    public HttpResponse<?> uncordonGpus(io.micronaut.http.HttpRequest<?> request,
                                        @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                        @PathVariable String nodeId, @Nullable @Header("Content-Type") String contentType,
                                        @Nullable @Body byte[] raw) throws Exception {
        if (caller == null || !caller.admin()) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the admin role is required", List.of());
        }
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        List<Integer> gpus;
        try {
            // no body at all: every cordoned GPU; a body is read strictly (one JSON object, {"gpus": [indices]})
            gpus = raw == null || raw.length == 0 ? List.of()
                    : AdminBody.parse(contentType, raw, java.util.Set.of("gpus")).integers("gpus", 0, 1023);
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        } catch (AdminBody.Invalid e) {
            return e.problem();
        }
        Optional<java.util.SortedSet<Integer>> left = placement.commandOwned((h, out) ->
                h.uncordonGpus(nodeId, new java.util.TreeSet<>(gpus), out), java.time.Duration.ofSeconds(10));
        if (left.isEmpty()) {
            Optional<HttpResponse<?>> elsewhere = Units.elsewhere(placement.units(), request, raw);
            if (elsewhere.isPresent()) {
                return elsewhere.get();
            }
            return Problem.response(HttpStatus.NOT_FOUND, "Not found", "no node " + nodeId,
                    List.of(new Problem.FieldError("nodeId", "unknown node")));
        }
        return HttpResponse.ok(new GpuCordonState(nodeId, List.copyOf(left.get())));
    }

    private HttpResponse<?> change(io.micronaut.http.HttpRequest<?> request, Caller caller, String nodeId,
                                   boolean cordon) throws Exception {
        if (caller == null || !caller.admin()) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the admin role is required", List.of());
        }
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        Optional<Boolean> now = placement.commandOwned((h, out) -> h.cordon(nodeId, cordon, out),
                java.time.Duration.ofSeconds(10));
        if (now.isEmpty()) {
            Optional<HttpResponse<?>> elsewhere = Units.elsewhere(placement.units(), request, new byte[0]);
            if (elsewhere.isPresent()) {
                return elsewhere.get();
            }
            return Problem.response(HttpStatus.NOT_FOUND, "Not found", "no node " + nodeId,
                    List.of(new Problem.FieldError("nodeId", "unknown node")));
        }
        return HttpResponse.ok(new CordonState(nodeId, now.get()));
    }
}
