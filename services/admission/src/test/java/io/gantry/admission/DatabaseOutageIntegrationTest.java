package io.gantry.admission;

import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.GpuDevice;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.StoppablePostgres;
import io.gantry.testkit.TokensFile;
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
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Admission while its PostgreSQL is down: every request that needs the database is answered at once with 503
 * problem+json and a Retry-After (never left to hang until the connection is cut), a submission that could not be
 * stored is never accepted, {@code /health} is DOWN, and all of it works again once PostgreSQL is back, without a
 * restart. The PostgreSQL is the test's own (a stop would break every other test class on the shared one).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseOutageIntegrationTest {
    private static final String VISION = "outage-vision-token";
    private static final String ADMIN = "outage-admin-token";
    /** Well above the answer a client must get (the pool's 2 s wait), well below the 15 s idle close. */
    private static final Duration PROMPT = Duration.ofSeconds(5);

    private StoppablePostgres postgres;
    private ApplicationContext context;
    private String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    void startAdmissionOnItsOwnPostgres() throws Exception {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        // a node to place the test's one-GPU jobs on; the node topic is shared with the other test classes, so the
        // smallest node that serves (it moves no other class's "largest node" or "whole cluster")
        String node = "outage-node-" + UUID.randomUUID();
        try (TopicClient kafka = new TopicClient(bootstrap)) {
            kafka.send(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setNodeId(node).setOccurredAt(Instant.now())
                    .setPayload(NodeRegistered.newBuilder()
                            .setGpus(List.of(GpuDevice.newBuilder().setIndex(0).setModel("H100").setMemoryMiB(81920)
                                    .build()))
                            .setCpuMillis(4_000).setMemoryMiB(16_384).setLabels(Map.of())
                            .setBackend("simulated").build())
                    .build());
        }
        postgres = StoppablePostgres.start("admission_outage");
        Map<String, Object> props = new HashMap<>(postgres.datasource());
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", "-1");
        props.put("gantry.auth.tokens-file", TokensFile.write(Files.createTempDirectory("admission-outage-")
                .resolve("tokens.yaml"), TokensFile.tenants("vision", VISION), ADMIN).toString());
        context = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        base = context.getBean(EmbeddedServer.class).getURL().toString();
        assertThat(context.getBean(AdmissionProcessor.class).awaitReady(Duration.ofSeconds(60))).isTrue();
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
    void aDatabaseOutageIsAnsweredAtOnceWith503AndTheServiceServesAgainWhenItIsBack() throws Exception {
        HttpResponse<String> submitted = await().atMost(Duration.ofSeconds(30)).until(
                () -> submit(null), r -> r.statusCode() == 202);
        String jobId = jobId(submitted.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + jobId).statusCode() == 200);
        assertThat(get("/health").statusCode()).isEqualTo(200);

        postgres.stop();
        long publishedBefore = endOffset();

        assertUnavailable(get("/v1/jobs"));
        assertUnavailable(get("/v1/jobs/" + jobId));
        // a submission that could not be stored is refused, with or without an Idempotency-Key, and not published
        String key = "outage-" + UUID.randomUUID();
        assertUnavailable(submit(null));
        assertUnavailable(submit(key));
        assertThat(endOffset()).isEqualTo(publishedBefore);
        HttpResponse<String> health = get("/health");
        assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
        // the check that failed is named (Micronaut's database check), not where the database is
        assertThat(health.body()).contains("\"status\":\"DOWN\"").contains("\"jdbc\"").doesNotContain("jdbc:")
                .doesNotContain("127.0.0.1");

        postgres.startAgain();

        await().atMost(Duration.ofSeconds(60)).until(() -> get("/health").statusCode() == 200);
        assertThat(get("/v1/jobs/" + jobId).statusCode()).isEqualTo(200);
        HttpResponse<String> retried = submit(key);
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(202);
        String retriedId = jobId(retried.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + retriedId).statusCode() == 200);
    }

    private void assertUnavailable(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
        assertThat(r.body()).contains("\"status\":503").containsIgnoringCase("database")
                // the cause is named, never where the database is or how to log in to it
                .doesNotContain("jdbc:").doesNotContain("password")
                .doesNotContain((String) postgres.datasource().get("datasources.default.password"));
    }

    private HttpResponse<String> submit(String idempotencyKey) throws Exception {
        HttpRequest.Builder b = request("/v1/jobs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("""
                        {"name":"outage","tasks":[{"name":"w","command":["python","train.py"],"gpus":1}]}"""));
        if (idempotencyKey != null) {
            b.header("Idempotency-Key", idempotencyKey);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A request that fails (HttpTimeoutException) rather than wait past {@link #PROMPT} for its answer. */
    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(PROMPT)
                .header("Authorization", "Bearer " + VISION);
    }

    private static String jobId(String body) {
        return body.replaceAll("(?s).*\"jobId\":\"([^\"]+)\".*", "$1");
    }

    private static long endOffset() {
        try (TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return kafka.readAllRaw(Topics.ADMISSION_JOB_EVENTS).size();
        }
    }
}
