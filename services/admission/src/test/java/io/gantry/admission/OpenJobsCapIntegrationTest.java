package io.gantry.admission;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.JobCancelled;
import io.gantry.events.QueueJobEvent;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A tenant may have at most {@code gantry.admission.max-open-jobs} jobs that have not ended: the next new job is
 * refused 429 problem+json with a Retry-After and nothing is published, a repeated request for an accepted job is
 * still answered, another tenant is not affected, and once a job ends the tenant may submit again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenJobsCapIntegrationTest {
    private static final String VISION = "cap-vision-token-1";
    private static final String AUDIO = "cap-audio-token-1";

    private AdmissionAlone admission;
    private final String bootstrap = EmbeddedKafka.shared().bootstrapServers();

    @BeforeAll
    void start() throws Exception {
        AdmissionAlone.registerOneGpuNode("cap");
        admission = AdmissionAlone.start(EmbeddedPostgres.shared().newDatasource("admission_cap"),
                TokensFile.tenants("vision", VISION, "audio", AUDIO), null, Map.of("gantry.admission.max-open-jobs", "2"));
    }

    @AfterAll
    void stop() {
        if (admission != null) {
            admission.close();
        }
    }

    @Test
    void aTenantAtItsCapOfOpenJobsIsRefusedUntilOneEnds() throws Exception {
        String first = jobId(await().atMost(Duration.ofSeconds(30)).until(() -> submit(VISION, "k1"),
                r -> r.statusCode() == 202).body());
        HttpResponse<String> second = submit(VISION, null);
        assertThat(second.statusCode()).as(second.body()).isEqualTo(202);

        HttpResponse<String> third = submit(VISION, "k3");
        AdmissionAlone.assertTooMany(third);
        assertThat(third.body()).contains("Too many open jobs").contains("tenant vision has 2 jobs that have not ended")
                .contains("(2)");
        // the refused job's key was let go, the accepted one's request is answered, another tenant submits
        assertThat(submit(VISION, "k1").statusCode()).isEqualTo(202);
        assertThat(jobId(submit(VISION, "k1").body())).isEqualTo(first);
        assertThat(submit(AUDIO, null).statusCode()).isEqualTo(202);

        // the queue ends the first job: the tenant has room for one more, with the key refused before
        try (TopicClient kafka = new TopicClient(bootstrap)) {
            kafka.send(Topics.QUEUE_JOB_EVENTS, first, QueueJobEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setJobId(first).setOccurredAt(Instant.now())
                    .setPayload(JobCancelled.newBuilder().setTenant("vision").setAttempt(0).setRequestedBy("vision")
                            .build()).build());
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/jobs/" + first).body().contains("CANCELLED"));
        assertThat(submit(VISION, "k3").statusCode()).isEqualTo(202);
        assertThat(submit(VISION, null).statusCode()).isEqualTo(429);
    }

    private HttpResponse<String> submit(String token, String key) throws Exception {
        return admission.submit(token, key, """
                {"name":"capped","tasks":[{"name":"t","command":["sleep","1"],"gpus":1}]}""");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return admission.get(path, VISION);
    }

    private static String jobId(String body) {
        return body.replaceAll("(?s).*\"jobId\"\\s*:\\s*\"([^\"]+)\".*", "$1");
    }
}
