package io.gantry.billing;

import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.BudgetEvent;
import io.gantry.events.BudgetState;
import io.gantry.events.BudgetStatusChanged;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
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
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two billing instances sharing the work on one broker and one database (as {@code gantry dev --instances 2} runs
 * them), both evaluating budgets: {@code billing.budget-events} carries one {@code BudgetStatusChanged} per change of
 * a budget, whichever instance the admin's PUT reached and whatever changed it (the budget set, the spend), not one
 * per instance; when the announcing instance stops, the other one announces every budget once and then carries on.
 */
class BudgetAnnouncementsAcrossInstancesTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    /** How long the count of a budget's announcements must stay put: several checks of each instance. */
    private static final Duration STEADY = Duration.ofSeconds(3);
    private static final String ADMIN = "admin-token-budgets";
    /** 1,200.00 EUR per GPU-hour: a minute on 8 GPUs costs 160.00 EUR. */
    private static final String BOOK = """
            currency: EUR
            gpu:
              - {model: H100, perGpuHour: "1200", effectiveFrom: 2025-01-01T00:00:00Z}
            """;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final Map<String, Integer> ports = new HashMap<>();
    private final Map<String, ApplicationContext> instances = new LinkedHashMap<>();

    @Test
    void eachChangeOfABudgetIsAnnouncedOnceAndTheInstanceTakingOverAnnouncesEveryBudgetOnce() throws Exception {
        try (EmbeddedKafka broker = EmbeddedKafka.start(null, 0, Map.of());
             TopicClient kafka = new TopicClient(broker.bootstrapServers())) {
            start(broker, "1s");
            String reporter = reporter();
            String other = reporter.equals("1") ? "2" : "1";

            // set on the instance that does not report, then changed on the one that does
            HttpResponse<String> set = put(other, "/v1/budgets", "application/json",
                    "{\"budgets\": [{\"tenant\": \"vision\", \"limit\": \"100\", \"action\": \"HOLD\", \"warnAt\": [50]}]}");
            assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
            announced(kafka, "vision", 1, BudgetState.OK, "100.00");
            assertThat(put(reporter, "/v1/budgets", "application/json", """
                    {"budgets": [{"tenant": "vision", "limit": "200", "action": "HOLD", "warnAt": [50]},
                                 {"tenant": "nlp", "limit": "50"}]}""").statusCode()).isEqualTo(200);
            announced(kafka, "vision", 2, BudgetState.OK, "200.00");
            announced(kafka, "nlp", 1, BudgetState.OK, "50.00");

            // the spend crosses vision's 50 % threshold: seen by both instances' timers, announced once
            release(kafka, "vision", Instant.now().minusSeconds(5));
            announced(kafka, "vision", 3, BudgetState.WARNING, "200.00");
            assertThat(events(kafka, "vision").get(2).getThresholdPercent()).isEqualTo(50);

            // nlp's budget removed on the instance that does not report: once more as OK, vision untouched
            HttpResponse<String> removed = put(other, "/v1/budgets", "application/json",
                    "{\"budgets\": [{\"tenant\": \"vision\", \"limit\": \"200\", \"action\": \"HOLD\", \"warnAt\": [50]}]}");
            assertThat(status(removed, "vision")).containsEntry("state", "WARNING").containsEntry("spent", "160.00");
            announced(kafka, "nlp", 2, BudgetState.OK, "50.00");
            announced(kafka, "vision", 3, BudgetState.WARNING, "200.00");

            // the announcing instance stops: the other one reports now and announces every budget once
            instances.remove(reporter).close();
            await().atMost(TIMEOUT).until(() -> instances.get(other).getBean(BillingProcessor.class).reportsCluster());
            announced(kafka, "vision", 4, BudgetState.WARNING, "200.00");
            announced(kafka, "nlp", 2, BudgetState.OK, "50.00");
        } finally {
            instances.values().forEach(ApplicationContext::close);
        }
    }

    @Test
    void aBudgetReplacedOnTheInstanceThatDoesNotReportIsAnnouncedWithinSecondsNotAtTheNextCheck() throws Exception {
        try (EmbeddedKafka broker = EmbeddedKafka.start(null, 0, Map.of());
             TopicClient kafka = new TopicClient(broker.bootstrapServers())) {
            start(broker, "1h");
            String reporter = reporter();
            String other = reporter.equals("1") ? "2" : "1";
            HttpResponse<String> set = put(other, "/v1/budgets", "application/json",
                    "{\"budgets\": [{\"tenant\": \"vision\", \"limit\": \"400\", \"action\": \"REJECT\"}]}");
            assertThat(status(set, "vision")).containsEntry("state", "OK").containsEntry("limit", "400.00");
            announced(kafka, "vision", 1, BudgetState.OK, "400.00");
            // (that first announcement may have come from the reporter's first check, a few seconds after its start;
            // its next check is an hour away)
            release(kafka, "vision", Instant.now().minusSeconds(5));
            await().atMost(TIMEOUT).until(() -> status(get(other, "/v1/budgets"), "vision").get("spent")
                    .equals("160.00"));

            // the answer is the budget as it stands; the announcement follows, from the reporting instance
            HttpResponse<String> lowered = put(other, "/v1/budgets", "application/json",
                    "{\"budgets\": [{\"tenant\": \"vision\", \"limit\": \"200\", \"action\": \"REJECT\"}]}");
            assertThat(status(lowered, "vision")).containsEntry("state", "WARNING").containsEntry("thresholdPercent", 80)
                    .containsEntry("spent", "160.00");
            announced(kafka, "vision", 2, BudgetState.WARNING, "200.00");
            assertThat(events(kafka, "vision").get(1).getAction()).hasToString("REJECT");
        } finally {
            instances.values().forEach(ApplicationContext::close);
        }
    }

    @Test
    void aPriceBookAppliedOnOneInstanceIsInForceOnTheOtherWithinSeconds() throws Exception {
        try (EmbeddedKafka broker = EmbeddedKafka.start(null, 0, Map.of());
             TopicClient kafka = new TopicClient(broker.bootstrapServers())) {
            start(broker, "1h", false);
            HttpResponse<String> applied = put("1", "/v1/price-book", "application/yaml", BOOK);
            assertThat(applied.statusCode()).as(applied.body()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(get("2", "/v1/price-book").body()).contains("\"version\":1"));
            // the other instance prices with it (a minute on 8 H100s at 1,200.00 an hour)
            release(kafka, "vision", Instant.now().minusSeconds(5));
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(get("2", "/v1/costs?tenant=vision").body())
                    .contains("\"total\":\"160.00\""));
            // and applies the next version on top of it (it used to try version 1 again and be refused)
            HttpResponse<String> next = put("2", "/v1/price-book", "application/yaml", BOOK + """
                      - {model: H100, perGpuHour: "1300", effectiveFrom: 2099-01-01T00:00:00Z}
                    """);
            assertThat(next.statusCode()).as(next.body()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(get("1", "/v1/price-book").body()).contains("\"version\":2").contains("1300"));
        } finally {
            instances.values().forEach(ApplicationContext::close);
        }
    }

    private void start(EmbeddedKafka broker, String checkEvery) throws Exception {
        start(broker, checkEvery, true);
    }

    private void start(EmbeddedKafka broker, String checkEvery, boolean bookFile) throws Exception {
        KafkaTopics.ensureAll(broker.bootstrapServers(), 2);
        Path tokens = TokensFile.write(TokensFile.tenants("vision", "vision-token-budgets"), ADMIN);
        Map<String, String> database = EmbeddedPostgres.shared().newDatasource("billing");
        // both start with this price book in force
        Path book = Files.createTempFile("gantry-price-book-", ".yml");
        Files.writeString(book, BOOK);
        InstanceProperties.freePorts(ports, "1", "2");
        for (String id : List.of("1", "2")) {
            Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), ports.get(id), tokens, id);
            props.putAll(database);
            props.put("gantry.kafka.partitions", "2");
            props.put("gantry.billing.budgets.check-every", checkEvery);
            if (bookFile) {
                props.put("gantry.billing.price-book-file", book.toString());
            }
            props.put("gantry.billing.streams.enabled", "false");
            props.put("gantry.billing.data-dir", Files.createTempDirectory("gantry-billing-" + id + "-").toString());
            ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
            instances.put(id, ctx);
            await().atMost(TIMEOUT).until(() -> ctx.getBean(BillingProcessor.class).isReady());
        }
    }

    /** The instance that reports the cluster, once exactly one does. */
    private String reporter() {
        await().atMost(TIMEOUT).until(() -> instances.values().stream()
                .filter(c -> c.getBean(BillingProcessor.class).reportsCluster()).count() == 1);
        return instances.entrySet().stream().filter(e -> e.getValue().getBean(BillingProcessor.class).reportsCluster())
                .findFirst().orElseThrow().getKey();
    }

    /**
     * Waits for the {@code count}th announcement of the tenant's budget, then sees that no other follows while both
     * instances check again and again: the newest is in {@code state} with {@code limit}.
     */
    private static void announced(TopicClient kafka, String tenant, int count, BudgetState state, String limit) {
        await().atMost(TIMEOUT).until(() -> events(kafka, tenant).size() >= count);
        await().during(STEADY).atMost(STEADY.plusSeconds(3))
                .untilAsserted(() -> assertThat(events(kafka, tenant)).as("announcements of " + tenant).hasSize(count));
        BudgetStatusChanged last = events(kafka, tenant).get(count - 1);
        assertThat(last.getState()).isEqualTo(state);
        assertThat(last.getLimit()).isEqualTo(limit);
    }

    private static List<BudgetStatusChanged> events(TopicClient kafka, String tenant) {
        return kafka.readAll(Topics.BILLING_BUDGET_EVENTS).stream().map(BudgetEvent::getPayload)
                .filter(BudgetStatusChanged.class::isInstance).map(BudgetStatusChanged.class::cast)
                .filter(b -> b.getTenant().equals(tenant) && b.getQueue() == null).toList();
    }

    /** A minute on 8 H100s, ending at {@code releasedAt}: 160.00 EUR with {@link #BOOK}. */
    private static void release(TopicClient kafka, String tenant, Instant releasedAt) {
        String job = "budget-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(releasedAt)
                .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant(tenant)
                        .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED)
                        .setGrantedAt(releasedAt.minusSeconds(60)).setReleasedAt(releasedAt)
                        .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0)
                                .setNodeId("n-" + job).setGpuModel("H100")
                                .setGpuIndices(IntStream.range(0, 8).boxed().toList())
                                .setCpuMillis(1000).setMemoryMiB(1024).build()))
                        .setBackend("simulated").build())
                .build());
    }

    private HttpResponse<String> put(String instance, String path, String type, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.get(instance) + path))
                .header("Authorization", "Bearer " + ADMIN).header("Content-Type", type)
                .PUT(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String instance, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.get(instance) + path))
                .header("Authorization", "Bearer " + ADMIN).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The tenant-wide budget of {@code tenant} in a budgets answer (empty when it has none). */
    @SuppressWarnings("unchecked")
    private Map<String, Object> status(HttpResponse<String> answer, String tenant) throws Exception {
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        Map<String, Object> body = instances.values().iterator().next().getBean(JsonMapper.class)
                .readValue(answer.body(), Argument.mapOf(String.class, Object.class));
        return ((List<Map<String, Object>>) body.get("budgets")).stream()
                .filter(b -> tenant.equals(b.get("tenant")) && b.get("queue") == null).findFirst().orElse(Map.of());
    }
}
