package io.gantry.recovery.http;

import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.kafka.RecoveryProcessor;
import io.gantry.runtime.http.Caller;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.serde.annotation.Serdeable;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Node health as recovery sees it; any authenticated caller may read it (nodes are shared by all tenants). */
@Controller("/v1/nodes")
public class NodeHealthController {
    private final RecoveryProcessor processor;

    public NodeHealthController(RecoveryProcessor processor) {
        this.processor = processor;
    }

    @Get("/health")
    public CompletableFuture<List<NodeHealthView>> health(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        return processor.nodes().thenApply(nodes -> nodes.stream().map(NodeHealthView::of).toList());
    }

    /**
     * Whether the failure detector is watching: false after a (re)start until recovery has read the heartbeats that
     * arrived while it was down; no node is declared failed meanwhile.
     */
    @Get("/detector")
    public CompletableFuture<DetectorView> detector(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        return processor.watching().thenApply(DetectorView::new);
    }

    @Serdeable
    public record DetectorView(boolean watching) {
    }

    /**
     * Nodes with GPUs (or the whole node) out of service after hardware faults, as recovery decided them and has not
     * yet seen returned to service by an operator.
     */
    @Get("/devices")
    public CompletableFuture<List<OutOfServiceView>> devices(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        return processor.outOfService().thenApply(l -> l.stream().map(o -> new OutOfServiceView(o.nodeId(),
                o.cordonedGpus(), o.nodeCordoned(), o.drained())).toList());
    }

    @Serdeable
    public record OutOfServiceView(String nodeId, List<Integer> cordonedGpus, boolean nodeCordoned, boolean drained) {
    }

    /** Instants as ISO-8601 strings, so the JSON does not depend on the serializer's date settings. */
    @Serdeable
    public record NodeHealthView(String nodeId, String state, String lastHeartbeatAt, String failedAt) {
        static NodeHealthView of(NodeHealth n) {
            return new NodeHealthView(n.nodeId(), n.state().name(), iso(n.lastHeartbeatAt()), iso(n.failedAt()));
        }

        private static String iso(Instant t) {
            return t == null ? null : t.toString();
        }
    }
}
