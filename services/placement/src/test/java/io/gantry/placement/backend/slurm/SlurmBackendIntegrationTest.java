package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.slurm.SlurmCommands.Tool;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Slurm backend against a real slurmctld + slurmd + munged on this host ({@link TestSlurm}, ports 16817/16818):
 * one node, this host, with 8 fake H100 GPUs as gres. Skipped with the reason where that cannot run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SlurmBackendIntegrationTest {
    private static final Path DIR = Path.of("/tmp/gantry-slurm-it");

    private TestSlurm controller;
    private SlurmCommands slurm;
    private SlurmConfig config;
    private String node;
    private final List<SlurmBackend> backends = new ArrayList<>();

    @BeforeAll
    void startSlurm() throws Exception {
        controller = TestSlurm.start(DIR, 16817, 16818);
        node = controller.node;
        config = SlurmConfig.defaults("gantry", DIR.resolve("jobs")).withPollInterval(Duration.ofMillis(300))
                .withSubmit(2, Duration.ofMillis(200)).withGraceSeconds(2);
        slurm = controller.commands;
    }

    /** One placement at a time, as in production: another backend would cancel this one's jobs as orphans. */
    @AfterEach
    void closeBackends() {
        backends.forEach(SlurmBackend::close);
        backends.clear();
    }

    @AfterAll
    void stopSlurm() throws Exception {
        if (controller != null) {
            controller.stop();
        }
    }

    private SlurmBackend backend() {
        SlurmBackend b = SlurmBackend.connect(config, slurm, Clock.systemUTC());
        backends.add(b);
        return b;
    }

    private Allocation allocation(String task, List<List<Integer>> gpusPerReplica) {
        List<PlacedTask> tasks = new ArrayList<>();
        for (int r = 0; r < gpusPerReplica.size(); r++) {
            tasks.add(new PlacedTask(task, r, node, "H100", gpusPerReplica.get(r), 1000, 64));
        }
        String id = UUID.randomUUID().toString();
        // a job id of its own: logs of an earlier run of this test (same directory) must not count
        return new Allocation(id, "job-" + task + "-" + id.substring(0, 8), "vision", 1, tasks, Instant.now(), "slurm");
    }

    private static RunPlan plan(String task, String shell) {
        return new RunPlan(Map.of(task, new RunPlan.Task(List.of("sh", "-c", shell), null)), "run-token", null);
    }

    private static RunOutcome awaitOutcome(SlurmBackend b, Duration within) {
        List<RunOutcome> seen = new ArrayList<>();
        await().atMost(within).pollInterval(Duration.ofMillis(100)).until(() -> {
            seen.addAll(b.poll(Instant.now()));
            return !seen.isEmpty();
        });
        return seen.get(0);
    }

    private List<SlurmOutput.QueuedJob> squeue() throws SlurmCommands.SlurmCommandException {
        return SlurmOutput.queue(slurm.run(Tool.SQUEUE, List.of("-h", "-t", "all", "-o", SlurmOutput.SQUEUE_FORMAT),
                null));
    }

    private List<SlurmOutput.QueuedJob> jobsOf(Allocation a) throws SlurmCommands.SlurmCommandException {
        return squeue().stream().filter(q -> q.name().startsWith("gantry-" + a.allocationId() + "-")).toList();
    }

    @Test
    @Order(1)
    void theNodeIsReadFromScontrolWithItsEightGpusRackAndSpine() {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        assertThat(b.nodes()).hasSize(1);
        NodeSpec n = b.nodes().get(0);
        assertThat(n.nodeId()).isEqualTo(node);
        assertThat(n.gpus()).hasSize(8).allSatisfy(g -> assertThat(g.model()).isEqualTo("H100"));
        assertThat(n.rack()).isEqualTo("r1");
        assertThat(n.spine()).isEqualTo("s1");
        assertThat(n.sockets()).isEqualTo(2);
        assertThat(b.heartbeating(node)).isTrue();
    }

    @Test
    @Order(2)
    void aGangRunsAsSlurmJobsThatSqueueShowsAndSucceedsWithTheExactGpus() throws Exception {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        Allocation a = allocation("train", List.of(List.of(0, 1), List.of(2, 3)));
        assertThat(b.start(a, plan("train", "echo gpus=$CUDA_VISIBLE_DEVICES token=${GANTRY_RUN_TOKEN:+set}; sleep 3"),
                Instant.now())).isEmpty();
        await().atMost(Duration.ofSeconds(20)).until(() -> jobsOf(a).stream()
                .filter(q -> q.state().equals("RUNNING")).count() == 2);
        assertThat(jobsOf(a)).allSatisfy(q -> {
            assertThat(q.partition()).isEqualTo("gantry");
            assertThat(q.nodes()).containsExactly(node);
            assertThat(q.gres()).isEqualTo("gres:gpu:h100:2");
        });
        RunOutcome o = awaitOutcome(b, Duration.ofSeconds(30));
        assertThat(o.allocationId()).isEqualTo(a.allocationId());
        assertThat(o.result().succeeded()).as(o.result().message()).isTrue();
        Path log = SlurmSubmission.logFile(config.workDir(), a, a.placements().get(1));
        assertThat(Files.readString(log)).contains("gpus=2,3 token=set");
    }

    @Test
    @Order(2)
    void aTaskRunsInItsWorkingDirectoryWithItsVariablesAndTheGangsRankAndRendezvous() throws Exception {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        Allocation a = allocation("env", List.of(List.of(0), List.of(1)));
        Path wd = Files.createDirectories(DIR.resolve("wd"));
        RunPlan plan = new RunPlan(Map.of("env", new RunPlan.Task(List.of("sh", "-c",
                "echo foo=$FOO pwd=$(pwd) rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT"), null,
                Map.of("FOO", "it's here"), wd.toString(), null, List.of())), "run-token", null);

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        RunOutcome o = awaitOutcome(b, Duration.ofSeconds(30));

        assertThat(o.result().succeeded()).as(o.result().message()).isTrue();
        String master = "master=" + node + ":" + io.gantry.placement.backend.GangEnvironment.derivedPort(a.allocationId());
        assertThat(Files.readString(SlurmSubmission.logFile(config.workDir(), a, a.placements().get(0))))
                .contains("foo=it's here pwd=" + wd + " rank=0 world=2 " + master);
        assertThat(Files.readString(SlurmSubmission.logFile(config.workDir(), a, a.placements().get(1))))
                .contains("rank=1 world=2 " + master);
    }

    @Test
    @Order(3)
    void aFailingTaskIsReportedWithItsExitCode() {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        Allocation a = allocation("fails", List.of(List.of(4)));
        b.start(a, plan("fails", "echo failing; exit 7"), Instant.now());
        RunOutcome o = awaitOutcome(b, Duration.ofSeconds(30));
        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().exitCode()).isEqualTo(7);
        assertThat(o.result().message()).contains("FAILED", "exit 7");
    }

    @Test
    @Order(4)
    void aCancelSendsSigtermThenKillsAfterTheGraceAndReportsNothing() throws Exception {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        Allocation a = allocation("stubborn", List.of(List.of(5)));
        b.start(a, plan("stubborn", "trap 'echo got-term' TERM; echo started; while true; do sleep 0.2; done"),
                Instant.now());
        Path log = SlurmSubmission.logFile(config.workDir(), a, a.placements().get(0));
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(log) && Files.readString(log).contains("started"));
        Instant stoppedAt = Instant.now();
        b.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.readString(log).contains("got-term"));
        // the task ignores SIGTERM: it still runs during the grace period, then SIGKILL ends it
        assertThat(jobsOf(a).get(0).state()).isEqualTo("RUNNING");
        await().atMost(Duration.ofSeconds(20)).until(() -> SlurmOutput.terminal(jobsOf(a).get(0).state()));
        assertThat(Duration.between(stoppedAt, Instant.now())).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(b.poll(Instant.now())).isEmpty();
    }

    @Test
    @Order(5)
    void aRestartedPlacementAdoptsTheLiveRunWithoutASecondSbatch() throws Exception {
        SlurmBackend first = backend();
        first.adopt(List.of(), Instant.now());
        Allocation a = allocation("long", List.of(List.of(6, 7)));
        first.start(a, plan("long", "sleep 4; echo done"), Instant.now());
        await().atMost(Duration.ofSeconds(20)).until(() -> jobsOf(a).stream().anyMatch(q -> q.state().equals("RUNNING")));
        first.close();

        SlurmBackend second = backend();
        assertThat(second.adopt(List.of(new ExecutionBackend.LiveRun(a, null)), Instant.now())).isEmpty();
        RunOutcome o = awaitOutcome(second, Duration.ofSeconds(30));
        assertThat(o.allocationId()).isEqualTo(a.allocationId());
        assertThat(o.result().succeeded()).as(o.result().message()).isTrue();
        assertThat(second.submissions()).isZero();
        assertThat(jobsOf(a)).hasSize(1);
    }

    @Test
    @Order(6)
    void aDrainedNodeStopsHeartbeatingAndADownNodeFailsItsRun() throws Exception {
        SlurmBackend b = backend();
        b.adopt(List.of(), Instant.now());
        Allocation a = allocation("victim", List.of(List.of(0)));
        b.start(a, plan("victim", "sleep 60"), Instant.now());
        await().atMost(Duration.ofSeconds(20)).until(() -> jobsOf(a).stream().anyMatch(q -> q.state().equals("RUNNING")));
        try {
            slurm.run(Tool.SCONTROL, List.of("update", "nodename=" + node, "state=drain", "reason=gantry-test"), null);
            await().atMost(Duration.ofSeconds(10)).until(() -> !b.heartbeating(node));
            slurm.run(Tool.SCONTROL, List.of("update", "nodename=" + node, "state=down", "reason=gantry-test"), null);
            RunOutcome o = awaitOutcome(b, Duration.ofSeconds(30));
            assertThat(o.result().succeeded()).isFalse();
            assertThat(o.result().lost()).isTrue();
            assertThat(o.result().message()).contains("NODE_FAIL");
        } finally {
            slurm.run(Tool.SCONTROL, List.of("update", "nodename=" + node, "state=resume"), null);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> b.heartbeating(node));
    }
}
