package io.gantry.placement.backend;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The local backend's health reader (fed recorded samples) and its pre-flight command. */
class LocalBackendHealthTest {
    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");

    private static NodeSpec node() {
        List<Gpu> gpus = IntStream.range(0, 4).mapToObj(i -> new Gpu(i, "H100", 81_920)).toList();
        return new NodeSpec("local", "local", gpus, 8000, 16_384, Map.of());
    }

    @Test
    void faultsReadFromNvidiaSmiAndTheKernelLogAreReportedOnPoll(@TempDir Path work) {
        ConcurrentLinkedQueue<String> samples = new ConcurrentLinkedQueue<>(List.of(
                sample("query-healthy.csv"), sample("query-faulty.csv")));
        ConcurrentLinkedQueue<String> logs = new ConcurrentLinkedQueue<>(List.of("", sample("kern.log")));
        LocalBackend.HealthSource source = new LocalBackend.HealthSource() {
            @Override
            public Optional<String> query() {
                return Optional.ofNullable(samples.poll());
            }

            @Override
            public String kernelLog() {
                String s = logs.poll();
                return s == null ? "" : s;
            }
        };
        try (LocalBackend local = new LocalBackend(node(), work, null, Clock.systemUTC())
                .withHealth(source, Duration.ofMillis(20))) {
            List<DeviceFault> seen = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                seen.addAll(local.pollFaults(NOW, 100));
                return seen.size() >= 7;
            });
            assertThat(seen).extracting(DeviceFault::kind).containsExactlyInAnyOrder(DeviceFault.Kind.GPU_LOST,
                    DeviceFault.Kind.ECC_DOUBLE_BIT, DeviceFault.Kind.THERMAL, DeviceFault.Kind.GPU_LOST,
                    DeviceFault.Kind.XID, DeviceFault.Kind.XID, DeviceFault.Kind.XID);
        }
    }

    @Test
    void thePreflightCommandPassesOnExitZeroAndFailsWithItsLastLineOtherwise(@TempDir Path work) throws Exception {
        Path check = work.resolve("check.sh");
        Files.writeString(check, "#!/bin/sh\necho checking $GANTRY_NODE_ID\necho 'GPU 2: NVLink 3 inactive'\nexit 3\n");
        check.toFile().setExecutable(true);
        LocalBackend failing = new LocalBackend(node(), work, null, Clock.systemUTC())
                .withPreflight(List.of(check.toString()), Duration.ofSeconds(10));
        assertThat(failing.preflight(node(), NOW)).contains("`" + check + "` exited 3: GPU 2: NVLink 3 inactive");
        LocalBackend passing = new LocalBackend(node(), work, null, Clock.systemUTC())
                .withPreflight(List.of("true"), Duration.ofSeconds(10));
        assertThat(passing.preflight(node(), NOW)).isEmpty();
        assertThat(new LocalBackend(node(), work, null, Clock.systemUTC()).preflight(node(), NOW)).isEmpty();
        LocalBackend slow = new LocalBackend(node(), work, null, Clock.systemUTC())
                .withPreflight(List.of("sleep", "5"), Duration.ofMillis(200));
        assertThat(slow.preflight(node(), NOW)).hasValueSatisfying(m -> assertThat(m).contains("did not finish"));
    }

    private static String sample(String name) {
        try (var in = LocalBackendHealthTest.class.getResourceAsStream("/health/" + name)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
