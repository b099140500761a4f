package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gantry.launcher.DevCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

/**
 * The CLI against the real system: the launcher's DevCluster starts a KRaft broker, PostgreSQL and the five services
 * as processes, with the local backend (one node of 16 GPUs: tasks run as real processes and write real logs).
 * Every step below is a CLI command run in this JVM, checked by its output and exit code, as a newcomer would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CliAgainstRunningStackTest {
    static final Duration LONG = Duration.ofSeconds(90);
    static final ObjectMapper JSON = new ObjectMapper();

    DevCluster cluster;
    Path home;
    Path work;
    CliRunner alpha;
    String gangJob;

    @BeforeAll
    void startTheWholeSystem() throws Exception {
        Path dataDir = Files.createTempDirectory("gantry-cli-");
        Files.writeString(dataDir.resolve("tokens.yml"), """
                tokens:
                  - tenant: alpha
                    token: alpha-token-0001
                  - tenant: tiny
                    token: tiny-token-0002
                  - tenant: ops
                    role: admin
                    token: admin-token-0003
                """);
        Path repo = Path.of("..").toAbsolutePath().normalize();
        int base = DevCluster.freePortRange(5);
        cluster = new DevCluster(new DevCluster.Config(dataDir, repo, DevCluster.freePort(), DevCluster.freePort(), base,
                Map.of("placement", Map.of("gantry.placement.backend", "local",
                                "gantry.placement.local.gpus", "16",
                                "gantry.placement.local.gpu-model", "H100",
                                "gantry.placement.local.heartbeat-interval", "500ms"),
                        "recovery", Map.of("gantry.recovery.heartbeat-timeout", "10s"),
                        "queue", Map.of("gantry.queue.default-gpu-quota", "64", "gantry.queue.quotas.tiny", "4")),
                "200m")).start();
        home = Files.createTempDirectory("gantry-cli-home-");
        work = Files.createDirectories(home.resolve("work"));
        // the repo is the dev installation's checkout: logs are found under its data directory
        alpha = new CliRunner(home, repo).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_DATA_DIR", dataDir.toString());
        await().atMost(LONG).until(() -> {
            CliRunner.Result r = new CliRunner(home, repo).env("GANTRY_API", cluster.url("admission"))
                    .env("GANTRY_TOKEN", "alpha-token-0001").run("nodes", "-o", "json");
            return r.code() == 0 && JSON.readTree(r.out()).size() == 1;
        });
    }

    @AfterAll
    void stopIt() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void loginKeepsOnlyATokenTheApiAcceptsAndNeverPrintsIt() {
        CliRunner.Result refused = alpha.runWithInput("revoked-token-9999\n", "login", "--token-stdin");
        assertThat(refused.code()).as(refused.toString()).isEqualTo(ExitCode.AUTH);
        assertThat(refused.err()).contains("unknown API token").doesNotContain("revoked-token-9999");
        assertThat(home.resolve(".config/gantry/config.yaml")).doesNotExist();

        CliRunner.Result ok = alpha.runWithInput("alpha-token-0001\n", "login", "--token-stdin");
        assertThat(ok.code()).as(ok.toString()).isZero();
        assertThat(ok.out()).contains("logged in to " + cluster.url("admission")).doesNotContain("alpha-token-0001");
        assertThat(home.resolve(".config/gantry/config.yaml")).exists();
    }

    @Test
    @Order(2)
    void aGangJobRunsToSuccessAndItsLogsAndUsageAreThere() throws IOException {
        Path file = Files.writeString(work.resolve("gang.yaml"), """
                name: gang
                timeLimitSeconds: 600
                tasks:
                  - name: node
                    replicas: 2
                    command: [sh, -c, 'echo "hello from $GANTRY_TASK-$GANTRY_REPLICA"; sleep 2; echo done']
                    gpus: 8
                    gpuModel: H100
                """);
        // bounded: a broken stack must fail the test, not hold the build until CI's limit
        CliRunner.Result submitted = assertTimeoutPreemptively(Duration.ofMinutes(3),
                () -> alpha.run("submit", file.toString(), "--watch", "--interval", "500ms"));
        assertThat(submitted.code()).as(submitted.toString()).isEqualTo(ExitCode.OK);
        gangJob = submitted.out().lines().findFirst().orElseThrow();
        assertThat(submitted.out()).contains("RUNNING", "node[0] on local GPUs", "SUCCEEDED");

        CliRunner.Result logs = alpha.run("logs", gangJob);
        assertThat(logs.code()).as(logs.toString()).isZero();
        assertThat(logs.out()).contains("[node-0] hello from node-0", "[node-1] hello from node-1", "[node-1] done");

        CliRunner.Result one = alpha.run("logs", gangJob, "--task", "node", "--replica", "1");
        assertThat(one.out()).isEqualTo("hello from node-1\ndone\n");
        JsonNode piece = JSON.readTree(alpha.run("logs", gangJob, "--task", "node", "--replica", "1", "-o", "json")
                .out());
        assertThat(piece.path("task").asText()).isEqualTo("node");
        assertThat(piece.path("replica").asInt()).isEqualTo(1);
        assertThat(piece.path("attempt").asInt()).isEqualTo(1);
        assertThat(piece.path("text").asText()).isEqualTo("hello from node-1\ndone\n");
        // through placement's API; the files themselves give the same
        assertThat(alpha.run("logs", gangJob, "--task", "node", "--replica", "1", "--runs-dir").out())
                .isEqualTo(one.out());
        CliRunner other = new CliRunner(home, home).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_TOKEN", "tiny-token-0002").env("GANTRY_CONFIG", home.resolve("none.yaml").toString());
        assertThat(other.run("logs", gangJob).code()).as("another tenant's job is not there for it")
                .isEqualTo(ExitCode.NOT_FOUND);

        CliRunner.Result ps = alpha.run("ps");
        assertThat(ps.code()).isZero();
        assertThat(ps.out()).contains("JOB ID", gangJob, "SUCCEEDED");
        assertThat(alpha.run("ps", "-o", "wide", "--state", "SUCCEEDED").out()).contains("TENANT", "alpha", gangJob);

        await().atMost(LONG).untilAsserted(() -> {
            CliRunner.Result usage = alpha.run("usage", "--job", gangJob, "-o", "json");
            assertThat(usage.code()).isZero();
            assertThat(JSON.readTree(usage.out())).isNotEmpty();
        });
        CliRunner.Result cost = alpha.run("usage", "--job", gangJob);
        assertThat(cost.out()).contains("GPU-SECONDS", "local", "H100", "TOTAL");
        JsonNode total = JSON.readTree(alpha.run("usage", "-o", "json").out());
        assertThat(new BigDecimal(total.path("totalGpuSeconds").asText())).as("16 GPUs for about 2 s")
                .isGreaterThan(new BigDecimal("16"));
        assertThat(alpha.run("checkpoints", gangJob).out()).isEqualTo("no checkpoints reported\n");
    }

    @Test
    @Order(3)
    void logsFollowWaitsForTheRunAndPrintsItsOutputUntilTheJobEnds() throws IOException {
        Path file = Files.writeString(work.resolve("slow.yaml"), """
                name: slow
                tasks:
                  - name: printer
                    command: [sh, -c, 'echo first; sleep 2; echo second; sleep 1; echo third']
                    gpus: 1
                """);
        String job = alpha.run("submit", file.toString()).out().trim();
        CliRunner.Result followed = alpha.run("logs", job, "--follow");
        assertThat(followed.code()).as(followed.toString()).isZero();
        assertThat(followed.out()).isEqualTo("first\nsecond\nthird\n");
        assertThat(alpha.run("watch", job).out()).contains("SUCCEEDED", "after running");
    }

    @Test
    @Order(4)
    void aJobOverItsQuotaWaitsWithItsReasonInWordsUntilCancelled() throws IOException {
        CliRunner tiny = new CliRunner(home, home).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_TOKEN", "tiny-token-0002").env("GANTRY_CONFIG", home.resolve("none.yaml").toString());
        Path file = Files.writeString(work.resolve("big.yaml"), """
                name: over-quota
                tasks:
                  - name: worker
                    command: [sleep, "30"]
                    gpus: 8
                """);
        CliRunner.Result submitted = tiny.run("submit", file.toString());
        assertThat(submitted.code()).as(submitted.toString()).isZero();
        String job = submitted.out().trim();

        CliRunner.Result watched = tiny.run("watch", job, "--interval", "500ms", "--timeout", "3s");
        assertThat(watched.code()).as(watched.toString()).isEqualTo(ExitCode.TIMEOUT);
        assertThat(watched.err()).contains("is still");

        await().atMost(LONG).untilAsserted(() -> {
            CliRunner.Result why = tiny.run("why", job);
            assertThat(why.code()).as(why.toString()).isZero();
            assertThat(why.out()).contains("is QUEUED", "waits because", "queue tiny (tenant tiny",
                    "of 4 GPUs of quota in use");
        });
        JsonNode whyJson = JSON.readTree(tiny.run("why", job, "-o", "json").out());
        assertThat(whyJson.path("waitReason").asText()).isNotBlank();
        assertThat(whyJson.path("queue").path("quotaGpus").asInt()).isEqualTo(4);

        CliRunner.Result cancelled = tiny.run("cancel", job);
        assertThat(cancelled.code()).as(cancelled.toString()).isZero();
        assertThat(cancelled.out()).contains(job + ": cancellation requested (was QUEUED)");
        assertThat(tiny.run("watch", job, "--interval", "500ms").code()).isEqualTo(ExitCode.JOB_CANCELLED);
        CliRunner.Result again = tiny.run("cancel", job);
        assertThat(again.code()).isEqualTo(ExitCode.CONFLICT);
        assertThat(again.err()).contains("is already CANCELLED and cannot be cancelled");
    }

    @Test
    @Order(5)
    void whatTheApiRefusesInAJobFileIsShownAtItsLine() throws IOException {
        Path file = Files.writeString(work.resolve("too-big.yaml"), """
                name: too-big
                tasks:
                  - name: worker
                    command: [run]
                    replicas: 1
                    gpus: 32
                """);
        CliRunner.Result r = alpha.run("submit", file.toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCode.INVALID);
        assertThat(r.err()).contains(file + ": the API refused the job:",
                file + ":6: tasks[0].gpus: no registered node has more than 16 GPUs");

        // a dry run asks the API too, and says so; --local checks the file alone
        CliRunner.Result dry = alpha.run("submit", "--dry-run", file.toString());
        assertThat(dry.code()).as(dry.toString()).isEqualTo(ExitCode.INVALID);
        assertThat(dry.err()).contains(file + ":6: tasks[0].gpus: no registered node has more than 16 GPUs");
        CliRunner.Result local = alpha.run("submit", "--dry-run", "--local", file.toString());
        assertThat(local.code()).as(local.toString()).isZero();
        assertThat(local.err()).contains("dry run, nothing submitted; checked here only (--local)");
        Path fits = Files.writeString(work.resolve("fits.yaml"), "name: fits\ntasks: [{name: w, command: [run], "
                + "gpus: 2}]\n");
        int before = alpha.run("ps", "-o", "json").out().split("\"jobId\"", -1).length;
        CliRunner.Result ok = alpha.run("submit", "--dry-run", fits.toString());
        assertThat(ok.code()).as(ok.toString()).isZero();
        assertThat(ok.err()).contains("the API checked it: it would be accepted");
        assertThat(alpha.run("ps", "-o", "json").out().split("\"jobId\"", -1)).as("nothing submitted")
                .hasSize(before);
    }

    @Test
    @Order(6)
    void aRevokedTokenGetsTheApis401SentenceAndExit3() {
        CliRunner revoked = new CliRunner(home, home).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_TOKEN", "gty_revoked_0000");
        CliRunner.Result r = revoked.run("ps");
        assertThat(r.code()).isEqualTo(ExitCode.AUTH);
        assertThat(r.err()).startsWith("gantry: unknown API token (token from GANTRY_TOKEN;")
                .doesNotContain("gty_revoked_0000").doesNotContain("{");
    }

    @Test
    @Order(7)
    void aJobThatDoesNotExistIsNotFound() {
        CliRunner.Result r = alpha.run("why", "no-such-job");
        assertThat(r.code()).isEqualTo(ExitCode.NOT_FOUND);
        assertThat(r.err()).contains("no job no-such-job");
    }

    @Test
    @Order(8)
    void queuesAndNodesShowTheClusterAsTablesOrData() throws IOException {
        CliRunner.Result queues = alpha.run("queues");
        assertThat(queues.out()).contains("QUEUE", "alpha", "/64");
        assertThat(alpha.run("queues", "-o", "yaml").out()).contains("name: alpha");
        CliRunner.Result nodes = alpha.run("nodes", "-o", "wide");
        assertThat(nodes.out()).contains("local", "16/16", "H100", "RACK");
        assertThat(JSON.readTree(alpha.run("nodes", "-o", "json").out()).get(0).path("nodeId").asText())
                .isEqualTo("local");
    }

    @Test
    @Order(9)
    void invoicesListsTheIssuedDocumentsAndAnUnknownOneIsNotFound() {
        CliRunner.Result none = alpha.run("invoices", "--month", "2026-01");
        assertThat(none.code()).as(none.toString()).isZero();
        assertThat(none.out()).isEqualTo("no invoices issued\n");
        CliRunner.Result unknown = alpha.run("invoices", "inv-no-such-document");
        assertThat(unknown.code()).as(unknown.toString()).isEqualTo(ExitCode.NOT_FOUND);
        CliRunner.Result badMonth = alpha.run("invoices", "--month", "January");
        assertThat(badMonth.code()).as(badMonth.toString()).isEqualTo(ExitCode.INVALID);
        assertThat(badMonth.err()).contains("month");
    }

    /** Tenants and tokens managed without editing a file: every service honours them, a revocation within seconds. */
    @Test
    @Order(10)
    void anAdminCreatesATenantWhoseNewTokenWorksUntilItIsRevoked() {
        Path repo = Path.of("..").toAbsolutePath().normalize();
        CliRunner admin = new CliRunner(home, repo).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_TOKEN", "admin-token-0003");
        CliRunner.Result created = admin.run("admin", "tenants", "create", "newco");
        assertThat(created.code()).as(created.toString()).isZero();
        CliRunner.Result issued = admin.run("admin", "tokens", "issue", "newco", "--expires-in", "30d", "--label", "ci");
        assertThat(issued.code()).as(issued.toString()).isZero();
        List<String> lines = issued.out().lines().toList();
        String id = lines.get(0).split(" ")[0];
        String token = lines.get(1);
        assertThat(id).startsWith("tok_");
        assertThat(issued.err()).contains("shown only this once").doesNotContain(token);

        CliRunner newco = new CliRunner(home, repo).env("GANTRY_API", cluster.url("admission"))
                .env("GANTRY_TOKEN", token);
        await().atMost(Duration.ofSeconds(20)).until(() -> newco.run("ps").code() == ExitCode.OK);
        CliRunner.Result listed = admin.run("admin", "tokens", "list", "newco");
        assertThat(listed.out()).contains(id).doesNotContain(token);

        assertThat(admin.run("admin", "tokens", "revoke", id).code()).isZero();
        await().atMost(Duration.ofSeconds(20)).until(() -> newco.run("ps").code() == ExitCode.AUTH);
        assertThat(alpha.run("admin", "tenants", "list").code()).as("a tenant's token is no admin's")
                .isEqualTo(ExitCode.AUTH);
    }

    /** A job whose first run fails is tried again under its retry policy, after its backoff, and succeeds. */
    @Test
    @Order(11)
    void aFailedRunIsRetriedUnderTheJobsRetryPolicy() throws IOException {
        // the task may run as an unprivileged user: its flag lives in a directory anyone may write
        Path shared = Files.createTempDirectory("gantry-cli-flaky-");
        Files.setPosixFilePermissions(shared, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        Path flag = shared.resolve("failed-once");
        Path file = Files.writeString(work.resolve("flaky.yaml"), """
                name: flaky
                retry: {maxRetries: 2, backoffSeconds: 1}
                tasks:
                  - name: w
                    command: [sh, -c, 'if [ -e %s ]; then echo second; else touch %s; exit 3; fi']
                    gpus: 1
                """.formatted(flag, flag));
        CliRunner.Result submitted = assertTimeoutPreemptively(Duration.ofMinutes(3),
                () -> alpha.run("submit", file.toString(), "--watch", "--interval", "500ms"));
        assertThat(submitted.code()).as(submitted.toString()).isEqualTo(ExitCode.OK);
        String job = submitted.out().lines().findFirst().orElseThrow();
        JsonNode view = JSON.readTree(alpha.run("ps", "-o", "json").out());
        JsonNode found = null;
        for (JsonNode j : view.path("jobs")) {
            if (j.path("jobId").asText().equals(job)) {
                found = j;
            }
        }
        assertThat(found).as(view.toString()).isNotNull();
        assertThat(found.path("state").asText()).isEqualTo("SUCCEEDED");
        assertThat(found.path("attempt").asInt()).isEqualTo(2);
    }

    /**
     * A pipeline: train waits for prep (afterok, given with --after) and shows why; a suspended job waits with its
     * reason; prep succeeding lets train run, and resume lets the suspended one run.
     */
    @Test
    @Order(12)
    void aJobAfterAnotherWaitsForItAndASuspendedJobRunsOnceResumed() throws IOException {
        Path prepFile = Files.writeString(work.resolve("prep.yaml"), """
                name: prep
                tasks:
                  - name: w
                    command: [sh, -c, 'sleep 3']
                    gpus: 1
                """);
        Path trainFile = Files.writeString(work.resolve("train.yaml"), """
                name: train
                suspend: false
                tasks:
                  - name: w
                    command: [sh, -c, 'echo trained']
                    gpus: 1
                """);
        String prep = alpha.run("submit", prepFile.toString()).out().strip();
        CliRunner.Result train = alpha.run("submit", trainFile.toString(), "--after", prep);
        assertThat(train.code()).as(train.toString()).isZero();
        String trainJob = train.out().strip();
        await().atMost(LONG).untilAsserted(() -> {
            CliRunner.Result why = alpha.run("why", trainJob);
            assertThat(why.out()).as(why.toString()).contains("a job it depends on",
                    "waits for " + prep + " to succeed");
        });

        Path heldFile = Files.writeString(work.resolve("held.yaml"), """
                name: held
                suspend: true
                tasks:
                  - name: w
                    command: [sh, -c, 'echo resumed']
                    gpus: 1
                """);
        String held = alpha.run("submit", heldFile.toString()).out().strip();
        await().atMost(LONG).untilAsserted(() -> assertThat(alpha.run("ps").out()).contains(held)
                .contains("SUSPENDED"));
        CliRunner.Result again = alpha.run("suspend", held);
        assertThat(again.out()).as("idempotent").contains(held + ": suspended (QUEUED)");
        CliRunner.Result resumed = alpha.run("resume", held);
        assertThat(resumed.code()).as(resumed.toString()).isZero();

        CliRunner.Result watched = assertTimeoutPreemptively(Duration.ofMinutes(3),
                () -> alpha.run("watch", trainJob, "--interval", "500ms"));
        assertThat(watched.code()).as(watched.toString()).isEqualTo(ExitCode.OK);
        CliRunner.Result heldRun = assertTimeoutPreemptively(Duration.ofMinutes(3),
                () -> alpha.run("watch", held, "--interval", "500ms"));
        assertThat(heldRun.code()).as(heldRun.toString()).isEqualTo(ExitCode.OK);
    }

    @Test
    @Order(13)
    void aRunningJobSuspendedSavesAndExitsZeroOnItsNoticeAndIsResumedNotSucceeded() throws IOException {
        // the guide's pattern: on the stop notice (SIGTERM here) save and exit 0; the first run waits to be stopped,
        // the next one (GANTRY_ATTEMPT 2) ends at once
        Path file = Files.writeString(work.resolve("stoppable.yaml"), """
                name: stoppable
                tasks:
                  - name: w
                    command: [sh, -c, 'if [ "$GANTRY_ATTEMPT" = 1 ]; then trap "echo saved; exit 0" TERM;
                      echo started; while true; do sleep 0.2; done; fi; echo resumed']
                    gpus: 1
                """);
        String job = alpha.run("submit", file.toString()).out().strip();
        await().atMost(LONG).untilAsserted(() -> assertThat(alpha.run("ps").out().lines()
                .filter(l -> l.startsWith(job))).singleElement().asString().contains("RUNNING"));
        await().atMost(LONG).until(() -> alpha.run("logs", job).out().contains("started"));

        assertThat(alpha.run("suspend", job).code()).isZero();
        // it runs on through its stop (the notice, SIGTERM, its exit), then is back in its queue, not done
        await().atMost(LONG).untilAsserted(() -> {
            JsonNode view = JSON.readTree(alpha.run("watch", job, "--timeout", "1s", "-o", "json").out().lines()
                    .findFirst().orElseThrow());
            assertThat(view.path("state").asText()).as("stopped, not done: back in its queue").isEqualTo("QUEUED");
            assertThat(view.path("attempt").asInt()).isEqualTo(2);
        });
        assertThat(alpha.run("why", job).out()).contains("suspended").doesNotContain("SUCCEEDED");

        assertThat(alpha.run("resume", job).code()).isZero();
        CliRunner.Result resumed = assertTimeoutPreemptively(Duration.ofMinutes(3),
                () -> alpha.run("watch", job, "--interval", "500ms"));
        assertThat(resumed.code()).as(resumed.toString()).isEqualTo(ExitCode.OK);
        assertThat(alpha.run("logs", job).out()).contains("resumed");
    }
}
