package io.gantry.placement.kafka;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.GangPlacer;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.ServiceLoop;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.gantry.schemas.Topic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Owns placement's event processor: restores from placement's topics (its configuration history included, so the
 * GPU tiers are published only when they changed; plus the dispatched specs on the queue's
 * topic, to re-create simulated runs, and the queue's preemptions, to finish a grace period pending at a restart),
 * then consumes the queue's job, preemption and capacity-reservation events and recovery's node events.
 */
@Context
public class PlacementProcessor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PlacementProcessor.class);

    private final EventProcessor processor;
    private final ExecutionBackend backend;
    private final GangPlacer placer;
    private final List<Integer> typicalGpus;
    private volatile PlacementHandler current;

    public PlacementProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.kafka.partitions:1}") int partitions,
                            @Value("${gantry.placement.tick-interval:200ms}") Duration tickInterval,
                            ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                            HeartbeatInterval heartbeat,
                            @Value("${gantry.placement.restore-dispatches:true}") boolean restoreDispatches,
                            @Value("${gantry.placement.fragmentation.typical-gpus:8}") List<Integer> typicalGpus,
                            @Value("${gantry.placement.reservations.grace-period:30s}") Duration drainGrace,
                            @Value("${gantry.placement.utilisation.sample-every:10s}") Duration utilisationEvery,
                            @Value("${gantry.placement.utilisation.window:5m}") Duration utilisationWindow,
                            @Value("${gantry.placement.utilisation.idle-percent:5}") int idlePercent) {
        this.backend = backend;
        this.placer = placer;
        this.typicalGpus = List.copyOf(typicalGpus);
        this.processor = EventProcessor.builder(Service.PLACEMENT, bootstrap)
                .loop(loop(backend, clock, placer, heartbeat.interval(), restoreDispatches, this.typicalGpus,
                        tickInterval, (int) drainGrace.toSeconds(), new PlacementHandler.UtilisationSettings(
                                utilisationEvery, utilisationWindow, idlePercent))
                        .observed(h -> current = (PlacementHandler) h))
                .partitions(partitions)
                .build()
                .start();
        LOG.info("placement started with the {} backend and the {} placer", backend.name(), placer);
    }

    /**
     * Placement's event loop, declared once: dispatches, preemptions, reservations and node health in; its own
     * allocations and nodes (and, for allocations written before runs carried their run time, the dispatches) to
     * restore from; a tick every {@code tickInterval} to start, poll and stop runs on the backend. The backend lives
     * across restarts of the loop (its runs are real processes or simulated ones that outlive a handler).
     */
    public static ServiceLoop loop(ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                                   Duration heartbeatInterval, boolean restoreDispatches, List<Integer> typicalGpus,
                                   Duration tickInterval) {
        return loop(backend, clock, placer, heartbeatInterval, restoreDispatches, typicalGpus, tickInterval, 30);
    }

    /**
     * The loop with the grace period of runs stopped to bound a capacity reservation's drain (the bound itself comes
     * with each reservation, from the queue's configuration).
     */
    public static ServiceLoop loop(ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                                   Duration heartbeatInterval, boolean restoreDispatches, List<Integer> typicalGpus,
                                   Duration tickInterval, int drainGraceSeconds) {
        return loop(backend, clock, placer, heartbeatInterval, restoreDispatches, typicalGpus, tickInterval,
                drainGraceSeconds, PlacementHandler.UtilisationSettings.DEFAULT);
    }

    /** The loop with its utilisation sampling ({@code gantry.placement.utilisation.*}). */
    public static ServiceLoop loop(ExecutionBackend backend, VirtualClock clock, GangPlacer placer,
                                   Duration heartbeatInterval, boolean restoreDispatches, List<Integer> typicalGpus,
                                   Duration tickInterval, int drainGraceSeconds,
                                   PlacementHandler.UtilisationSettings utilisation) {
        List<Topic<?>> restore = new ArrayList<>(List.of(Topics.PLACEMENT_ALLOCATION_EVENTS,
                Topics.PLACEMENT_NODE_EVENTS, Topics.RECOVERY_NODE_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS,
                Topics.PLACEMENT_CONFIG_EVENTS));
        if (restoreDispatches) {
            restore.add(Topics.QUEUE_JOB_EVENTS);
        }
        return new ServiceLoop(Service.PLACEMENT,
                List.of(Topics.QUEUE_JOB_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS, Topics.QUEUE_RESERVATION_EVENTS,
                        Topics.RECOVERY_NODE_EVENTS, Topics.RECOVERY_DEVICE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS),
                restore, tickInterval,
                () -> {
                    ClusterState state = new ClusterState(backend.name(), placer);
                    state.drainGrace(drainGraceSeconds);
                    return new PlacementHandler(state, backend, clock, heartbeatInterval)
                            .typicalRequests(List.copyOf(typicalGpus)).utilisation(utilisation);
                });
    }

    /** Runs {@code query} against the live state on the loop thread. */
    public <T> CompletableFuture<T> query(Function<PlacementHandler, T> query) {
        return processor.submit(out -> query.apply(current));
    }

    /** Runs {@code command} on the loop thread; what it sends commits in the loop's transaction. */
    public <T> CompletableFuture<T> command(java.util.function.BiFunction<PlacementHandler, io.gantry.runtime.kafka.Output, T> command) {
        return processor.submit(out -> command.apply(current, out));
    }

    public GangPlacer placer() {
        return placer;
    }

    /** Fragmentation as of the last tick; 0 before the first. */
    public double fragmentation() {
        PlacementHandler h = current;
        return h == null ? 0.0 : h.fragmentation();
    }

    public List<Integer> typicalGpus() {
        return typicalGpus;
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
