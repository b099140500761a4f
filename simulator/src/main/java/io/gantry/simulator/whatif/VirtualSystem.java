package io.gantry.simulator.whatif;

import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.placement.kafka.PlacementHandler;
import io.gantry.placement.kafka.PoolRouter;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.queue.core.DispatchPolicy;
import io.gantry.queue.core.FairSharePolicy;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.recovery.kafka.RecoveryProcessor;
import io.gantry.runtime.log.LogDriver;
import io.gantry.runtime.log.VirtualClock;
import io.gantry.schemas.Topics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Queue, placement (on a simulated cluster) and recovery, wired by the loops each service declares for production,
 * on the in-memory log in virtual time: what trace replays, what-if replays and scenario tests run.
 *
 * @param placementTick   how often placement ticks when it cannot tell when its next run ends (the simulated
 *                        backend can, so placement is ticked at its run ends, deadlines and heartbeats)
 * @param heartbeat       how often the simulated nodes heartbeat
 * @param recovery        recovery's heartbeat timeout and restart limit
 * @param recoveryCheck   how often recovery looks for silent nodes
 * @param queueTick       how often the queue ticks (its time-driven decisions)
 */
public record VirtualSystem(Duration placementTick, Duration heartbeat, RecoveryPolicy recovery,
                            Duration recoveryCheck, Duration queueTick) {

    /** With the queue ticking every second, as the service does. */
    public VirtualSystem(Duration placementTick, Duration heartbeat, RecoveryPolicy recovery, Duration recoveryCheck) {
        this(placementTick, heartbeat, recovery, recoveryCheck, Duration.ofSeconds(1));
    }

    /** Started: every service restored and idle at the clock's time. */
    public LogDriver start(VirtualClock clock, SimulatedBackend cluster, QueueConfig queue, PlacementPolicy policy) {
        return start(clock, cluster, queue, policy, false);
    }

    /** As above; {@code onTheWire}: every record is encoded and decoded with its Avro schema, as on Kafka. */
    public LogDriver start(VirtualClock clock, SimulatedBackend cluster, QueueConfig queue, PlacementPolicy policy,
                           boolean onTheWire) {
        return start(clock, cluster, queue, new FairSharePolicy(), new TopologyPlacer(policy, Map.of()), onTheWire,
                h -> { });
    }

    /**
     * The general form: the queue's dispatch policy (the simulator's FIFO baselines use the core's seam), the placer,
     * and a callback told about each fresh placement handler (to read placement's state, e.g. its fragmentation).
     */
    public LogDriver start(VirtualClock clock, SimulatedBackend cluster, QueueConfig queue, DispatchPolicy dispatch,
                           GangPlacer placer, boolean onTheWire, Consumer<PlacementHandler> placementStarted) {
        LogDriver[] holder = new LogDriver[1];
        LogDriver driver = LogDriver.builder(clock).encodeOnTheWire(onTheWire)
                // the queue reads its configuration history from the log when it starts: the driver exists by then
                .service(QueueProcessor.loop(queue, () -> holder[0].values(Topics.QUEUE_CONFIG_EVENTS), clock,
                        dispatch, queueTick))
                .service(PlacementProcessor.loop(cluster, new io.gantry.placement.backend.VirtualClock(clock, 1.0),
                        placer, heartbeat, false, List.of(8), placementTick)
                        // one pool: its handler is the whole of placement
                        .observed(h -> placementStarted.accept(((PoolRouter) h).fallback())))
                .service(RecoveryProcessor.loop(recovery, clock, recoveryCheck))
                .build();
        holder[0] = driver;
        return driver.start();
    }

    /** A queue configuration file (deleted when the JVM exits) holding {@code yaml}, for {@code gantry.queue.config-file}. */
    public static String configFile(String yaml) {
        try {
            Path file = Files.createTempFile("gantry-queues-", ".yml");
            file.toFile().deleteOnExit();
            Files.writeString(file, yaml);
            return file.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
