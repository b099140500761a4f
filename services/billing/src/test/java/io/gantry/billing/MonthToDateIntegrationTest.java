package io.gantry.billing;

import io.gantry.billing.core.UsageRow;
import io.gantry.billing.streams.MonthToDateSettings;
import io.gantry.billing.streams.MonthToDateStreams;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.UsageEvent;
import io.gantry.events.UsageRecorded;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Month-to-date GPU time end to end on the real broker and PostgreSQL: releases → billing's ledger and
 * {@code billing.usage-events} → the Kafka Streams aggregation → {@code GET /v1/usage/month-to-date} and the gauges.
 * Months of 2040, so usage other test classes leave on the shared topic does not mix in.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MonthToDateIntegrationTest implements TestPropertyProvider {
    private static final String VISION = "vision-token-mtd";
    private static final String NLP = "nlp-token-mtd12";
    private static final String ADMIN = "admin-token-mtd";
    private static final Duration AWAIT = Duration.ofSeconds(60);
    private static final String FEBRUARY = "/v1/usage/month-to-date?month=2040-02";

    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());
    private final HttpClient client = HttpClient.newHttpClient();
    private final Map<String, String> properties = new HashMap<>();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @Inject
    ApplicationContext context;

    @Inject
    JsonMapper json;

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            properties.putAll(BillingStack.properties(VISION, NLP, ADMIN));
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    @Order(1)
    void releasedAllocationsBecomeMonthToDateGpuTimePerTenantCutAtTheMonthBoundary() {
        // 2 H100 from 23:00 on 31 January to 01:00 on 1 February (UTC): 2 GPU-hours in each month
        release("across", "vision", "2040-01-31T23:00:00Z", "2040-02-01T01:00:00Z", node("n1", "H100", 0, 1));
        release("nlp", "nlp", "2040-02-10T00:00:00Z", "2040-02-10T01:00:00Z", node("n2", "H100", 0));

        Map<String, Object> february = await().atMost(AWAIT).ignoreExceptions().until(() -> json(get(FEBRUARY, ADMIN)),
                m -> rows(m).size() == 2);
        assertThat(february).containsEntry("month", "2040-02").containsEntry("timeZone", "UTC")
                .containsEntry("from", "2040-02-01T00:00:00Z").containsEntry("to", "2040-03-01T00:00:00Z")
                .containsEntry("totalGpuSeconds", "10800.000");
        assertThat(rows(february)).extracting(r -> r.get("tenant"), r -> r.get("gpuModel"), r -> r.get("gpuSeconds"),
                r -> ((Number) r.get("entries")).intValue())
                .containsExactly(org.assertj.core.groups.Tuple.tuple("nlp", "H100", "3600.000", 1),
                        org.assertj.core.groups.Tuple.tuple("vision", "H100", "7200.000", 1));

        Map<String, Object> january = json(get("/v1/usage/month-to-date?month=2040-01", VISION));
        assertThat(january).containsEntry("totalGpuSeconds", "7200.000");
        assertThat(rows(january)).extracting(r -> r.get("tenant")).containsExactly("vision");

        // a tenant sees its own; an admin may ask for one
        assertThat(rows(json(get(FEBRUARY, VISION)))).extracting(r -> r.get("tenant")).containsExactly("vision");
        assertThat(rows(json(get(FEBRUARY + "&tenant=nlp", ADMIN)))).extracting(r -> r.get("tenant"))
                .containsExactly("nlp");
        // the ledger's own answer for the month is the same figure
        assertThat(json(get("/v1/usage?from=2040-02-01T00:00:00Z&to=2040-03-01T00:00:00Z&tenant=vision", VISION)))
                .containsEntry("totalGpuSeconds", "7200.000");
    }

    @Test
    @Order(2)
    void aRepublishedUsageEventCountsOnce() {
        // (undecodable records are dead-lettered in MonthToDateTopologyTest: junk here would reach every reader of
        // the topic the test classes share)
        ConsumerRecord<String, byte[]> published = kafka.readAllRaw(Topics.BILLING_USAGE_EVENTS).stream()
                .filter(r -> entryId(r.value()).equals("alloc-across-" + run + "/n1")).findFirst().orElseThrow();
        kafka.sendRaw(Topics.BILLING_USAGE_EVENTS, published.key(), published.value());
        release("later", "vision", "2040-02-05T00:00:00Z", "2040-02-05T01:00:00Z", node("n1", "H100", 0));

        Map<String, Object> vision = await().atMost(AWAIT).ignoreExceptions().until(() -> json(get(FEBRUARY, VISION)),
                m -> "10800.000".equals(m.get("totalGpuSeconds")));
        assertThat(rows(vision).get(0)).containsEntry("entries", 2);
    }

    @Test
    @Order(3)
    void theGaugesShowEachTenantsGpuTimeOfTheNewestMonth() {
        // no other test's usage is newer than February 2040, so "to date" is February 2040
        await().atMost(AWAIT).until(() -> get("/prometheus", ADMIN).body(), body -> body.contains(
                "gantry_billing_month_to_date_gpu_seconds{tenant=\"vision\"} 10800.0")
                && body.contains("gantry_billing_month_to_date_gpu_seconds{tenant=\"nlp\"} 3600.0")
                && body.contains("gantry_billing_month_to_date_entries{tenant=\"vision\"} 2.0"));
        HttpResponse<String> health = get("/health", ADMIN);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        // /health is DOWN once a loop stops for good (its details are not shown to anonymous callers)
        assertThat(context.getBeansOfType(io.micronaut.management.health.indicator.HealthIndicator.class))
                .anyMatch(i -> i instanceof io.gantry.runtime.http.EventLoopHealthIndicator);
    }

    @Test
    @Order(4)
    void badQueriesAreRefusedNamingTheField() {
        assertProblem(get("/v1/usage/month-to-date?month=2040-13", VISION), 400, "month");
        assertProblem(get("/v1/usage/month-to-date?tenant=nlp", VISION), 403, "tenant");
        assertProblem(get("/v1/usage/month-to-date?tenant=bad%20id", ADMIN), 400, "tenant");
        assertThat(get("/v1/usage/month-to-date", "no-such-token").statusCode()).isEqualTo(401);
    }

    @Test
    @Order(5)
    void aNewInstanceRestoresTheTotalsFromTheChangelogAndTheReadIsUnavailableMeanwhile() throws IOException {
        MonthToDateStreams first = context.getBean(MonthToDateStreams.class);
        List<UsageRow> before = first.rows(YearMonth.of(2040, 2), null);
        first.close();
        HttpResponse<String> closed = get(FEBRUARY, VISION);
        assertThat(closed.statusCode()).isEqualTo(503);
        assertThat(closed.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(closed.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));

        // same application id, an empty state directory: the stores come back from their changelog topics
        MonthToDateSettings settings = context.getBean(MonthToDateSettings.class)
                .withStateDir(Files.createTempDirectory("gantry-billing-restarted-"));
        try (MonthToDateStreams restarted = new MonthToDateStreams(settings, Clock.systemUTC())) {
            await().atMost(AWAIT).until(restarted::isRunning);
            assertThat(restarted.rows(YearMonth.of(2040, 2), null)).isEqualTo(before).hasSize(2);
            assertThat(restarted.rows(YearMonth.of(2040, 1), "vision")).extracting(UsageRow::gpuMillis)
                    .containsExactly(7_200_000L);
        }
    }

    private void release(String name, String tenant, String from, String to, TaskPlacement... placements) {
        String job = name + "-" + run;
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(Instant.parse(to))
                .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant(tenant)
                        .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(Instant.parse(from))
                        .setReleasedAt(Instant.parse(to)).setPlacements(List.of(placements)).setBackend("simulated")
                        .build())
                .build());
    }

    private static TaskPlacement node(String node, String model, Integer... gpus) {
        return TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(node).setGpuModel(model)
                .setGpuIndices(List.of(gpus)).setCpuMillis(1000).setMemoryMiB(1024).build();
    }

    private static String entryId(byte[] value) {
        try {
            UsageEvent e = AvroWire.decode(Topics.BILLING_USAGE_EVENTS, value);
            return ((UsageRecorded) e.getPayload()).getEntryId();
        } catch (RuntimeException notAUsageEvent) {
            return "";
        }
    }

    private HttpResponse<String> get(String path, String token) {
        try {
            return client.send(HttpRequest.newBuilder(URI.create(
                            context.getBean(EmbeddedServer.class).getURL() + path))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private Map<String, Object> json(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        try {
            return json.readValue(r.body(), Argument.mapOf(String.class, Object.class));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rows(Map<String, Object> m) {
        return (List<Map<String, Object>>) m.get("rows");
    }

    private void assertProblem(HttpResponse<String> r, int status, String field) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"field\":\"" + field + "\"");
    }
}
