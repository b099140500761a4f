package io.gantry.billing;

import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.PrometheusText;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two billing instances sharing the work, on a broker of their own, one database and one Streams application (as
 * {@code gantry dev --instances 2} runs them), scraped as Prometheus scrapes them: the month's figures per tenant
 * (from the ledger every instance reads, and from the month-to-date stores each instance holds whole with its standby
 * copies) come from one instance, so their sum over both scrapes is the tenant's figure, not twice it.
 */
class BillingInstancesMetricsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** Three runs of 2 GPUs for 10 s each. */
    private static final double GPU_SECONDS = 3 * 2 * 10;
    private static EmbeddedKafka broker;
    private static Path tokens;
    private static Map<String, String> database;
    private static final String APPLICATION_ID = "gantry-billing-month-to-date-" + UUID.randomUUID();
    private static final Map<String, Integer> PORTS = new HashMap<>();

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        KafkaTopics.ensureAll(broker.bootstrapServers(), 2);
        tokens = TokensFile.write(TokensFile.tenants("vision", "vision-token-metrics"), "admin-token-metrics");
        database = EmbeddedPostgres.shared().newDatasource("billing");
        InstanceProperties.freePorts(PORTS, "1", "2");
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static ApplicationContext instance(String id) throws Exception {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), PORTS.get(id), tokens, id);
        props.putAll(database);
        props.put("gantry.kafka.partitions", "2");
        props.put("gantry.billing.finops.check-every", "1s");
        props.put("gantry.billing.month-to-date.reporter-check", "500ms");
        props.put("gantry.billing.streams.application-id", APPLICATION_ID);
        props.put("gantry.billing.data-dir", Files.createTempDirectory("gantry-billing-" + id + "-").toString());
        ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        await().atMost(TIMEOUT).until(() -> ctx.getBean(BillingProcessor.class).isReady());
        return ctx;
    }

    @Test
    void summedOverBothInstancesTheMonthsFiguresPerTenantAreTheTenantsFigures() throws Exception {
        Map<String, ApplicationContext> instances = new LinkedHashMap<>();
        try (TopicClient kafka = new TopicClient(broker.bootstrapServers())) {
            instances.put("1", instance("1"));
            instances.put("2", instance("2"));
            Instant released = Instant.now().minusSeconds(5);
            for (int i = 0; i < 3; i++) {
                String job = "metrics-" + i + "-" + UUID.randomUUID();
                kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                        .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(released)
                        .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant("vision")
                                .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED)
                                .setGrantedAt(released.minusSeconds(10)).setReleasedAt(released)
                                .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0)
                                        .setNodeId("n-" + i).setGpuModel("H100").setGpuIndices(List.of(0, 1))
                                        .setCpuMillis(1000).setMemoryMiB(1024).build()))
                                .setBackend("simulated").build())
                        .build());
            }

            Map<String, String> vision = Map.of("tenant", "vision");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<PrometheusText> pages = List.of(scrape("1"), scrape("2"));
                for (String series : List.of("gantry_billing_month_gpu_seconds",
                        "gantry_billing_month_to_date_gpu_seconds")) {
                    assertThat(pages.stream().mapToDouble(p -> p.sum(series, vision)).sum())
                            .as(series + ", summed over both instances").isEqualTo(GPU_SECONDS);
                    assertThat(pages).as(series + " comes from one instance").filteredOn(p -> p.has(series))
                            .hasSize(1);
                }
                assertThat(pages.stream().mapToDouble(p -> p.sum("gantry_instance_reporter", Map.of())).sum())
                        .as("one instance reports the cluster").isEqualTo(1);
            });
        } finally {
            instances.values().forEach(ApplicationContext::close);
        }
    }

    private static PrometheusText scrape(String instance) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORTS.get(instance)
                + "/prometheus")).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return PrometheusText.parse(r.body());
    }
}
