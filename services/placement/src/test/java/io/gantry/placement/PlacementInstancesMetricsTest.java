package io.gantry.placement;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.placement.kafka.PlacementProcessor;
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

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two placement instances, one owning the work and one standing by, scraped as Prometheus scrapes them: the
 * inventory's series come from the owner only (the standby exports none of them, not even zeros), so their sum over
 * both scrapes is the cluster's figure.
 */
class PlacementInstancesMetricsTest {
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
        props.put("gantry.placement.metrics.refresh", "500ms");
        return ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
    }

    @Test
    void theStandbyExportsNoInventorySeriesSoTheSumOverBothInstancesIsTheClustersFigure() throws Exception {
        try (ApplicationContext one = instance("1")) {
            await().atMost(TIMEOUT).until(() -> one.getBean(PlacementProcessor.class).isReady());
            try (ApplicationContext two = instance("2")) {
                await().atMost(TIMEOUT).until(() -> two.getBean(PlacementProcessor.class).ownership().role()
                        == Ownership.Role.STANDBY);
                HttpResponse<String> cluster = INSTANCES.get("1", "/v1/cluster", ADMIN);
                assertThat(cluster.statusCode()).as(cluster.body()).isEqualTo(200);
                int gpus = Integer.parseInt(cluster.body().replaceAll("(?s).*\"gpus\"\\s*:\\s*(\\d+).*", "$1"));
                assertThat(gpus).isPositive();

                await().atMost(TIMEOUT).untilAsserted(() -> {
                    PrometheusText owner = INSTANCES.scrape("1");
                    PrometheusText standby = INSTANCES.scrape("2");
                    assertThat(owner.sum("gantry_placement_gpus", Map.of()) + standby.sum("gantry_placement_gpus",
                            Map.of())).as("GPUs by state, summed over both instances").isEqualTo(gpus);
                    for (String series : List.of("gantry_placement_gpus", "gantry_placement_node_gpus",
                            "gantry_placement_fragmentation", "gantry_placement_stranded_gpus")) {
                        assertThat(owner.has(series)).as("the owner exports " + series).isTrue();
                        assertThat(standby.samples(series)).as("the standby exports no " + series).isEmpty();
                    }
                    assertThat(owner.samples("gantry_placement_fragmentation"))
                            .allSatisfy(s -> assertThat(s.labels()).containsKey("pool"));
                    assertThat(owner.samples("gantry_placement_stranded_gpus"))
                            .allSatisfy(s -> assertThat(s.labels()).containsKeys("pool", "size"));
                });
            }
        }
    }
}
