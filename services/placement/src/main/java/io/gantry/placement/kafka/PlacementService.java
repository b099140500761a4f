package io.gantry.placement.kafka;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.GangPlacer;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Owns placement's event processor: restores from placement's topics (plus the dispatched specs on the queue's
 * topic, to re-create simulated runs), then consumes the queue's job events and recovery's node events.
 */
@Context
public class PlacementService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PlacementService.class);

    private final EventProcessor processor;
    private final ExecutionBackend backend;
    private volatile PlacementHandler current;

    public PlacementService(@Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.kafka.partitions:1}") int partitions,
                            @Value("${gantry.placement.tick-interval:200ms}") Duration tickInterval,
                            ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                            HeartbeatInterval heartbeat) {
        this.backend = backend;
        this.processor = EventProcessor.builder(Service.PLACEMENT, bootstrap)
                .inputs(Topics.QUEUE_JOB_EVENTS, Topics.RECOVERY_NODE_EVENTS)
                .restoreFrom(Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.PLACEMENT_NODE_EVENTS,
                        Topics.RECOVERY_NODE_EVENTS, Topics.QUEUE_JOB_EVENTS)
                .handler(() -> {
                    PlacementHandler h = new PlacementHandler(new ClusterState(backend.name(), placer), backend, clock,
                            heartbeat.interval());
                    current = h;
                    return h;
                })
                .tickEvery(tickInterval)
                .partitions(partitions)
                .build()
                .start();
        LOG.info("placement started with the {} backend and the {} placer", backend.name(), placer);
    }

    /** Runs {@code query} against the live state on the loop thread. */
    public <T> CompletableFuture<T> query(Function<PlacementHandler, T> query) {
        return processor.submit(out -> query.apply(current));
    }

    public boolean isReady() {
        return processor.isReady();
    }

    public ExecutionBackend backend() {
        return backend;
    }

    /** The heartbeat period of the active backend's nodes. */
    public record HeartbeatInterval(Duration interval) {
    }

    @PreDestroy
    @Override
    public void close() {
        processor.close();
        backend.close();
    }
}
