package io.gantry.recovery;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.recovery.kafka.RecoveryProcessor;
import io.gantry.runtime.kafka.Ownership;
import io.gantry.testkit.InstanceHttp;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.PrometheusText;
import io.gantry.testkit.TokensFile;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two recovery instances, one owning the work and one standing by, scraped as Prometheus scrapes them: node health
 * comes from the owner only (the standby exports none of it, not even zeros), so a sum over both scrapes is the
 * cluster's figure.
 */
class RecoveryInstancesMetricsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String ADMIN = "metrics-admin-token-123";
    private static EmbeddedKafka broker;
    private static Path tokens;
    private static final InstanceHttp INSTANCES = new InstanceHttp("1", "2");

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        tokens = TokensFile.write(TokensFile.tenants("vision", "metrics-vision-token-1"), ADMIN);
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static ApplicationContext instance(String id) {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), INSTANCES.port(id), tokens, id);
        props.put("gantry.recovery.metrics.refresh", "500ms");
        return ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
    }

    @Test
    void theStandbyExportsNoNodeHealthSeriesNotEvenZeros() throws Exception {
        try (ApplicationContext one = instance("1")) {
            await().atMost(TIMEOUT).until(() -> one.getBean(RecoveryProcessor.class).isReady());
            try (ApplicationContext two = instance("2")) {
                await().atMost(TIMEOUT).until(() -> two.getBean(RecoveryProcessor.class).ownership().role()
                        == Ownership.Role.STANDBY);
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    PrometheusText owner = INSTANCES.scrape("1");
                    PrometheusText standby = INSTANCES.scrape("2");
                    assertThat(owner.samples("gantry_recovery_nodes")).extracting(s -> s.label("state"))
                            .containsExactlyInAnyOrder("HEALTHY", "FAILED");
                    assertThat(owner.has("gantry_recovery_node_failures_total")).isTrue();
                    for (String series : List.of("gantry_recovery_nodes", "gantry_recovery_node_up",
                            "gantry_recovery_node_heartbeat_age_seconds", "gantry_recovery_node_failures_total")) {
                        assertThat(standby.samples(series)).as("the standby exports no " + series).isEmpty();
                    }
                });
            }
        }
    }
}
