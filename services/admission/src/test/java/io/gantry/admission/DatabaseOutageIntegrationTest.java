package io.gantry.admission;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.schemas.Topics;
import io.gantry.testkit.DatabaseOutage;
import io.gantry.testkit.LogCapture;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.jdbc.DataSourceResolver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Admission while its PostgreSQL is down or cut off: every request that needs the database is answered promptly with
 * 503 problem+json and a Retry-After (never left to hang until the connection is cut, or for ever) and logged as one
 * warning line, a submission that could not be stored is never accepted, {@code /health} is DOWN, and all of it works
 * again once PostgreSQL is back, without a restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseOutageIntegrationTest {
    private static final String VISION = "outage-vision-token";
    private static final String ADMIN = "outage-admin-token";

    private DatabaseOutage outage;
    private AdmissionAlone admission;

    @BeforeAll
    void startAdmissionOnItsOwnPostgres() throws Exception {
        AdmissionAlone.registerOneGpuNode("outage");
        outage = DatabaseOutage.start("admission_outage");
        admission = AdmissionAlone.start(outage.settings(), TokensFile.tenants("vision", VISION),
                ADMIN, Map.of());
        outage.serving(admission.base(), admission);
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
    void aDatabaseOutageIsAnsweredAtOnceWith503AndTheServiceServesAgainWhenItIsBack() {
        HttpResponse<String> submitted = await().atMost(Duration.ofSeconds(30)).until(
                () -> submit(null), r -> r.statusCode() == 202);
        String jobId = jobId(submitted.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + jobId).statusCode() == 200);
        assertThat(get("/health").statusCode()).isEqualTo(200);

        String key = "outage-" + UUID.randomUUID();
        try (LogCapture log = LogCapture.start()) {
            outage.stopDatabase();
            long publishedBefore = endOffset();

            outage.assertUnavailable(get("/v1/jobs"));
            outage.assertUnavailable(get("/v1/jobs/" + jobId));
            // a submission that could not be stored is refused, with or without an Idempotency-Key, and not published
            outage.assertUnavailable(submit(null));
            outage.assertUnavailable(submit(key));
            assertThat(endOffset()).isEqualTo(publishedBefore);
            outage.assertHealthDown();
            DatabaseOutage.assertLoggedQuietly(log, "/v1/jobs", "/v1/jobs/" + jobId);
        }

        outage.startDatabase();

        outage.awaitHealthUp();
        assertThat(get("/v1/jobs/" + jobId).statusCode()).isEqualTo(200);
        HttpResponse<String> retried = submit(key);
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(202);
        String retriedId = jobId(retried.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + retriedId).statusCode() == 200);
    }

    @Test
    void aQueryCutOffByANetworkPartitionIsAnswered503AndTheServiceServesAgainWhenThePartitionHeals()
            throws Exception {
        HttpResponse<String> submitted = await().atMost(Duration.ofSeconds(30)).until(
                () -> submit(null), r -> r.statusCode() == 202);
        String jobId = jobId(submitted.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + jobId).statusCode() == 200);
        outage.awaitHealthUp();

        // a request whose query is in flight when the partition strikes: PostgreSQL holds it on a lock until then,
        // and its answer is sent into the partition
        try (LogCapture log = LogCapture.start()) {
            CompletableFuture<HttpResponse<String>> inFlight = outage.getCutOffInFlight("jobs", "/v1/jobs/" + jobId,
                    VISION, "%FROM jobs WHERE job_id = $1%");
            // without a socket timeout the driver would wait for that answer for ever, and the request with it
            outage.assertUnavailable(inFlight.get(DatabaseOutage.PROMPT.toMillis(), TimeUnit.MILLISECONDS));
            outage.assertUnavailable(get("/v1/jobs/" + jobId));
            outage.assertUnavailable(get("/v1/jobs"));
            outage.assertHealthDown();
            DatabaseOutage.assertLoggedQuietly(log, "/v1/jobs", "/v1/jobs/" + jobId);
        }

        outage.heal();

        outage.awaitHealthUp();
        assertThat(get("/v1/jobs/" + jobId).statusCode()).isEqualTo(200);
        HttpResponse<String> after = submit(null);
        assertThat(after.statusCode()).as(after.body()).isEqualTo(202);
    }

    @Test
    void postgresqlIsToldToEndASessionWhoseInstanceWentSilentWithinAMinute() throws Exception {
        DataSource pool = admission.context().getBean(DataSource.class);
        DatabaseOutage.assertSilentClientsAreDropped(
                admission.context().findBean(DataSourceResolver.class).map(r -> r.resolve(pool)).orElse(pool));
    }

    private HttpResponse<String> submit(String idempotencyKey) {
        String body = """
                {"name":"outage","tasks":[{"name":"w","command":["python","train.py"],"gpus":1}]}""";
        return idempotencyKey == null ? outage.send("POST", "/v1/jobs", VISION, body)
                : outage.send("POST", "/v1/jobs", VISION, body, Map.of("Idempotency-Key", idempotencyKey));
    }

    private HttpResponse<String> get(String path) {
        return outage.get(path, VISION);
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
