package io.gantry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What the CLI does before and without a running Gantry: options, job files, configuration, exit codes. */
class CliTest {
    @TempDir
    Path home;

    CliRunner cli() {
        return new CliRunner(home, home.resolve("repo"));
    }

    @Test
    void aMalformedJobFileIsRefusedWithItsLineAndExitCode2WithoutContactingTheApi() throws IOException {
        Path job = Files.writeString(home.resolve("job.yaml"), """
                name: x
                tasks:
                  - name: w
                    command: [run]
                    gpus: -1
                """);
        CliRunner.Result r = cli().env("GANTRY_TOKEN", "t").env("GANTRY_API", "http://127.0.0.1:1")
                .run("submit", job.toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).contains(job + ":5: tasks[0].gpus: must be a whole number from 0 to 1024, not -1");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aDryRunPrintsTheApiBodyInTheChosenFormat() throws IOException {
        Path job = Files.writeString(home.resolve("job.yaml"), """
                name: x
                tasks: [{name: w, command: [run], gpus: 2}]
                """);
        CliRunner.Result r = cli().run("submit", "--dry-run", "-o", "json", job.toString());
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out().replaceAll("\\s", "")).isEqualTo("{\"name\":\"x\",\"tasks\":[{\"name\":\"w\","
                + "\"command\":[\"run\"],\"gpus\":2}]}");
        assertThat(r.err()).as("no token: says what was not checked")
                .contains("dry run, nothing submitted; checked here only: without an API token the API's checks");
    }

