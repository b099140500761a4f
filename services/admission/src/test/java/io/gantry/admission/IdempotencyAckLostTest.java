package io.gantry.admission;

import io.gantry.admission.core.Idempotency;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.testkit.TokensFile;
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
 * A submission whose event reached Kafka but whose acknowledgement was lost is answered 503 ("retry"), and the job
 * exists all the same (the read model stores it from the log, the queue runs it). Its Idempotency-Key must still name
 * it: a retry with the same body is answered with the job, one with another body is refused 422, never accepted as a
 * new job that would never run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdempotencyAckLostTest {
    private static final String TOKEN = "ack-lost-vision-token";
    private AdmissionAlone admission;

    @BeforeAll
    void start() throws Exception {
        AdmissionAlone.registerOneGpuNode("ack-lost");
        admission = AdmissionAlone.start(EmbeddedPostgres.shared().newDatasource("admission_ack_lost"),
                TokensFile.tenants("vision", TOKEN), null, Map.of("gantry.test.first-ack-lost", "true"));
    }

    @AfterAll
    void stop() {
        if (admission != null) {
            admission.close();
        }
    }

    @Test
    void aKeyWhoseJobReachedKafkaDespiteA503StillNamesItsJob() throws Exception {
        String key = "ack-lost-" + UUID.randomUUID();
        String body = """
                {"name":"first","tasks":[{"name":"w","command":["python","train.py"],"gpus":1}]}""";
        HttpResponse<String> lost = admission.submit(TOKEN, key, body);
        assertThat(lost.statusCode()).as(lost.body()).isEqualTo(503);

        String jobId = Idempotency.ids("vision", key).jobId();
        await().atMost(Duration.ofSeconds(30)).until(() -> admission.get("/v1/jobs/" + jobId, TOKEN).statusCode() == 200);

        HttpResponse<String> other = admission.submit(TOKEN, key, body.replace("\"first\"", "\"second\""));
        assertThat(other.statusCode()).as("another body under the key of an existing job: %s", other.body())
                .isEqualTo(422);
        assertThat(other.body()).contains("Idempotency-Key");
        HttpResponse<String> same = admission.submit(TOKEN, key, body);
        assertThat(same.statusCode()).as(same.body()).isEqualTo(202);
        assertThat(same.body()).contains(jobId);
        assertThat(admission.get("/v1/jobs/" + jobId, TOKEN).body()).contains("\"first\"");
    }
}
