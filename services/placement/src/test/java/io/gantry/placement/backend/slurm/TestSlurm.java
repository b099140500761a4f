package io.gantry.placement.backend.slurm;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real one-node Slurm (slurmctld + slurmd + munged on this host, 8 fake H100 GPUs) started by
 * {@code tools/slurm/start-test-slurm.sh}, which installs slurm-wlm and munge with apt when missing. Each test class
 * gets its own directory and ports, so two classes never stop each other's controller. Where it cannot run (not
 * root, no apt, daemons that do not come up) {@link #start} aborts the class: reported as skipped, with the reason.
 */
final class TestSlurm {
    private static final Path SCRIPT = Path.of("../../tools/slurm/start-test-slurm.sh").toAbsolutePath().normalize();

    final Path dir;
    /** The node's name (this host's short name). */
    final String node;
    /** The tools, pointed at this controller's slurm.conf. */
    final SlurmCommands commands;
    private final boolean started;

    private TestSlurm(Path dir, String node, boolean started) {
        this.dir = dir;
        this.node = node;
        this.started = started;
        this.commands = new ProcessSlurmCommands(Map.of(), dir.resolve("slurm.conf").toString(), Duration.ofSeconds(15));
    }

    static TestSlurm start(Path dir, int controllerPort, int slurmdPort) throws IOException, InterruptedException {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to run slurmctld/slurmd (and apt-get); running as " + System.getProperty("user.name"));
        Assumptions.assumeTrue(Files.isExecutable(SCRIPT), "no " + SCRIPT);
        Path out = Files.createTempFile("gantry-slurm-start", ".out");
        ProcessBuilder pb = new ProcessBuilder(SCRIPT.toString(), "start", dir.toString())
                .redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("SLURMCTLD_PORT", Integer.toString(controllerPort));
        pb.environment().put("SLURMD_PORT", Integer.toString(slurmdPort));
        Process p = pb.start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            Assumptions.abort("start-test-slurm.sh did not finish within 5 minutes: " + Files.readString(out));
        }
        String printed = Files.readString(out);
        Files.deleteIfExists(out);
        if (p.exitValue() == 2) {
            Assumptions.abort("no Slurm on this host: " + printed.strip());
        }
        assertThat(p.exitValue()).as(printed).isZero();
        String node = printed.lines().filter(l -> l.startsWith("NODE=")).map(l -> l.substring(5)).findFirst()
                .orElseGet(TestSlurm::shortHostname);
        return new TestSlurm(dir, node, printed.contains("STARTED=yes"));
    }

    /** Stops the daemons if this class started them (an operator's controller in the same directory stays). */
    void stop() throws IOException, InterruptedException {
        if (started) {
            Process p = new ProcessBuilder(SCRIPT.toString(), "stop", dir.toString()).inheritIO().start();
            p.waitFor(60, TimeUnit.SECONDS);
        }
    }

    private static String shortHostname() {
        try {
            Process p = new ProcessBuilder("hostname", "-s").start();
            return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
