package io.gantry.admission;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.schemas.Topics;
import io.gantry.testkit.StoppablePostgres;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
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
    private AdmissionAlone admission;
    private String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    void startAdmissionOnItsOwnPostgres() throws Exception {
        AdmissionAlone.registerOneGpuNode("outage");
        postgres = StoppablePostgres.start("admission_outage");
        admission = AdmissionAlone.start(postgres.datasource(), TokensFile.tenants("vision", VISION), ADMIN, Map.of());
        base = admission.base();
    }

    @AfterAll
    void stop() {
        // the service first: its loop must not outlive the database it writes to
        if (admission != null) {
            admission.close();
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
