package io.gantry.admission;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.schemas.Topics;
import io.gantry.testkit.DatabaseOutage;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

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
 * restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatabaseOutageIntegrationTest {
    private static final String VISION = "outage-vision-token";
    private static final String ADMIN = "outage-admin-token";

    private DatabaseOutage outage;

    @BeforeAll
    void startAdmissionOnItsOwnPostgres() throws Exception {
        AdmissionAlone.registerOneGpuNode("outage");
        outage = DatabaseOutage.start("admission_outage");
        AdmissionAlone admission = AdmissionAlone.start(outage.settings(), TokensFile.tenants("vision", VISION),
                ADMIN, Map.of());
        outage.serving(admission.base(), admission);
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

        outage.stopDatabase();
        long publishedBefore = endOffset();

        outage.assertUnavailable(get("/v1/jobs"));
        outage.assertUnavailable(get("/v1/jobs/" + jobId));
        // a submission that could not be stored is refused, with or without an Idempotency-Key, and not published
        String key = "outage-" + UUID.randomUUID();
        outage.assertUnavailable(submit(null));
        outage.assertUnavailable(submit(key));
        assertThat(endOffset()).isEqualTo(publishedBefore);
        outage.assertHealthDown();

        outage.startDatabase();

        outage.awaitHealthUp();
        assertThat(get("/v1/jobs/" + jobId).statusCode()).isEqualTo(200);
        HttpResponse<String> retried = submit(key);
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(202);
        String retriedId = jobId(retried.body());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + retriedId).statusCode() == 200);
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
