package io.gantry.billing;

import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.DatabaseOutage;
import io.gantry.testkit.LogCapture;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.jdbc.DataSourceResolver;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Billing while its PostgreSQL is down or cut off: the ledger's reads and the admin's writes are answered promptly
 * with 503 problem+json and a Retry-After (never left to hang until the connection is cut, or for ever) and logged as
 * one warning line each, {@code /health} is DOWN, a usage record that arrives meanwhile waits in Kafka, and once PostgreSQL is back, without
 * a restart, it is in the ledger and every request is served again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseOutageIntegrationTest {
    private static final String VISION = "outage-vision-token";
    private static final String NLP = "outage-nlp-token";
    private static final String ADMIN = "outage-admin-token";
    private static final Instant GRANTED = Instant.parse("2033-04-01T10:00:00Z"); // a month no other test bills

    private DatabaseOutage outage;
    private ApplicationContext context;

    @BeforeAll
    void startBillingOnItsOwnPostgres() {
        KafkaTopics.ensureAll(EmbeddedKafka.shared().bootstrapServers(), 1);
        outage = DatabaseOutage.start("billing_outage");
        Map<String, Object> props = new HashMap<>(BillingStack.properties(VISION, NLP, ADMIN));
        props.putAll(outage.settings());
        context = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        outage.serving(context.getBean(EmbeddedServer.class).getURL().toString(), context);
        await().atMost(Duration.ofSeconds(60)).until(context.getBean(BillingProcessor.class)::isReady);
    }

    @AfterEach
    void endTheOutage() {
        outage.end();
    }

    @AfterAll
    void stop() throws Exception {
        if (outage != null) {
            outage.close();
        }
    }

    @Test
    void aDatabaseOutageIsAnsweredAtOnceWith503AndNoUsageIsLostWhenItIsBack() {
        String before = "job-" + UUID.randomUUID();
        release(before);
        await().atMost(Duration.ofSeconds(30)).until(() -> entries(before).body().contains("alloc-" + before));
        assertThat(outage.get("/health", null).statusCode()).isEqualTo(200);

        String during = "job-" + UUID.randomUUID();
        try (LogCapture log = LogCapture.start()) {
            outage.stopDatabase();
            release(during);

            outage.assertUnavailable(outage.get("/v1/usage", VISION));
            outage.assertUnavailable(entries(before));
            outage.assertUnavailable(outage.get("/v1/invoices", ADMIN));
            outage.assertUnavailable(outage.send("PUT", "/v1/budgets", ADMIN,
                    "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"100\", \"action\": \"WARN\"}]}"));
            outage.assertHealthDown();
            DatabaseOutage.assertLoggedQuietly(log, "/v1/usage", "/v1/usage/entries", "/v1/invoices", "/v1/budgets");
        }

        outage.startDatabase();

        outage.awaitHealthUp();
        // the record that came during the outage waited in Kafka: it is in the ledger now, once
        await().atMost(Duration.ofSeconds(60)).until(() -> entries(during).statusCode() == 200
                && entries(during).body().contains("alloc-" + during));
        assertThat(entries(during).body().split("\"entryId\"", -1)).as("one ledger row").hasSize(2);
        assertThat(entries(before).statusCode()).isEqualTo(200);
        assertThat(outage.get("/v1/usage", VISION).statusCode()).isEqualTo(200);
    }

    @Test
    void aQueryCutOffByANetworkPartitionIsAnswered503AndTheServiceServesAgainWhenThePartitionHeals()
            throws Exception {
        String job = "job-" + UUID.randomUUID();
        release(job);
        await().atMost(Duration.ofSeconds(30)).until(() -> entries(job).body().contains("alloc-" + job));
        outage.awaitHealthUp();

        // a request whose query is in flight when the partition strikes: PostgreSQL holds it on a lock until then,
        // and its answer is sent into the partition
        try (LogCapture log = LogCapture.start()) {
            CompletableFuture<HttpResponse<String>> inFlight = outage.getCutOffInFlight("usage_entry",
                    "/v1/usage/entries?jobId=" + job, VISION, "%\"job_id\" = $1%");
            // without a socket timeout the driver would wait for that answer for ever, and the request with it
            outage.assertUnavailable(inFlight.get(DatabaseOutage.PROMPT.toMillis(), TimeUnit.MILLISECONDS));
            outage.assertUnavailable(entries(job));
            outage.assertUnavailable(outage.get("/v1/invoices", ADMIN));
            outage.assertHealthDown();
            DatabaseOutage.assertLoggedQuietly(log, "/v1/usage/entries", "/v1/invoices");
        }

        outage.heal();

        outage.awaitHealthUp();
        assertThat(entries(job).statusCode()).isEqualTo(200);
        assertThat(entries(job).body()).contains("alloc-" + job);
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

    private HttpResponse<String> entries(String job) {
        return outage.get("/v1/usage/entries?jobId=" + job, VISION);
    }

    @Test
    void postgresqlIsToldToEndASessionWhoseInstanceWentSilentWithinAMinute() throws Exception {
        DataSource pool = context.getBean(DataSource.class);
        DatabaseOutage.assertSilentClientsAreDropped(
                context.findBean(DataSourceResolver.class).map(r -> r.resolve(pool)).orElse(pool));
    }
}
