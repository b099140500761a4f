package io.gantry.simulator.whatif;

import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.queue.adapter.QueueConfig;
import io.gantry.queue.adapter.QueueProcessor;
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

/**
 * Queue, placement (on a simulated cluster) and recovery, wired by the loops each service declares for production,
 * on the in-memory log in virtual time: what what-if replays and scenario tests run.
 *
 * @param placementTick   how often placement ticks (starts, polls and stops simulated runs)
 * @param heartbeat       how often the simulated nodes heartbeat
 * @param recovery        recovery's heartbeat timeout and restart limit
 * @param recoveryCheck   how often recovery looks for silent nodes
 */
public record VirtualSystem(Duration placementTick, Duration heartbeat, RecoveryPolicy recovery,
                            Duration recoveryCheck) {

    /** Started: every service restored and idle at the clock's time. */
    public LogDriver start(VirtualClock clock, SimulatedBackend cluster, QueueConfig queue, PlacementPolicy policy) {
        return start(clock, cluster, queue, policy, false);
    }

    /** As above; {@code onTheWire}: every record is encoded and decoded with its Avro schema, as on Kafka. */
    public LogDriver start(VirtualClock clock, SimulatedBackend cluster, QueueConfig queue, PlacementPolicy policy,
                           boolean onTheWire) {
        LogDriver[] holder = new LogDriver[1];
        LogDriver driver = LogDriver.builder(clock).encodeOnTheWire(onTheWire)
                // the queue reads its configuration history from the log when it starts: the driver exists by then
                .service(QueueProcessor.loop(queue, () -> holder[0].values(Topics.QUEUE_CONFIG_EVENTS), clock))
                .service(PlacementProcessor.loop(cluster, new io.gantry.placement.backend.VirtualClock(clock, 1.0),
                        new TopologyPlacer(policy, Map.of()), heartbeat, false, List.of(8), placementTick))
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
