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
    void a_users_csv_trace_replays_with_its_shares_models_and_time_limits(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("mine.csv");
        Files.writeString(trace, """
                submit_s,gpus,duration_s,tenant,gpu_model,time_limit_s
                0,8,100,vision
                0,0.5,50,nlp,,
                10,2,30,nlp,H100,
                20,1,500,vision,,60
                """);
        Replay.Options o = Replay.parse(new String[] {"--trace", "csv:" + trace, "--cluster", "uniform:2x8",
                "--policy", "gantry", "--out", dir.resolve("out").toString()});

        List<Simulation.Result> results = Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()));

        Report.Summary s = Report.summarise(results.get(0));
        // the job past its 60 s time limit is stopped there, as placement does in production
        assertThat(s.jobs()).isEqualTo(4);
        assertThat(s.ended()).isEqualTo(4);
        assertThat(s.failed()).isEqualTo(1);
        assertThat(dir.resolve("out/report.md")).content().contains("CSV trace mine, 4 jobs, 2 tenants");
    }

    @Test
    void a_queue_config_without_a_queue_for_a_tenant_of_the_workload_is_refused_before_the_replay(@TempDir Path dir)
            throws Exception {
        Replay.Options o = csvWithQueues(dir, "0,1,10,vision\n0,1,10,team-b\n", """
                flavours: [any]
                queues:
                  - {name: vision, tenant: vision, quotas: {any: {nominal: 8}}}
                  - {name: teamb, tenant: teamb, quotas: {any: {nominal: 8}}}
                """, "uniform:2x8");
        Path queues = o.queueConfig();

        assertThatThrownBy(() -> Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no queue named after tenant(s) team-b")
                .hasMessageContaining("teamb of teamb");

        Files.writeString(queues, "queues: [{name: x\n");
        assertThatThrownBy(() -> Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream())))
                .as("malformed YAML: one line naming the file, not a parser's stack")
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--queue-config " + queues + ": ");
    }

    @Test
    void a_workload_whose_jobs_can_never_dispatch_fails_loudly_instead_of_reporting_nothing(@TempDir Path dir)
            throws Exception {
        Path trace = dir.resolve("t.csv");
        // every job asks for a GPU model the cluster does not have
        Files.writeString(trace, "0,1,10,vision,B200\n5,2,10,vision,B200\n");
        Replay.Options o = Replay.parse(new String[] {"--trace", "csv:" + trace, "--cluster", "uniform:2x8",
                "--policy", "gantry", "--out", dir.resolve("out").toString()});

        assertThatThrownBy(() -> Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not one of the 2 jobs ran to its end");
    }

    /** A replay of {@code csv} under the queue configuration {@code queuesYaml} (both written to {@code dir}). */
    private static Replay.Options csvWithQueues(Path dir, String csv, String queuesYaml, String cluster,
                                                String... more) throws java.io.IOException {
        Path trace = Files.writeString(dir.resolve("t.csv"), csv);
        Path queues = Files.writeString(dir.resolve("queues.yml"), queuesYaml);
        List<String> args = new java.util.ArrayList<>(List.of("--trace", "csv:" + trace, "--cluster", cluster,
                "--queue-config", queues.toString(), "--out", dir.resolve("out").toString()));
        args.addAll(List.of(more));
        return Replay.parse(args.toArray(String[]::new));
    }

    @Test
    void jobs_that_never_ran_while_others_did_are_said_loudly(@TempDir Path dir) throws Exception {
        Replay.Options o = csvWithQueues(dir, "0,1,10,a\n0,1,10,b\n", """
                flavours: [gpu]
                queues:
                  - {name: a, tenant: a, quotas: {gpu: {nominal: 8}}}
                  - {name: b, tenant: b, quotas: {gpu: {nominal: 0}}}
                """, "uniform:1x8", "--policy", "gantry");
        ByteArrayOutputStream progress = new ByteArrayOutputStream();

        Replay.run(o, new PrintStream(new ByteArrayOutputStream()), new PrintStream(progress));

        assertThat(progress.toString()).contains("replay: policy gantry: 1 of 2 jobs never ran to their end");
        assertThat(Replay.entitled(Replay.queueConfig(o, Traces.csv("ab", List.of("0,1,10,a", "0,1,10,b"),
                Traces.Options.ALL), 8), Traces.csv("ab", List.of("0,1,10,a", "0,1,10,b"), Traces.Options.ALL)))
                .as("the file's quotas, not equal weights").containsExactly(java.util.Map.entry("a", 8000.0), java.util.Map.entry("b", 0.0));
    }

    @Test
    void a_tenant_whose_only_job_failed_does_not_count_as_slowdown_zero_in_jains_index(@TempDir Path dir)
            throws Exception {
        Path trace = dir.resolve("tl.csv");
        Files.writeString(trace, "0,8,100,a,,50\n0,0.5,10,b\n0,0.5,10,c\n");
        Replay.Options o = Replay.parse(new String[] {"--trace", "csv:" + trace, "--cluster", "uniform:2x8",
                "--policy", "gantry", "--out", dir.resolve("out").toString()});

        List<Simulation.Result> results = Replay.run(o, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()));

        assertThat(Report.summarise(results.get(0)).jain()).as("b and c, each at slowdown 1").isEqualTo(1.0);
    }

    @Test
    void a_bad_csv_line_is_refused_with_its_number_and_field() {
        Traces.Options all = Traces.Options.ALL;
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,1,10,vision", "5,1.5,10,vision"), all))
                .hasMessageContaining("t line 2: gpus");
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,1,-3,vision"), all))
                .hasMessageContaining("t line 1: submit_s must be >= 0 and duration_s > 0");
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,1,10,Vision"), all))
                .hasMessageContaining("t line 1: tenant");
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,1,10"), all))
                .hasMessageContaining("expected submit_s,gpus,duration_s,tenant");
        assertThatThrownBy(() -> Traces.csv("t", List.of("# nothing", ""), all)).hasMessageContaining("no jobs");
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "csv:"})).hasMessageContaining("csv:FILE");
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,8,1e18,a"), all))
                .hasMessageContaining("t line 1: duration_s must be at most 320000000 (ten years), was 1e18");
        assertThatThrownBy(() -> Traces.csv("t", List.of("1732000000000,8,100,a"), all))
                .as("milliseconds").hasMessageContaining("t line 1: submit_s must be at most 100000000000");
        assertThatThrownBy(() -> Traces.csv("t", List.of("0,8,100,a", "400000000,8,100,a"), all))
                .hasMessageContaining("submitted over more than ten years");
    }

    @Test
    void a_csv_of_unix_times_starts_at_its_first_job_and_quotes_and_a_byte_order_mark_are_read() {
        Workload w = Traces.csv("t", List.of("\uFEFFsubmit_s,gpus,duration_s,tenant", "\"1732000010\",8,100,\"a\"",
                "1732000000,8,100,a"), Traces.Options.ALL);

        assertThat(w.jobs()).extracting(SimJob::submitMillis).containsExactly(0L, 10_000L);
        assertThat(w.jobs()).extracting(SimJob::tenant).containsOnly("a");
        assertThat(w.note()).contains("submit times shifted by -1732000000 s (the first job at 0)");
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
                .nominal()).containsOnly(100_000L);
        List<Simulation.Fault> faults = Replay.faults(o, nodes, 86_400_000L);
        assertThat(faults).isNotEmpty().allMatch(f -> f.recoverAfterMillis() == 600_000L);
        assertThat(Replay.workload(Replay.parse(new String[] {"--trace", "scale", "--max-jobs", "5"})).jobs())
                .hasSize(5);
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "scale", "--fail-rate", "-1"}))
                .hasMessageContaining("--fail-rate");
        assertThat(Replay.queueConfig(o, w, 5120).maxDrain()).as("drains only wait by default").isNull();
        Replay.Options bounded = Replay.parse(new String[] {"--trace", "topology", "--max-drain", "30"});
        assertThat(Replay.queueConfig(bounded, w, 5120).maxDrain()).isEqualTo(java.time.Duration.ofMinutes(30));
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "scale", "--max-drain", "-5"}))
                .hasMessageContaining("--max-drain must be >= 0");
        assertThat(Replay.queueConfig(o, w, 5120).starvationWait()).isEqualTo(java.time.Duration.ofMinutes(30));
        Replay.Options off = Replay.parse(new String[] {"--trace", "topology", "--starvation-wait", "never"});
        assertThat(Replay.queueConfig(off, w, 5120).starvationWait()).as("the guard off")
                .isGreaterThan(java.time.Duration.ofDays(365 * 100));
        assertThat(Replay.queueConfig(Replay.parse(new String[] {"--trace", "topology", "--starvation-wait", "120"}),
                w, 5120).starvationWait()).isEqualTo(java.time.Duration.ofHours(2));
        assertThat(o.taskGpus()).as("a node's GPUs by default").isNull();
        assertThat(o.oneTenant()).isFalse();
        assertThat(Replay.parse(new String[] {"--trace", "topology", "--task-gpus", "1"}).taskGpus()).isEqualTo(1);
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "topology", "--task-gpus", "0"}))
                .hasMessageContaining("--task-gpus must be >= 1");
        assertThatThrownBy(() -> Replay.parse(new String[] {"--trace", "topology", "--tenants", "two"}))
                .hasMessageContaining("--tenants: trace or one");
    }

    @Test
    void one_tenant_puts_every_job_in_one_queue_with_the_cluster_as_its_quota() throws Exception {
        assumeTrue(Files.isRegularFile(TRACES.resolve("philly/philly.csv")),
                "skipped: the shared Philly trace is not at " + TRACES.toAbsolutePath());
        Replay.Options trace = Replay.parse(new String[] {"--trace", "philly", "--max-jobs", "300", "--traces",
                TRACES.toString()});
        Replay.Options one = Replay.parse(new String[] {"--trace", "philly", "--max-jobs", "300", "--traces",
                TRACES.toString(), "--tenants", "one"});
        Workload byTrace = Replay.workload(trace);
        Workload merged = Replay.workload(one);

        assertThat(byTrace.tenantWeights()).hasSizeGreaterThan(3);
        assertThat(merged.jobs()).hasSameSizeAs(byTrace.jobs());
        assertThat(merged.jobs()).extracting(SimJob::tenant).containsOnly(Traces.ONE_TENANT);
        assertThat(merged.jobs()).extracting(SimJob::id, SimJob::gpus, SimJob::submitMillis, SimJob::durationMillis)
                .containsExactlyElementsOf(byTrace.jobs().stream().map(j -> org.assertj.core.groups.Tuple.tuple(
                        j.id(), j.gpus(), j.submitMillis(), j.durationMillis())).toList());
        assertThat(merged.tenantWeights()).containsOnlyKeys(Traces.ONE_TENANT);
        assertThat(Replay.queueConfig(one, merged, 16).queues()).singleElement()
                .satisfies(q -> assertThat(q.quotas().values().iterator().next().nominal()).isEqualTo(16_000L));
    }

    private static List<Simulation.Fault> faultsOf(Replay.Options o) {
        try {
            return Replay.faults(o);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
