package io.gantry.recovery;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Placement away for longer than the heartbeat timeout (restarting, failing over) silences every node of its pool at
 * once: recovery, on a real broker, declares none of them failed; once the pool's heartbeats come again, a node that
 * is still silent is declared failed a timeout later, and the others are not.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RecoveryDisruptionIntegrationTest implements TestPropertyProvider {
    private final Map<String, String> properties = new HashMap<>();
    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            Path tokens = TokensFile.write(TokensFile.tenants("vision", "disruption-vision-token"), null);
            properties.putAll(Map.of(
                    "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                    "micronaut.server.port", "-1",
                    "gantry.auth.tokens-file", tokens.toString(),
                    "gantry.recovery.heartbeat-timeout", "2s",
                    "gantry.recovery.check-interval", "200ms"));
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    void aPoolWhoseHeartbeatsAllStopIsHeldAndANodeStillSilentWhenTheyComeAgainFails() {
        String pool = "pool-" + UUID.randomUUID();
        List<String> nodes = List.of(pool + "-n1", pool + "-n2", pool + "-n3");
        nodes.forEach(n -> kafka.send(Topics.PLACEMENT_NODE_EVENTS, n, registration(n, pool)));
        beat(nodes, Duration.ofSeconds(2));

        // placement away: 5 s of silence, two and a half heartbeat timeouts, and no node declared failed throughout
        await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7)).until(() -> failed(nodes).isEmpty());

        // placement back, n3 not with it
        beat(nodes.subList(0, 2), Duration.ofSeconds(4));
        await().atMost(Duration.ofSeconds(20)).until(() -> failed(nodes), f -> !f.isEmpty());
        assertThat(failed(nodes)).containsExactly(nodes.get(2));
    }

    /** A heartbeat of each of {@code nodes} every 250 ms, as placement sends them, for {@code forHowLong}. */
    private void beat(List<String> nodes, Duration forHowLong) {
        Instant until = Instant.now().plus(forHowLong);
        long[] seq = {0};
        await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(250)).atMost(forHowLong.plusSeconds(5))
                .until(() -> {
                    for (String n : nodes) {
                        kafka.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, n, NodeHeartbeatEvent.newBuilder()
                                .setEventId(UUID.randomUUID().toString()).setNodeId(n).setOccurredAt(Instant.now())
                                .setPayload(NodeHeartbeat.newBuilder().setSequence(seq[0]).build()).build());
                    }
                    seq[0]++;
                    return !Instant.now().isBefore(until);
                });
    }

    private List<String> failed(List<String> nodes) {
        return kafka.readAll(Topics.RECOVERY_NODE_EVENTS).stream()
                .filter(e -> nodes.contains(e.getNodeId()) && e.getPayload() instanceof NodeFailed)
                .map(NodeHealthEvent::getNodeId).distinct().toList();
    }

    private static NodeEvent registration(String node, String pool) {
        return NodeEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.now())
                .setPayload(NodeRegistered.newBuilder().setGpus(List.of()).setCpuMillis(1000).setMemoryMiB(1024L)
                        .setLabels(Map.of()).setBackend("simulated").setPool(pool).build()).build();
    }
}
