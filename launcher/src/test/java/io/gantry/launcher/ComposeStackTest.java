package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;

import java.io.File;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts docker-compose.yml for real and submits a job. Needs a Docker engine: where there is none (as on our
 * build machines) JUnit reports it skipped with the reason, it never passes silently.
 */
@Testcontainers(disabledWithoutDocker = true)
class ComposeStackTest {

    @Test
    void theComposeStackAcceptsAJobAndRunsIt() {
        try (ComposeContainer stack = new ComposeContainer(new File("../docker-compose.yml"))
                .withBuild(true)
                .withExposedService("admission", 8080, Wait.forHttp("/health").withStartupTimeout(Duration.ofMinutes(5)))) {
            stack.start();
            String base = "http://" + stack.getServiceHost("admission", 8080) + ":" + stack.getServicePort("admission", 8080);
            Api api = new Api(base, "demo-token-change-me");
            Api.Response r = org.awaitility.Awaitility.await().atMost(Duration.ofMinutes(2)).until(() -> api.post("/v1/jobs", """
                    {"name":"compose","tasks":[{"name":"w","command":["x"],"gpus":1,"runSeconds":1}]}
                    """), resp -> resp.status() == 202);
            String job = r.text("jobId");
            org.awaitility.Awaitility.await().atMost(Duration.ofMinutes(2))
                    .until(() -> "SUCCEEDED".equals(api.get("/v1/jobs/" + job).text("state")));
            assertThat(api.get("/v1/jobs/" + job).status()).isEqualTo(200);
        }
    }
}
