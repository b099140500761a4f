package io.gantry.admission;

import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.testkit.TokensFile;
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
import java.util.HashMap;
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

    private ApplicationContext context;
    private String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    void start() throws Exception {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        Map<String, Object> props = new HashMap<>(EmbeddedPostgres.shared().newDatasource("admission_rate"));
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", "-1");
        // one submission every 100 s after a burst of 3: the fourth comes too soon
        props.put("gantry.admission.submit-rate", "0.01");
        props.put("gantry.admission.submit-burst", "3");
        props.put("gantry.auth.tokens-file", TokensFile.write(Files.createTempDirectory("admission-rate-")
                .resolve("tokens.yaml"), TokensFile.tenants("vision", VISION, "audio", AUDIO), null).toString());
        context = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        base = context.getBean(EmbeddedServer.class).getURL().toString() + "/";
        assertThat(context.getBean(AdmissionProcessor.class).awaitReady(Duration.ofSeconds(60))).isTrue();
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void aTenantSubmittingTooFastIsToldToSlowDownAndAnotherIsNot() throws Exception {
        for (int i = 0; i < 3; i++) {
            // every submission counts, before its body is even read: an invalid one is refused by validation
            assertThat(submit(VISION).statusCode()).as("submission %d of the burst", i + 1).isEqualTo(400);
        }
        HttpResponse<String> refused = submit(VISION);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Content-Type").orElse("")).contains("application/problem+json");
        assertThat(refused.headers().firstValue("Retry-After").map(Long::parseLong).orElse(0L)).isBetween(90L, 100L);
        assertThat(refused.body()).contains("Too many submissions")
                .contains("tenant vision submits faster than 0.01 jobs a second (bursts of 3)");
        assertThat(submit(AUDIO).statusCode()).isEqualTo(400);
    }

    private HttpResponse<String> submit(String token) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base + "v1/jobs"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"paced\",\"tasks\":[]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
    }
}
