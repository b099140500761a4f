package io.gantry.placement.http;

import io.gantry.placement.backend.DeviceFault;
import io.gantry.placement.backend.SimulatedBackend;
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
 * Admin controls of the simulated cluster: make a node fail (silent, tasks stuck) or come back; inject a device
 * fault; make a node's pre-flight check fail.
 */
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
    public HttpResponse<?> fail(io.micronaut.http.HttpRequest<?> request,
                                @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                @PathVariable String nodeId) throws Exception {
        Optional<HttpResponse<?>> elsewhere = elsewhere(request, nodeId, null);
        return elsewhere.isPresent() ? elsewhere.get() : change(caller, nodeId, true);
    }

    @Post("/revive")
    public HttpResponse<?> revive(io.micronaut.http.HttpRequest<?> request,
                                  @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                  @PathVariable String nodeId) throws Exception {
        Optional<HttpResponse<?>> elsewhere = elsewhere(request, nodeId, null);
        return elsewhere.isPresent() ? elsewhere.get() : change(caller, nodeId, false);
    }

    /** A device fault to inject: {@code kind} one of DeviceFaultKind's symbols; {@code gpu} absent: the node. */
    @Serdeable
    public record FaultBody(@Nullable Integer gpu, @Nullable String kind, @Nullable Integer xid,
                            @Nullable String message) {
    }

    @Serdeable
    public record InjectedFault(String nodeId, @Nullable Integer gpu, String kind, @Nullable Integer xid, String message) {
    }

    @Serdeable
    public record PreflightBody(boolean fail) {
    }

    @Serdeable
    public record PreflightState(String nodeId, boolean failing) {
    }

    /** Injects a device fault: published on placement.device-events at the next tick, then decided by recovery. */
    @Post(value = "/faults", consumes = MediaType.ALL)
    public HttpResponse<?> fault(io.micronaut.http.HttpRequest<?> request,
                                 @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                 @PathVariable String nodeId, @Nullable @Header("Content-Type") String contentType,
                                 @Nullable @Body byte[] raw) throws Exception {
        HttpResponse<?> refused = refuse(caller);
        if (refused != null) {
            return refused;
        }
        Optional<HttpResponse<?>> elsewhere = elsewhere(request, nodeId, raw);
        if (elsewhere.isPresent()) {
            return elsewhere.get();
        }
        FaultBody body;
        try {
            AdminBody b = AdminBody.parse(contentType, raw, java.util.Set.of("gpu", "kind", "xid", "message"));
            // Xid codes are positive; GPU indices are small (a node has at most a few dozen)
            body = new FaultBody(b.integer("gpu", 0, 1023), b.text("kind", 64), b.integer("xid", 1, 100_000),
                    b.text("message", 1000));
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        } catch (AdminBody.Invalid e) {
            return e.problem();
        }
        DeviceFault.Kind kind;
        try {
            kind = DeviceFault.Kind.valueOf(body.kind() == null ? "" : body.kind().trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException bad) {
            return Problem.response(HttpStatus.BAD_REQUEST, "Invalid request", "unknown fault kind " + body.kind(),
                    List.of(new Problem.FieldError("kind", "one of " + java.util.Arrays.toString(DeviceFault.Kind.values()))));
        }
        DeviceFault fault;
        try {
            fault = new DeviceFault(nodeId, body.gpu(), kind, body.xid(), "admin", body.message());
        } catch (IllegalArgumentException bad) {
            String field = bad.getMessage().contains("xid") ? "xid" : bad.getMessage().contains("gpu") ? "gpu" : "nodeId";
            return Problem.response(HttpStatus.BAD_REQUEST, "Invalid request", bad.getMessage(),
                    List.of(new Problem.FieldError(field, bad.getMessage())));
        }
        Boolean known = placement.queryPool(poolOf(nodeId), h -> {
            SimulatedBackend sim = simulated(nodeId);
            if (sim == null) {
                return false;
            }
            sim.inject(fault);
            return true;
        }).get(10, TimeUnit.SECONDS);
        if (!known) {
            return Problem.response(HttpStatus.NOT_FOUND, "Not found", "no simulated node " + nodeId,
                    List.of(new Problem.FieldError("nodeId", "unknown simulated node")));
        }
        return HttpResponse.accepted().body(new InjectedFault(nodeId, fault.gpuIndex(), kind.name(), fault.xid(),
                fault.message()));
    }

    /** Makes the node's pre-flight check fail (or pass again). */
    @Post(value = "/preflight", consumes = MediaType.ALL)
    public HttpResponse<?> preflight(io.micronaut.http.HttpRequest<?> request,
                                     @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                     @PathVariable String nodeId, @Nullable @Header("Content-Type") String contentType,
                                     @Nullable @Body byte[] raw) throws Exception {
        HttpResponse<?> refused = refuse(caller);
        if (refused != null) {
            return refused;
        }
        Optional<HttpResponse<?>> elsewhere = elsewhere(request, nodeId, raw);
        if (elsewhere.isPresent()) {
            return elsewhere.get();
        }
        PreflightBody body;
        try {
            body = new PreflightBody(AdminBody.parse(contentType, raw, java.util.Set.of("fail")).bool("fail"));
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        } catch (AdminBody.Invalid e) {
            return e.problem();
        }
        Boolean known = placement.queryPool(poolOf(nodeId), h -> {
            SimulatedBackend sim = simulated(nodeId);
            if (sim == null) {
                return false;
            }
            sim.failPreflight(nodeId, body.fail());
            return true;
        }).get(10, TimeUnit.SECONDS);
        if (!known) {
            return Problem.response(HttpStatus.NOT_FOUND, "Not found", "no simulated node " + nodeId,
                    List.of(new Problem.FieldError("nodeId", "unknown simulated node")));
        }
        return HttpResponse.ok(new PreflightState(nodeId, body.fail()));
    }

    /**
     * Split by pool: the answer of the instance owning the unit of the node's pool, when that is another instance
     * (the simulated node lives in that instance's backend); empty when the node is simulated here.
     */
    private Optional<HttpResponse<?>> elsewhere(io.micronaut.http.HttpRequest<?> request, String nodeId, byte[] raw) {
        for (PlacementProcessor.Pool pool : placement.pools()) {
            if (pool.backend() instanceof SimulatedBackend sim && sim.knows(nodeId)) {
                return Units.toOwnerOf(placement.units(), request, pool.name(), raw);
            }
        }
        return Optional.empty();
    }

    /** 403 for a non-admin, 409 when no pool is simulated; null when the request may go on. */
    private HttpResponse<?> refuse(Caller caller) {
        if (caller == null || !caller.admin()) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the admin role is required", List.of());
        }
        if (simulatedBackends().isEmpty()) {
            return Problem.response(HttpStatus.CONFLICT, "Not simulated",
                    "the active backend is " + backends() + "; only simulated nodes take injected faults",
                    List.of());
        }
        return null;
    }

    private List<SimulatedBackend> simulatedBackends() {
        return placement.pools().stream().map(PlacementProcessor.Pool::backend)
                .filter(b -> b instanceof SimulatedBackend).map(b -> (SimulatedBackend) b).toList();
    }

    /** The pool whose simulated backend has the node, or null. */
    private String poolOf(String nodeId) {
        return placement.pools().stream().filter(p -> p.backend() instanceof SimulatedBackend sim && sim.knows(nodeId))
                .map(PlacementProcessor.Pool::name).findFirst().orElse(null);
    }

    /** The simulated backend that has the node, or null. */
    private SimulatedBackend simulated(String nodeId) {
        return simulatedBackends().stream().filter(b -> b.knows(nodeId)).findFirst().orElse(null);
    }

    /** The pools' backends, as a sentence names them (the backend alone when there is one pool). */
    private String backends() {
        List<PlacementProcessor.Pool> pools = placement.pools();
        return pools.size() == 1 ? pools.get(0).backend().name() : String.join(", ", pools.stream()
                .map(p -> p.backend().name() + " (pool " + p.name() + ")").toList());
    }

    private HttpResponse<?> change(Caller caller, String nodeId, boolean fail) throws Exception {
        if (caller == null || !caller.admin()) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the admin role is required", List.of());
        }
        if (simulatedBackends().isEmpty()) {
            return Problem.response(HttpStatus.CONFLICT, "Not simulated",
                    "the active backend is " + backends() + "; only simulated nodes can be failed",
                    List.of());
        }
        Boolean known = placement.queryPool(poolOf(nodeId), h -> {
            SimulatedBackend sim = simulated(nodeId);
            if (sim == null) {
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
