package io.gantry.recovery;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A service on a broker that asks for SASL: its {@code kafka.security.protocol} and {@code kafka.sasl.*} settings
 * reach every Kafka client it makes (here recovery's event loop, its topic creation and its access view), so it
 * works there; a client without them gets nothing.
 */
class KafkaSecurityIntegrationTest {
    private static final String USER = "gantry";
    private static final String PASSWORD = "s3cret-" + UUID.randomUUID().toString().replace("-", "");

    @Test
    void aServiceGivenTheSaslSettingsWorksOnABrokerThatAsksForThemAndAClientWithoutThemGetsNothing() throws Exception {
        try (EmbeddedKafka broker = EmbeddedKafka.start(null, 0, EmbeddedKafka.saslPlain(USER, PASSWORD))) {
            Map<String, String> client = EmbeddedKafka.saslPlainClient(USER, PASSWORD);
            Map<String, Object> properties = new HashMap<>();
            properties.put("kafka.bootstrap.servers", broker.bootstrapServers());
            client.forEach((k, v) -> properties.put("kafka." + k, v));
            properties.put("micronaut.server.port", -1);
            Path tokens = TokensFile.write(TokensFile.tenants("vision", "vision-token-123"), null);
            properties.put("gantry.auth.tokens-file", tokens.toString());
            properties.put("gantry.recovery.heartbeat-timeout", "3s");
            properties.put("gantry.recovery.check-interval", "200ms");
            // its one node, alone in its pool, is declared failed at the timeout (not held as a pool gone silent)
            properties.put("gantry.recovery.disruption-hold", "0s");
            try (ApplicationContext context = ApplicationContext.run(EmbeddedServer.class, properties).getApplicationContext();
                 TopicClient kafka = new TopicClient(broker.bootstrapServers(), new HashMap<>(client))) {
                String node = "sim-" + UUID.randomUUID();
                kafka.send(Topics.PLACEMENT_NODE_EVENTS, node, registration(node));
                kafka.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, node, heartbeat(node));

                // recovery read both over SASL, and wrote its verdict once the node fell silent
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(kafka.readAll(
                        Topics.RECOVERY_NODE_EVENTS).stream().filter(e -> node.equals(e.getNodeId()))
                        .map(NodeHealthEvent::getPayload)).anyMatch(NodeFailed.class::isInstance));
            }

            try (Admin plain = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    broker.bootstrapServers(), AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000,
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000))) {
                assertThatThrownBy(() -> plain.listTopics(new ListTopicsOptions().timeoutMs(3000)).names()
                        .get(10, TimeUnit.SECONDS)).as("no SASL, no topics").isInstanceOf(ExecutionException.class);
            }
        }
    }

    private static NodeEvent registration(String node) {
        return NodeEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.now())
                .setPayload(io.gantry.events.NodeRegistered.newBuilder().setGpus(java.util.List.of()).setCpuMillis(1000)
                        .setMemoryMiB(1024L).setLabels(Map.of()).setBackend("simulated").build()).build();
    }

    private static NodeHeartbeatEvent heartbeat(String node) {
        return NodeHeartbeatEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.now()).setPayload(NodeHeartbeat.newBuilder().setSequence(0).build()).build();
    }
}
