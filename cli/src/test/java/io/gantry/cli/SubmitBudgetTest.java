package io.gantry.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gantry submit} tells what the API says of the tenant's money budget (a stand-in for it on loopback). */
class SubmitBudgetTest {
    @TempDir
    Path home;

    HttpServer server;
    volatile int status = 202;
    volatile String answer = "{\"jobId\":\"5b0c0000-0000-0000-0000-000000000001\",\"state\":\"SUBMITTED\"}";
    volatile Map<String, String> headers = Map.of();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            byte[] body = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", status == 202 ? "application/json"
                    : "application/problem+json");
            headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private CliRunner.Result submit() throws IOException {
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        Path config = Files.writeString(home.resolve("config.yaml"), "api: " + url + "\n");
        Path job = Files.writeString(home.resolve("job.yaml"), """
                name: train
                tasks:
                  - name: w
                    command: [python, train.py]
                    gpus: 1
                """);
        return new CliRunner(home, home.resolve("repo")).env("GANTRY_CONFIG", config.toString())
                .env("GANTRY_TOKEN", "tenant-token-1").run("submit", job.toString());
    }

    @Test
    void anAcceptedJobHeldOrWarnedForItsBudgetSaysSoOnStderrAndPrintsOnlyItsIdOnStdout() throws IOException {
        headers = Map.of("Gantry-Budget-Hold", "the monthly budget of tenant acme is exhausted (spent 0.40 of 0.30 "
                + "EUR): the job waits until it is raised or the month ends");

        CliRunner.Result held = submit();

        assertThat(held.code()).as(held.toString()).isZero();
        assertThat(held.out()).isEqualTo("5b0c0000-0000-0000-0000-000000000001\n");
        assertThat(held.err()).isEqualTo("gantry: budget: the monthly budget of tenant acme is exhausted (spent 0.40 "
                + "of 0.30 EUR): the job waits until it is raised or the month ends\n");

        headers = Map.of("Gantry-Budget-Warning", "tenant acme has spent 80% of its monthly budget (0.24 of 0.30 EUR)");
        assertThat(submit().err()).isEqualTo("gantry: budget: tenant acme has spent 80% of its monthly budget (0.24 of "
                + "0.30 EUR)\n");
    }

    @Test
    void aJobRefusedForItsBudgetGetsTheApisSentenceOnceAndItsOwnExitCode() throws IOException {
        status = 402;
        answer = """
                {"title":"Budget exhausted","status":402,"detail":"the monthly budget of tenant acme is exhausted",
                 "errors":[{"field":"tenant","message":"the monthly budget of tenant acme is exhausted"}]}""";

        CliRunner.Result refused = submit();

        assertThat(refused.code()).isEqualTo(ExitCode.BUDGET);
        assertThat(refused.out()).isEmpty();
        assertThat(refused.err()).isEqualTo("gantry: the monthly budget of tenant acme is exhausted\n");
    }

    @Test
    void aJobRefusedForTheTenantsCapOfOpenJobsGetsTheApisSentenceAndItsOwnExitCode() throws IOException {
        status = 429;
        answer = """
                {"title":"Too many open jobs","status":429,"detail":"tenant acme has 2 jobs that have not ended, the \
                most a tenant may have open (2); submit again once some have ended, or cancel some","errors":[]}""";

        CliRunner.Result refused = submit();

        assertThat(refused.code()).isEqualTo(ExitCode.LIMIT);
        assertThat(refused.out()).isEmpty();
        assertThat(refused.err()).isEqualTo("gantry: tenant acme has 2 jobs that have not ended, the most a tenant may "
                + "have open (2); submit again once some have ended, or cancel some\n");
    }
}
