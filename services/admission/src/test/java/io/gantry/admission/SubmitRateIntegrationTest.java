package io.gantry.admission;

import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.testkit.TokensFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A tenant submitting faster than {@code gantry.admission.submit-rate} (after a burst of {@code submit-burst}) is
 * refused 429 problem+json with the seconds to wait, before anything is parsed; another tenant is not slowed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SubmitRateIntegrationTest {
    private static final String VISION = "rate-vision-token-1";
    private static final String AUDIO = "rate-audio-token-1";

    private AdmissionAlone admission;

    @BeforeAll
    void start() throws Exception {
        // one submission every 100 s after a burst of 3: the fourth comes too soon
        admission = AdmissionAlone.start(EmbeddedPostgres.shared().newDatasource("admission_rate"),
                TokensFile.tenants("vision", VISION, "audio", AUDIO), null,
                Map.of("gantry.admission.submit-rate", "0.01", "gantry.admission.submit-burst", "3"));
    }

    @AfterAll
    void stop() {
        if (admission != null) {
            admission.close();
        }
    }

    @Test
    void aTenantSubmittingTooFastIsToldToSlowDownAndAnotherIsNot() throws Exception {
        for (int i = 0; i < 3; i++) {
            // every submission counts, before its body is even read: an invalid one is refused by validation
            assertThat(submit(VISION).statusCode()).as("submission %d of the burst", i + 1).isEqualTo(400);
        }
        HttpResponse<String> refused = submit(VISION);
        AdmissionAlone.assertTooMany(refused);
        assertThat(refused.headers().firstValue("Retry-After").map(Long::parseLong).orElse(0L)).isBetween(90L, 100L);
        assertThat(refused.body()).contains("Too many submissions")
                .contains("tenant vision submits faster than 0.01 jobs a second (bursts of 3)");
        assertThat(submit(AUDIO).statusCode()).isEqualTo(400);
    }

    private HttpResponse<String> submit(String token) throws Exception {
        return admission.submit(token, null, "{\"name\":\"paced\",\"tasks\":[]}");
    }
}
