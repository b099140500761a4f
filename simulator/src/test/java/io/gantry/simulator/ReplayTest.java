package io.gantry.simulator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ReplayTest {
    private static final Path TRACES = Path.of("../../shared/traces");

    @Test
    void the_command_writes_the_report_csv_and_plots_for_every_policy(@TempDir Path out) throws Exception {
        assumeTrue(Files.isRegularFile(TRACES.resolve("tiresias-60/60_job.csv")),
                "skipped: the shared Tiresias trace is not at " + TRACES.toAbsolutePath());
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        Replay.Options o = Replay.parse(new String[] {"--trace", "tiresias", "--cluster", "uniform:2x8", "--policy",
                "gantry,fifo", "--traces", TRACES.toString(), "--out", out.toString()});

        List<Simulation.Result> results = Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(progress));

        assertThat(results).extracting(r -> r.policy).containsExactly("gantry", "fifo");
        assertThat(out.resolve("report.md")).content().contains("| gantry | 60/60 |", "| fifo | 60/60 |");
        assertThat(Files.readAllLines(out.resolve("summary.csv"))).hasSize(3);
        assertThat(out.resolve("utilisation.png")).isNotEmptyFile();
        assertThat(out.resolve("jct-cdf.png")).isNotEmptyFile();
        for (String f : List.of("queue-length.png", "stranded.png", "shares-gantry.png", "shares-fifo.png",
                "timeseries.csv", "shares.csv")) {
            assertThat(out.resolve(f)).isNotEmptyFile();
        }
        assertThat(out.resolve("report.md")).content().contains("FTF rho mean", "avg stranded GPUs");
        assertThat(progress.toString()).contains("[fifo] 60/60 jobs ended (100%)");
    }

    @Test
    void an_unknown_policy_or_option_is_refused_naming_it() {
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "philly", "--policy", "sjf"}))
                .hasMessageContaining("sjf");
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "philly", "--speed", "2"}))
                .hasMessageContaining("--speed");
    }

    @Test
    void faults_from_the_command_line_carry_their_time_and_recovery() {
        Replay.Options o = Replay.parse(new String[] {"--trace", "tiresias", "--fail", "node-00001@30+5,node-00002@60"});

        assertThat(faultsOf(o)).containsExactly(new Simulation.Fault(30_000, "node-00001", 5_000L),
                new Simulation.Fault(60_000, "node-00002", null));
    }

    @Test
    void the_shapes_random_failures_and_quota_options_are_read() throws Exception {
        Replay.Options o = Replay.parse(new String[] {"--trace", "topology", "--cluster", "racks:10x64x8",
                "--max-jobs", "40", "--fail-rate", "2", "--recover-after", "600", "--quota-gpus", "1000",
                "--seed", "9"});
        Workload w = Replay.workload(o);
        var nodes = Clusters.resolve(o.cluster(), TRACES);

        assertThat(w.jobs()).hasSize(40);
        assertThat(nodes).hasSize(640);
        assertThat(Replay.queueConfig(o, w, 5120).queues()).extracting(q -> q.quotas().values().iterator().next()
                .nominal()).containsOnly(100L);
        List<Simulation.Fault> faults = Replay.faults(o, nodes, 86_400_000L);
        assertThat(faults).isNotEmpty().allMatch(f -> f.recoverAfterMillis() == 600_000L);
        assertThat(Replay.workload(Replay.parse(new String[] {"--trace", "scale", "--max-jobs", "5"})).jobs())
                .hasSize(5);
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "scale", "--fail-rate", "-1"}))
                .hasMessageContaining("--fail-rate");
    }

    private static List<Simulation.Fault> faultsOf(Replay.Options o) {
        try {
            return Replay.faults(o);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
