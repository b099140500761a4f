package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A user's story of a failure, with real processes: on the local backend a training script saves a checkpoint and
 * reports it with the standard-library Python helper, the GPU under it then fails (an Xid line in the kernel log the
 * backend reads; without nvidia-smi to map its bus to a GPU the whole node is taken out of service), recovery stops
 * the run and requeues the job, and once an operator returns the node the script runs again with
 * {@code GANTRY_RESUME_FROM} naming the checkpoint it saved, and finishes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ResumeEndToEndTest {
    private static final Duration LONG = Duration.ofSeconds(90);

    DevCluster cluster;
    Path kernelLog;
    Path checkpoints;
    Api alpha;
    Api placementAdmin;

    @BeforeAll
    void startTheWholeSystem() throws Exception {
        Path dataDir = Files.createTempDirectory("gantry-resume-");
        Files.writeString(dataDir.resolve("tokens.yml"), """
                tokens:
                  - tenant: alpha
                    token: alpha-token-0001
                  - tenant: ops
                    role: admin
                    token: admin-token-0002
                """);
        kernelLog = dataDir.resolve("kern.log");
        Files.writeString(kernelLog, "[    1.000000] Linux version 6.1\n");
        // the tasks run as an unprivileged user when the tests run as root: their checkpoint directory is theirs too
        checkpoints = Files.createTempDirectory("gantry-resume-ckpt-");
        Files.setPosixFilePermissions(checkpoints, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path repo = Path.of("..").toAbsolutePath().normalize();
        cluster = new DevCluster(new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(5),
                Map.of("placement", Map.of("gantry.placement.backend", "local",
                                "gantry.placement.local.gpus", "2",
                                "gantry.placement.local.gpu-model", "H100",
                                "gantry.placement.local.nvidia-smi", "",
                                "gantry.placement.local.kernel-log", kernelLog.toString(),
                                "gantry.placement.local.health-interval", "300ms",
                                "gantry.placement.local.heartbeat-interval", "500ms"),
                        "recovery", Map.of("gantry.recovery.heartbeat-timeout", "10s")),
                "200m")).start();
        alpha = new Api(cluster.url("admission"), "alpha-token-0001");
        placementAdmin = new Api(cluster.url("placement"), "admin-token-0002");
        await().atMost(LONG).until(() -> placementAdmin.get("/v1/nodes").body().size() == 1);
    }

    @AfterAll
    void stopIt() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRunKilledByAGpuFaultResumesFromItsLastCheckpointWithARealScript() throws IOException {
        Path helper = Path.of("..", "tools", "python", "gantry_checkpoint.py").toAbsolutePath().normalize();
        String script = String.join("; ", "set -e",
                "if [ -n \"$GANTRY_RESUME_FROM\" ]; then echo \"attempt $GANTRY_ATTEMPT resumed from $GANTRY_RESUME_FROM\""
                        + " > \"$GANTRY_CHECKPOINT_DIR/resumed\"; exit 0; fi",
                "echo state > \"$GANTRY_CHECKPOINT_DIR/step-100.ckpt\"",
                // the marker file, which the local backend reports (the API call itself: AdmissionIntegrationTest)
                "python3 " + helper + " --marker --step 100 --path \"$GANTRY_CHECKPOINT_DIR/step-100.ckpt\"",
                "sleep 600");
        String body = """
                {"name":"train","checkpoint":{"dir":"%s"},
                 "tasks":[{"name":"w","command":["sh","-c",%s],"gpus":1}]}
                """.formatted(checkpoints, quote(script));
        Api.Response submitted = alpha.post("/v1/jobs", body);
        assertThat(submitted.status()).as(submitted.toString()).isEqualTo(202);
        String job = submitted.body().path("jobId").asText();

        JsonNode saved = await().atMost(LONG).until(() -> alpha.get("/v1/jobs/" + job + "/checkpoints").body(),
                b -> b.path("checkpoints").size() == 1 || b.isArray() && b.size() == 1);
        String path = checkpoints.resolve("step-100.ckpt").toString();
        assertThat(saved.toString()).contains(path);

        // the GPU falls off the bus: the backend reads the kernel log, recovery takes the node out and requeues
        Files.writeString(kernelLog, "[ 4242.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n",
                StandardOpenOption.APPEND);
        await().atMost(LONG).until(() -> alpha.get("/v1/jobs/" + job).body().path("attempt").asInt() == 2);
        assertThat(placementAdmin.post("/v1/admin/nodes/local/uncordon", "{}").status()).isLessThan(300);

        JsonNode done = await().atMost(LONG).until(() -> alpha.get("/v1/jobs/" + job).body(),
                j -> j.path("state").asText().equals("SUCCEEDED"));
        assertThat(done.path("attempt").asInt()).isEqualTo(2);
        assertThat(Files.readString(checkpoints.resolve("resumed")).strip())
                .isEqualTo("attempt 2 resumed from " + path);
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
