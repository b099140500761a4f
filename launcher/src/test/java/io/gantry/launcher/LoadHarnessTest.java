package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The load harness on a small fresh stack (8 nodes, 3 tenants): a short open-loop run at 20 jobs/s. Only
 * invariants are asserted (nothing lost, nothing granted twice, every section and sample there) — how fast the
 * stack is, is what the harness measures, never what a test claims.
 */
class LoadHarnessTest {

    @Test
    void aShortOpenLoopRunGrantsEveryAcceptedJobExactlyOnceAndWritesTheReportWithLagAndCpuSamples(@TempDir Path out)
            throws Exception {
        Path repo = Path.of("..").toAbsolutePath().normalize();
        LoadTest.Options options = LoadTest.parse(new String[] {"--rate", "20", "--duration", "5s", "--warmup", "2s",
                "--drain", "60s", "--nodes", "8", "--tenants", "3", "--run-seconds", "1", "--service-heap", "200m",
                "--out", out.resolve("run").toString(), "--table", out.resolve("RESULTS.md").toString()}, repo);
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream progress = new PrintStream(console, true, StandardCharsets.UTF_8);

        LoadTest.Result r = LoadTest.run(options, progress);

        String printed = console.toString(StandardCharsets.UTF_8);
        assertThat(r.exitCode()).as(printed).isZero();
        assertThat(r.errors()).as("no submission fails at 20 jobs/s").isZero();
        assertThat(r.sent()).as("7 s of 20 jobs/s").isBetween(130L, 150L);
        assertThat(r.accepted()).isEqualTo(r.sent());
        assertThat(r.placed()).as("every accepted job is granted").isEqualTo(r.accepted());
        assertThat(r.lost()).isZero();
        assertThat(r.duplicateGrants()).as("no job is granted twice").isZero();
        assertThat(printed).contains("measure", "granted", "lag queue<admission");

        String report = Files.readString(r.report());
        assertThat(report).contains("## Throughput", "## Latency", "submit -> placed", "REST submit",
                "### Where the time goes", "## Errors", "## Kafka consumer lag", "## CPU and memory",
                "| gantry-queue | admission.job-events |", "| gantry-placement | queue.job-events |",
                "every accepted job was granted");
        for (String service : DevCluster.SERVICES) {
            assertThat(report).contains("| " + service + " |");
        }
        assertThat(report).as("the in-JVM broker's requests by API and its time by client")
                .contains("## Broker", "| Fetch |", "| EndTxn |", "| gantry-queue-producer |", "| all clients |",
                        "| harness JIT compiler threads |");

        List<String> csv = Files.readAllLines(r.csv());
        List<String> header = Arrays.asList(csv.get(0).split(","));
        assertThat(header).contains("t_s", "phase", "granted", "placed_p99_ms", "lag gantry-queue admission.job-events",
                "lag gantry-placement queue.job-events", "cpu% queue", "rss_mib placement",
                "cpu% postgresql (all processes)", "broker_req Produce", "broker_ms Fetch",
                "broker_client gantry-placement-producer", "cpu% harness GC and VM threads");
        List<String[]> measured = csv.stream().skip(1).map(l -> l.split(",", -1)).filter(f -> f[1].equals("measure")).toList();
        assertThat(measured).as("a sample a second over the measured 5 s").hasSizeGreaterThanOrEqualTo(4);
        int rss = header.indexOf("rss_mib placement");
        int lag = header.indexOf("lag gantry-placement queue.job-events");
        int pgRss = header.indexOf("rss_mib postgresql (all processes)");
        for (String[] row : measured) {
            assertThat(Double.parseDouble(row[rss])).as("placement's resident memory").isPositive();
            assertThat(row[lag]).as("placement's lag was sampled").isNotEmpty();
            assertThat(Double.parseDouble(row[pgRss])).as("PostgreSQL was found").isPositive();
        }

        assertThat(Files.readString(out.resolve("RESULTS.md"))).contains("open loop 20 jobs/s", "(run/report.md)");
    }
}