    @Test
    void aMissingJobFileIsNamed() {
        CliRunner.Result r = cli().run("submit", home.resolve("nope.yaml").toString());
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).contains("nope.yaml: no such file");
    }

    @Test
    void withoutATokenTheCliSaysHowToGetOneAndExits3() {
        CliRunner.Result r = cli().run("ps");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.AUTH);
        assertThat(r.err()).contains("no API token: run `gantry login`");
    }

    @Test
    void anUnreachableApiExits6WithTheUrlItTried() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        CliRunner.Result r = cli().env("GANTRY_TOKEN", "secret-token-123").env("GANTRY_API", "http://127.0.0.1:" + port)
                .run("ps");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(r.err()).contains("cannot reach Gantry's API (admission) at http://127.0.0.1:" + port)
                .doesNotContain("secret-token-123");
    }

    @Test
    void aServerThatIsNotGantrysApiIsSaidToBeSoNotTakenForAMissingJob() throws IOException {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            byte[] html = "<!DOCTYPE HTML><html><body>Error response 404</body></html>".getBytes();
            exchange.getResponseHeaders().add("Content-Type", "text/html");
            exchange.sendResponseHeaders(404, html.length);
            exchange.getResponseBody().write(html);
            exchange.close();
        });
        server.start();
        try {
            String api = "http://127.0.0.1:" + server.getAddress().getPort();
            CliRunner.Result r = cli().env("GANTRY_TOKEN", "t").env("GANTRY_API", api).run("ps");
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.UNAVAILABLE);
            assertThat(r.err()).contains("the server at " + api + " answered /v1/jobs", "HTTP 404 (text/html)",
                    "is the API URL right").doesNotContain("DOCTYPE");
        } finally {
            server.stop(0);
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aWatchWaitsForARestartingApiButGivesUpWhenItStaysAway() throws IOException {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        java.util.concurrent.atomic.AtomicInteger looks = new java.util.concurrent.atomic.AtomicInteger();
        server.createContext("/", exchange -> {
            byte[] job = "{\"jobId\":\"job-1\",\"tenant\":\"alpha\",\"state\":\"RUNNING\",\"attempt\":1}".getBytes();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, job.length);
            exchange.getResponseBody().write(job);
            exchange.close();
            if (looks.incrementAndGet() == 1) {
                // the API goes away after its first answer, for good
                new Thread(() -> server.stop(0)).start();
            }
        });
        server.start();
        String api = "http://127.0.0.1:" + server.getAddress().getPort();
        long started = System.nanoTime();
        CliRunner.Result r = cli().env("GANTRY_TOKEN", "t").env("GANTRY_API", api)
                .run("watch", "job-1", "--interval", "100ms", "--give-up-after", "1s");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(r.out()).contains("RUNNING");
        assertThat(r.err()).contains("cannot reach Gantry's API (admission)", "still watching (until ",
                "gave up watching job job-1: no answer for 1s; it may still be running");
        assertThat(r.err().split("still watching", -1)).as("said once per outage").hasSize(2);
        assertThat(java.time.Duration.ofNanos(System.nanoTime() - started)).isLessThan(java.time.Duration.ofSeconds(20));

        // never reached at all (a mistyped address): at once, as any other command
        CliRunner.Result never = cli().env("GANTRY_TOKEN", "t").env("GANTRY_API", api)
                .run("watch", "job-1", "--interval", "100ms");
        assertThat(never.code()).as(never.toString()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(never.err()).contains("cannot reach Gantry's API").doesNotContain("still watching");
    }

    @Test
    void anUnknownOutputFormatIsRefused() {
        CliRunner.Result r = cli().env("GANTRY_TOKEN", "t").run("queues", "-o", "xml");
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).contains("must be table, wide, json or yaml, not xml");
    }

    @Test
    void anUnknownCommandOrOptionIsAUsageError() {
        assertThat(cli().run("launch").code()).isEqualTo(ExitCode.INVALID);
        assertThat(cli().run("ps", "--colour").code()).isEqualTo(ExitCode.INVALID);
    }

    @Test
    void theOtherServicesAreTheApisPortPlusTheirOffsetUnlessSet() throws IOException {
        Env env = new Env(Map.of("GANTRY_API", "http://gantry.example:9000"), home, home, null, null, null, null);
        CliConfig c = CliConfig.resolve(env, null, null);
        assertThat(c.queueApi()).hasToString("http://gantry.example:9001");
        assertThat(c.placementApi()).hasToString("http://gantry.example:9002");
        assertThat(c.billingApi()).hasToString("http://gantry.example:9004");

        Path file = Files.writeString(home.resolve("c.yaml"), "api: https://gantry.example\nbilling-api: http://b:1\n");
        CliConfig gateway = CliConfig.resolve(new Env(Map.of(), home, home, null, null, null, null), null, file);
        assertThat(gateway.queueApi()).as("no port: one gateway serves all").hasToString("https://gantry.example");
        assertThat(gateway.billingApi()).hasToString("http://b:1");
    }

    @Test
    void withoutConfigTheDevInstallationsTenantTokenIsUsedAndNeverShown() throws IOException {
        Path data = Files.createDirectories(home.resolve("repo/.gantry"));
        Files.writeString(data.resolve("tokens.yml"), """
                tokens:
                  - tenant: demo
                    token: gty_demo_secret
                  - tenant: ops
                    role: admin
                    token: gty_admin_secret
                """);
        CliConfig c = CliConfig.resolve(new Env(Map.of(), home, home.resolve("repo"), null, null, null, null), null, null);
        assertThat(c.token()).isEqualTo("gty_demo_secret");
        assertThat(c.runsDir()).isEqualTo(data.resolve("runs"));
        assertThat(c.toString()).doesNotContain("gty_demo_secret");
    }

    @Test
    void withoutConfigTheApiIsWhereTheDevInstallationSaysItListensElseTheFlagEnvironmentOrFileWins()
            throws IOException {
        Path data = Files.createDirectories(home.resolve("repo/.gantry"));
        Files.writeString(data.resolve(CliConfig.DEV_API_FILE), "http://127.0.0.1:18080\n");
        Env dev = new Env(Map.of(), home, home.resolve("repo"), null, null, null, null);
        assertThat(CliConfig.resolve(dev, null, null).api()).hasToString("http://127.0.0.1:18080");
        assertThat(CliConfig.resolve(dev, null, null).billingApi()).hasToString("http://127.0.0.1:18084");
        assertThat(CliConfig.resolve(dev, "http://other:1", null).api()).hasToString("http://other:1");
        Env env = new Env(Map.of("GANTRY_API", "http://env:2"), home, home.resolve("repo"), null, null, null, null);
        assertThat(CliConfig.resolve(env, null, null).api()).hasToString("http://env:2");
        Path file = Files.writeString(home.resolve("c.yaml"), "api: http://file:3\n");
        assertThat(CliConfig.resolve(dev, null, file).api()).hasToString("http://file:3");
        Files.delete(data.resolve(CliConfig.DEV_API_FILE));
        assertThat(CliConfig.resolve(dev, null, null).api()).hasToString(CliConfig.DEFAULT_API);
    }

    @Test
    void aConfigFileWithAnUnknownKeyIsRefusedNamingIt() throws IOException {
        Path file = Files.writeString(home.resolve("c.yaml"), "api: http://a:1\ntokn: x\n");
        CliRunner.Result r = cli().run("--config", file.toString(), "ps");
        assertThat(r.code()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).contains("unknown key `tokn`");
    }

    @Test
    void theConfigFileLoginWritesIsReadableOnlyByItsOwner() throws IOException {
        Path file = home.resolve("cfg/gantry/config.yaml");
        CliConfig.write(file, Map.of("api", "http://a:1", "token", "it's-secret"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        CliConfig c = CliConfig.resolve(new Env(Map.of(), home, home, null, null, null, null), null, file);
        assertThat(c.token()).isEqualTo("it's-secret");
    }

    @Test
    void completionIsGeneratedForBash() {
        CliRunner.Result r = cli().run("generate-completion");
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("complete -F _complete_gantry", "submit", "checkpoints");
        // the words ./gantry runs itself complete too
        String commands = r.out().lines().filter(l -> l.contains("local commands=")).findFirst().orElseThrow();
        assertThat(commands).contains("dev", "replay", "whatif", "loadtest", "build", "submit");
    }
}
