package io.gantry.billing;

import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.StoppablePostgres;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Billing while its PostgreSQL is down: the ledger's reads and the admin's writes are answered at once with 503
 * problem+json and a Retry-After (never left to hang until the connection is cut), {@code /health} is DOWN, a usage
 * record that arrives meanwhile waits in Kafka, and once PostgreSQL is back, without a restart, it is in the ledger
 * and every request is served again. The PostgreSQL is the test's own (a stop would break the other test classes).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseOutageIntegrationTest {
    private static final String VISION = "outage-vision-token";
    private static final String NLP = "outage-nlp-token";
    private static final String ADMIN = "outage-admin-token";
    /** Well above the answer a client must get (the pool's 2 s wait), well below the 15 s idle close. */
    private static final Duration PROMPT = Duration.ofSeconds(5);
    private static final Instant GRANTED = Instant.parse("2033-04-01T10:00:00Z"); // a month no other test bills

    private StoppablePostgres postgres;
    private ApplicationContext context;
    private String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    void startBillingOnItsOwnPostgres() throws Exception {
        KafkaTopics.ensureAll(EmbeddedKafka.shared().bootstrapServers(), 1);
        postgres = StoppablePostgres.start("billing_outage");
        Map<String, Object> props = new HashMap<>(BillingStack.properties(VISION, NLP, ADMIN));
        props.putAll(postgres.datasource());
        context = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        base = context.getBean(EmbeddedServer.class).getURL().toString();
        await().atMost(Duration.ofSeconds(60)).until(context.getBean(BillingProcessor.class)::isReady);
    }

    @AfterAll
    void stop() {
        // the service first: its loop must not outlive the database it writes to
        if (context != null) {
            context.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void aDatabaseOutageIsAnsweredAtOnceWith503AndNoUsageIsLostWhenItIsBack() throws Exception {
        String before = "job-" + UUID.randomUUID();
        release(before);
        await().atMost(Duration.ofSeconds(30)).until(() -> entries(before).body().contains("alloc-" + before));
        assertThat(get("/health", null).statusCode()).isEqualTo(200);

        postgres.stop();
        String during = "job-" + UUID.randomUUID();
        release(during);

        assertUnavailable(get("/v1/usage", VISION));
        assertUnavailable(entries(before));
        assertUnavailable(get("/v1/invoices", ADMIN));
        assertUnavailable(send("PUT", "/v1/budgets", ADMIN,
                "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"100\", \"action\": \"WARN\"}]}"));
        HttpResponse<String> health = get("/health", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
        // the check that failed is named (Micronaut's database check), not where the database is
        assertThat(health.body()).contains("\"status\":\"DOWN\"").contains("\"jdbc\"").doesNotContain("jdbc:")
                .doesNotContain("127.0.0.1");

        postgres.startAgain();

        await().atMost(Duration.ofSeconds(60)).until(() -> get("/health", null).statusCode() == 200);
        // the record that came during the outage waited in Kafka: it is in the ledger now, once
        await().atMost(Duration.ofSeconds(60)).until(() -> entries(during).statusCode() == 200
                && entries(during).body().contains("alloc-" + during));
        assertThat(entries(during).body().split("\"entryId\"", -1)).as("one ledger row").hasSize(2);
        assertThat(entries(before).statusCode()).isEqualTo(200);
        assertThat(get("/v1/usage", VISION).statusCode()).isEqualTo(200);
    }

    private void assertUnavailable(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
        assertThat(r.body()).contains("\"status\":503").containsIgnoringCase("database")
                // the cause is named, never where the database is or how to log in to it
                .doesNotContain("jdbc:").doesNotContain("password")
                .doesNotContain(postgres.datasource().get("datasources.default.password"));
    }

    private static void release(String job) {
        TaskPlacement node = TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId("n1")
                .setGpuModel("H100").setGpuIndices(List.of(0)).setCpuMillis(1000).setMemoryMiB(1024).build();
        try (TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(GRANTED.plusSeconds(60))
                    .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant("vision")
                            .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(GRANTED)
                            .setReleasedAt(GRANTED.plusSeconds(60)).setPlacements(List.of(node))
                            .setBackend("simulated").build())
                    .build());
        }
    }

    private HttpResponse<String> entries(String job) throws Exception {
        return get("/v1/usage/entries?jobId=" + job, VISION);
    }

    private HttpResponse<String> get(String path, String token) throws Exception {
        return send("GET", path, token, null);
    }

    /** Fails (HttpTimeoutException) rather than wait past {@link #PROMPT} for the answer. */
    private HttpResponse<String> send(String method, String path, String token, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(PROMPT)
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
