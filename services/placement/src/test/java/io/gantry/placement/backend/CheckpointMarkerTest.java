package io.gantry.placement.backend;

import com.sun.net.httpserver.HttpServer;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A task that writes a checkpoint marker file instead of calling the API has it reported, by the local backend,
 * to the API it would have called (a real HTTP server on loopback standing in for admission's endpoint).
 */
class CheckpointMarkerTest {
    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    private record Report(String path, String authorization, String body) {
    }

    private HttpServer api;
    private final List<Report> reports = Collections.synchronizedList(new ArrayList<>());
    /** Answers 503 to this many requests first (the run not yet known to admission). */
    private final AtomicInteger busy = new AtomicInteger();
    private final AtomicInteger status = new AtomicInteger(201);
    private LocalBackend backend;
    private Path work;
    private Path checkpoints;

    @BeforeEach
    void startTheApi() throws IOException {
        api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        api.createContext("/v1/jobs/", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            int code = busy.getAndUpdate(n -> Math.max(0, n - 1)) > 0 ? 503 : status.get();
            if (code != 503) {
                reports.add(new Report(exchange.getRequestURI().getPath(),
                        exchange.getRequestHeaders().getFirst("Authorization"), body));
            }
            byte[] answer = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(code, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        api.start();
        work = Files.createTempDirectory("gantry-markers-work-");
        checkpoints = Files.createTempDirectory("gantry-markers-ckpt-");
        // the task may run as an unprivileged user: it must be able to write its checkpoint directory
        Files.setPosixFilePermissions(checkpoints, PosixFilePermissions.fromString("rwxrwxrwx"));
        NodeSpec node = new NodeSpec("local", "local", List.of(new Gpu(0, "L4", 0)), 4000, 4096, Map.of());
        backend = new LocalBackend(node, work, ROOT ? LocalBackend.resolveRunAs("nobody") : null,
                new VirtualClock(Clock.systemUTC(), 1), false,
                "http://127.0.0.1:" + api.getAddress().getPort());
    }

    @AfterEach
    void stop() throws IOException {
        backend.close();
        api.stop(0);
        for (Path dir : List.of(work, checkpoints)) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private static Allocation allocation(String jobId) {
        return new Allocation("alloc-" + jobId, jobId, "vision", 3,
                List.of(new PlacedTask("train", 0, "local", "L4", List.of(0), 100, 64)), Instant.now(), "local");
    }

    /** A task that writes markers for steps 100 and 200 (each to a temporary name, renamed into place). */
    private RunPlan plan(String script) {
        return new RunPlan(Map.of("train", new RunPlan.Task(List.of("sh", "-c", script), null)), "run-token-secret",
                checkpoints.toString());
    }

    private static String marker(int step) {
        return "printf '{\"step\":" + step + ",\"path\":\"'$GANTRY_CHECKPOINT_DIR'/step-" + step + ".pt\"}' "
                + "> $GANTRY_CHECKPOINT_DIR/.m.tmp && mv $GANTRY_CHECKPOINT_DIR/.m.tmp "
                + "$GANTRY_CHECKPOINT_DIR/gantry-checkpoint.json";
    }

    private void pollUntil(java.util.concurrent.Callable<Boolean> done) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
            backend.poll(Instant.now());
            return done.call();
        });
    }

    /** The first report gets a 503 and is sent again a second later; a marker replaced before then is not. */
    @Test
    void eachNewMarkerIsReportedOnceWithTheRunsOwnTokenAndAfterA503Again() throws Exception {
        busy.set(1);
        Allocation a = allocation("job-m");
        assertThat(backend.start(a, plan(marker(100) + "; sleep 2; " + marker(200) + "; sleep 30"), Instant.now()))
                .isEmpty();

        pollUntil(() -> reports.size() == 2);

        assertThat(reports).extracting(Report::path).containsOnly("/v1/jobs/job-m/checkpoints");
        assertThat(reports).extracting(Report::authorization).containsOnly("Bearer run-token-secret");
        assertThat(reports.get(0).body()).contains("\"step\":100", checkpoints + "/step-100.pt");
        assertThat(reports.get(1).body()).contains("\"step\":200");
        // the same marker is not sent again on later polls
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> {
            backend.poll(Instant.now());
            return reports.size() == 2;
        });
        backend.stop(a.allocationId());
    }

    @Test
    void aCheckpointSavedOnSigtermRightBeforeTheTaskExitsIsStillReported() throws Exception {
        Allocation a = allocation("job-t");
        backend.start(a, plan("trap '" + marker(300).replace("'", "'\\''") + "; exit 0' TERM; echo ready; "
                + "while true; do sleep 0.1; done"), Instant.now());
        Path log = work.resolve("job-t").resolve("3").resolve("train-0.log");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(log) && Files.readString(log).contains("ready"));
        backend.terminate(a.allocationId());

        await().atMost(Duration.ofSeconds(20)).until(() -> {
            backend.poll(Instant.now());
            return reports.size() == 1;
        });
        assertThat(reports.get(0).body()).contains("\"step\":300");
    }

    @Test
    void aMarkerLeftByAnEarlierAttemptIsNotReportedForTheNextOne() throws Exception {
        Files.writeString(checkpoints.resolve(CheckpointMarkers.MARKER), "{\"step\":50,\"path\":\"/old\"}");
        Allocation a = allocation("job-o");
        backend.start(a, plan("sleep 30"), Instant.now());

        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> {
            backend.poll(Instant.now());
            return reports.isEmpty();
        });
        backend.stop(a.allocationId());
    }

    @Test
    void aMarkerThatIsALinkOrNotAFileOrTooLargeIsNotRead() throws IOException {
        Path secret = Files.writeString(work.resolve("placement-only.txt"), "S3cr3t");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Path marker = checkpoints.resolve(CheckpointMarkers.MARKER);
        Files.createSymbolicLink(marker, secret);
        assertThat(CheckpointMarkers.read(marker)).as("a link to a file the task cannot read").isNull();
        Files.delete(marker);
        Files.createDirectory(marker);
        assertThat(CheckpointMarkers.read(marker)).as("a directory").isNull();
        Files.delete(marker);
        Files.write(marker, new byte[CheckpointMarkers.MAX_BYTES + 1]);
        assertThat(CheckpointMarkers.read(marker)).as("larger than a marker").isNull();
        Files.writeString(marker, "{\"step\": 1, \"path\": \"/c\"}");
        assertThat(new String(CheckpointMarkers.read(marker), StandardCharsets.UTF_8)).contains("\"step\": 1");
    }

    @Test
    void aRefusalIsLoggedByItsFieldsNotItsText() {
        assertThat(CheckpointMarkers.refusedFields("{\"title\":\"Bad Request\",\"detail\":\"Unrecognized token "
                + "'S3cr3t'\",\"errors\":[{\"field\":\"body\",\"message\":\"S3cr3t\"},{\"field\":\"path\","
                + "\"message\":\"x\"}]}")).containsExactly("body", "path");
        assertThat(CheckpointMarkers.refusedFields("not json")).isEmpty();
    }
}
