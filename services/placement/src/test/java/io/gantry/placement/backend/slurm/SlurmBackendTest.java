package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.slurm.SlurmCommands.Tool;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The backend against an in-memory controller ({@link FakeSlurm}); the real one: SlurmBackendIntegrationTest. */
class SlurmBackendTest {
    @TempDir
    Path work;
    private final FakeSlurm slurm = new FakeSlurm();
    private final List<SlurmBackend> backends = new ArrayList<>();
    private final List<RunOutcome> outcomes = new ArrayList<>();

    private SlurmConfig config() {
        return SlurmConfig.defaults("gantry", work).withPollInterval(Duration.ofMillis(40))
                .withSubmit(3, Duration.ofMillis(20)).withGraceSeconds(1);
    }

    private SlurmBackend backend(SlurmConfig config) {
        SlurmBackend b = SlurmBackend.connect(config, slurm, Clock.systemUTC());
        backends.add(b);
        return b;
    }

    /** A backend whose placement has restored (no live runs before it). */
    private SlurmBackend started() {
        SlurmBackend b = backend(config());
        b.adopt(List.of(), Instant.now());
        return b;
    }

    @AfterEach
    void close() {
        slurm.answer();
        backends.forEach(SlurmBackend::close);
    }

    private static Allocation gang(String id, int replicas) {
        List<PlacedTask> tasks = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            tasks.add(new PlacedTask("train", r, "g" + (1 + r % 2), "H100", List.of(0, 1), 1000, 1024));
        }
        return new Allocation(id, "job-" + id, "vision", 1, tasks, Instant.now(), "slurm");
    }

    private static RunPlan plan() {
        return new RunPlan(Map.of("train", new RunPlan.Task(List.of("python", "train.py"), null)), "secret-token", null);
    }

    private RunOutcome awaitOutcome(SlurmBackend b) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            outcomes.addAll(b.poll(Instant.now()));
            return !outcomes.isEmpty();
        });
        return outcomes.remove(0);
    }

    @Test
    void aGangIsOneJobPerReplicaPinnedToItsNodeAndSucceedsWhenAllComplete() {
        SlurmBackend b = started();
        assertThat(b.start(gang("a1", 2), plan(), Instant.now())).isEmpty();
        await().until(() -> slurm.submitted().size() == 2);
        List<FakeSlurm.Job> jobs = slurm.submitted();
        assertThat(jobs).extracting(FakeSlurm.Job::name).containsExactly("gantry-a1-0", "gantry-a1-1");
        assertThat(jobs).extracting(FakeSlurm.Job::node).containsExactly("g1", "g2");
        assertThat(jobs).extracting(FakeSlurm.Job::gres).containsOnly("gpu:h100:2");
        assertThat(jobs.get(0).script()).contains("export CUDA_VISIBLE_DEVICES='0,1'", "exec 'python' 'train.py'");
        // the token goes on stdin, never on a command line
        assertThat(slurm.calls).noneMatch(c -> String.join(" ", c).contains("secret-token"));

        slurm.set(jobs.get(0).id(), "COMPLETED", "0:0", "None");
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
                .until(() -> b.poll(Instant.now()).isEmpty());
        slurm.set(jobs.get(1).id(), "COMPLETED", "0:0", "None");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.allocationId()).isEqualTo("a1");
        assertThat(o.result().succeeded()).isTrue();
    }

    @Test
    void theFirstReplicaToFailFailsTheRunWithItsExitCodeAndTheOthersAreCancelled() {
        SlurmBackend b = started();
        b.start(gang("a2", 2), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 2);
        String first = slurm.submitted().get(0).id();
        String second = slurm.submitted().get(1).id();
        slurm.set(second, "FAILED", "3:0", "NonZeroExitCode");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().exitCode()).isEqualTo(3);
        assertThat(o.result().message()).isEqualTo("task train replica 1: Slurm job " + second
                + " FAILED (NonZeroExitCode) on g2, exit 3");
        await().until(() -> "CANCELLED".equals(slurm.state(first)));
        // cancelled once, as part of the failed gang, not again as an orphan of the next polls
        long polls = slurm.count(Tool.SQUEUE);
        await().until(() -> slurm.count(Tool.SQUEUE) >= polls + 2);
        assertThat(slurm.scancels).filteredOn(c -> c.contains(first)).hasSize(1);
    }

    @Test
    void aJobKilledByASignalFailsWith128PlusTheSignal() {
        SlurmBackend b = started();
        b.start(gang("a3", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        slurm.set(slurm.submitted().get(0).id(), "FAILED", "0:9", "NonZeroExitCode");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().exitCode()).isEqualTo(137);
        assertThat(o.result().lost()).isFalse();
        assertThat(o.result().message()).contains("FAILED (NonZeroExitCode) on g1, killed by signal 9");
    }

    @Test
    void aJobWhoseNodeFailedUnderSlurmIsLostToTheInfrastructureNotFailed() {
        SlurmBackend b = started();
        b.start(gang("a3n", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        slurm.set(slurm.submitted().get(0).id(), "NODE_FAIL", "0:9", "NodeDown");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().lost()).as("requeued by recovery from its checkpoint, its retries untouched").isTrue();
        assertThat(o.result().message()).contains("NODE_FAIL (NodeDown) on g1");
    }

    @Test
    void sbatchFailuresAreRetriedWithBackoffThenReportedAsARunFailureWithTheReason() {
        SlurmBackend b = started();
        slurm.failNext(Tool.SBATCH, 5, "sbatch: error: Batch job submission failed: Invalid account");
        b.start(gang("a4", 1), plan(), Instant.now());
        RunOutcome o = awaitOutcome(b);
        assertThat(slurm.count(Tool.SBATCH)).isEqualTo(3);
        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().exitCode()).isNull();
        assertThat(o.result().message()).isEqualTo("task train replica 0: sbatch failed 3 times: sbatch exited with 1: "
                + "sbatch: error: Batch job submission failed: Invalid account");
    }

    @Test
    void aFailedSbatchThatSucceedsOnRetryRunsTheTask() {
        SlurmBackend b = started();
        slurm.failNext(Tool.SBATCH, 1, "slurm_load_partitions: Unable to contact slurm controller");
        b.start(gang("a5", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        slurm.set(slurm.submitted().get(0).id(), "COMPLETED", "0:0", "None");
        assertThat(awaitOutcome(b).result().succeeded()).isTrue();
    }

    @Test
    void aTimedOutSbatchThatWentThroughIsFoundByNameAndNotSubmittedTwice() {
        SlurmBackend b = started();
        slurm.submitThenTimeOut = true;
        b.start(gang("a6", 1), plan(), Instant.now());
        await().until(() -> slurm.count(Tool.SQUEUE) > 0 && slurm.calls.stream()
                .anyMatch(c -> c.contains("-n") && c.contains("gantry-a6-0")));
        assertThat(slurm.submitted()).hasSize(1);
        slurm.set(slurm.submitted().get(0).id(), "COMPLETED", "0:0", "None");
        assertThat(awaitOutcome(b).result().succeeded()).isTrue();
        assertThat(slurm.count(Tool.SBATCH)).isEqualTo(1);
    }

    @Test
    void aJobThatDisappearsFromTheControllerIsAFailureNotAHang() {
        SlurmBackend b = started();
        b.start(gang("a7", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        String id = slurm.submitted().get(0).id();
        slurm.forget(id);
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().message()).isEqualTo("task train replica 0: Slurm job " + id
                + " disappeared (not in squeue, no accounting record)");
    }

    @Test
    void aJobThatLeftTheQueueIsReadFromAccountingWhenThereIsSome() {
        SlurmBackend b = started();
        slurm.accounting = true;
        b.start(gang("a8", 1), plan(), Instant.now());
        b.start(gang("a8b", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 2);
        String ok = slurm.submitted().get(0).id();
        String bad = slurm.submitted().get(1).id();
        slurm.set(ok, "COMPLETED", "0:0", "None");
        slurm.set(bad, "FAILED", "4:0", "NonZeroExitCode");
        slurm.forget(ok);
        slurm.forget(bad);
        RunOutcome first = awaitOutcome(b);
        RunOutcome second = awaitOutcome(b);
        RunOutcome a8 = first.allocationId().equals("a8") ? first : second;
        RunOutcome a8b = first.allocationId().equals("a8") ? second : first;
        assertThat(a8.result().succeeded()).isTrue();
        assertThat(a8b.result().exitCode()).isEqualTo(4);
        assertThat(a8b.result().message()).isEqualTo("task train replica 0: Slurm job " + bad + " FAILED on g1, exit 4");
    }

    @Test
    void aJobSlurmKeepsPendingPastTheTimeoutFailsTheRunWithSlurmsReason() {
        SlurmBackend b = backend(config().withPendingTimeout(Duration.ofMillis(300)));
        b.adopt(List.of(), Instant.now());
        b.start(gang("a9", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        String id = slurm.submitted().get(0).id();
        slurm.set(id, "PENDING", "0:0", "Resources");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().message()).startsWith("task train replica 0: Slurm kept job " + id + " pending for ")
                .endsWith("(Resources)");
    }

    @Test
    void aControllerThatDoesNotAnswerNeverBlocksTheLoopThread() {
        SlurmBackend b = started();
        await().until(() -> b.heartbeating("g1"));
        slurm.hang();
        assertTimeoutPreemptively(Duration.ofSeconds(1), () -> {
            assertThat(b.start(gang("a10", 2), plan(), Instant.now())).isEmpty();
            b.terminate("a10");
            b.poll(Instant.now());
            b.stop("a10");
            b.adopt(List.of(), Instant.now());
            // the last known node states stand while the controller is silent
            assertThat(b.heartbeating("g1")).isTrue();
        });
        slurm.answer();
    }

    @Test
    void aDrainedOrDownNodeStopsHeartbeatingAndComesBackWhenResumed() {
        SlurmBackend b = started();
        assertThat(b.nodes()).extracting(n -> n.nodeId()).containsExactly("g1", "g2");
        assertThat(b.heartbeating("g1")).isTrue();
        slurm.nodes = slurm.nodes.replace("Gres=gpu:h100:8 State=IDLE Partitions=gantry\nNodeName=g2",
                "Gres=gpu:h100:8 State=IDLE+DRAIN Partitions=gantry\nNodeName=g2");
        await().until(() -> !b.heartbeating("g1"));
        assertThat(b.heartbeating("g2")).isTrue();
        slurm.nodes = slurm.nodes.replace("State=IDLE+DRAIN", "State=DOWN+NOT_RESPONDING");
        await().during(Duration.ofMillis(150)).until(() -> !b.heartbeating("g1"));
        slurm.nodes = slurm.nodes.replace("State=DOWN+NOT_RESPONDING", "State=IDLE");
        await().until(() -> b.heartbeating("g1"));
        assertThat(b.heartbeating("unknown")).isFalse();
    }

    @Test
    void aRestartedPlacementAdoptsItsLiveJobsWithoutSubmittingAgainAndCancelsOrphans() {
        SlurmBackend first = started();
        Allocation live = gang("a11", 2);
        Allocation gone = gang("a12", 1);
        first.start(live, plan(), Instant.now());
        first.start(gone, plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 3);
        first.close();
        long sbatches = slurm.count(Tool.SBATCH);

        SlurmBackend second = backend(config());
        assertThat(second.adopt(List.of(new ExecutionBackend.LiveRun(live, null)), Instant.now())).isEmpty();
        String orphan = slurm.submitted().get(2).id();
        await().until(() -> "CANCELLED".equals(slurm.state(orphan)));
        assertThat(slurm.count(Tool.SBATCH)).isEqualTo(sbatches);
        assertThat(slurm.state(slurm.submitted().get(0).id())).isEqualTo("RUNNING");

        slurm.set(slurm.submitted().get(0).id(), "COMPLETED", "0:0", "None");
        slurm.set(slurm.submitted().get(1).id(), "FAILED", "2:0", "NonZeroExitCode");
        RunOutcome o = awaitOutcome(second);
        assertThat(o.allocationId()).isEqualTo("a11");
        assertThat(o.result().exitCode()).isEqualTo(2);
        assertThat(second.submissions()).isZero();
    }

    @Test
    void aLiveAllocationWithoutASlurmJobFailsAfterARestart() {
        SlurmBackend b = backend(config());
        b.adopt(List.of(new ExecutionBackend.LiveRun(gang("a13", 1), null)), Instant.now());
        RunOutcome o = awaitOutcome(b);
        assertThat(o.result().message()).isEqualTo("placement restarted; no Slurm job found for task train replica 0 "
                + "(never submitted, or forgotten by Slurm)");
    }

    @Test
    void aForeignJobOnAGantryNodeIsReportedAsCapacityTaken() {
        SlurmBackend b = started();
        String id = slurm.foreign("interactive", "debug", "g2", "gpu:h100:3");
        slurm.foreign("elsewhere", "debug", "x9", "gpu:h100:1");
        await().until(() -> !b.foreignJobs().isEmpty());
        assertThat(b.foreignJobs()).containsExactly(
                new SlurmBackend.ForeignJob(id, "gantry", "debug", List.of("g2"), 3));
        // what placement takes off the free count of g2
        assertThat(b.foreignLoad()).contains(Map.of("g2",
                new ForeignLoad(3, "Slurm job " + id + " of gantry (partition debug) (3 GPUs)")));
        slurm.set(id, "COMPLETED", "0:0", "None");
        await().until(() -> b.foreignJobs().isEmpty());
        assertThat(b.foreignLoad()).contains(Map.of());
        // never cancelled: it is not Gantry's
        assertThat(slurm.scancels).isEmpty();
    }

    @Test
    void untilAPollReadTheQueueTheForeignLoadIsUnknown() {
        SlurmBackend b = backend(config().withPollInterval(Duration.ofHours(1)));
        assertThat(b.foreignLoad()).isEmpty();
        b.refresh();
        assertThat(b.foreignLoad()).contains(Map.of());
    }

    @Test
    void aNodeAddedToThePartitionJoinsAndOneRemovedLeavesAndStopsHeartbeating() {
        SlurmBackend b = started();
        assertThat(b.nodes()).extracting(NodeSpec::nodeId).containsExactly("g1", "g2");
        slurm.nodes = "NodeName=g1 CPUTot=8 Sockets=1 RealMemory=64000 Gres=gpu:h100:8 State=IDLE Partitions=gantry\n"
                + "NodeName=g2 CPUTot=8 Sockets=1 RealMemory=64000 Gres=gpu:h100:8 State=IDLE Partitions=debug\n"
                + "NodeName=g3 CPUTot=16 Sockets=2 RealMemory=128000 Gres=gpu:a100:4 State=IDLE Partitions=gantry\n";
        await().until(() -> b.nodes().stream().map(NodeSpec::nodeId).toList().equals(List.of("g1", "g3")));
        assertThat(b.nodes().get(1).gpuCount("A100")).isEqualTo(4);
        assertThat(b.heartbeating("g3")).isTrue();
        assertThat(b.heartbeating("g2")).isFalse();
    }

    /** Until a whole poll has read the queue (a job is known started only once a poll saw it running). */
    private void awaitPoll() {
        long before = slurm.count(Tool.SQUEUE);
        await().until(() -> slurm.count(Tool.SQUEUE) >= before + 2);
    }

    @Test
    void aStopSendsSigtermThenAfterTheGraceSigkillAndReportsNothing() {
        SlurmBackend b = started();
        b.start(gang("a14", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        String id = slurm.submitted().get(0).id();
        awaitPoll();
        b.stop("a14");
        await().until(() -> slurm.scancels.contains(List.of("--full", "--signal=TERM", id)));
        assertThat(slurm.state(id)).isEqualTo("RUNNING");
        await().atMost(Duration.ofSeconds(3)).until(() -> slurm.scancels.contains(List.of("--full", "--signal=KILL", id)));
        assertThat(slurm.state(id)).isEqualTo("CANCELLED");
        await().during(Duration.ofMillis(200)).until(() -> b.poll(Instant.now()).isEmpty());
    }

    @Test
    void aJobSlurmKeepsPendingIsCancelledAtOnceOnAStopAsSlurmRefusesToSignalIt() {
        SlurmBackend b = started();
        b.start(gang("a18", 2), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 2);
        String pending = slurm.submitted().get(0).id();
        String running = slurm.submitted().get(1).id();
        slurm.set(pending, "PENDING", "0:0", "Resources");
        awaitPoll();
        b.stop("a18");
        await().until(() -> "CANCELLED".equals(slurm.state(pending)));
        // the running one gets its grace period; the pending one is never signalled (scancel would hang)
        assertThat(slurm.state(running)).isEqualTo("RUNNING");
        assertThat(slurm.scancels).noneMatch(c -> c.contains(pending) && c.contains("--signal=TERM"))
                .contains(List.of("--full", "--signal=TERM", running));
        await().atMost(Duration.ofSeconds(3)).until(() -> "CANCELLED".equals(slurm.state(running)));
    }

    @Test
    void aPreemptionSendsSigtermAndTheTasksExitIsItsOutcome() {
        SlurmBackend b = started();
        b.start(gang("a15", 1), plan(), Instant.now());
        await().until(() -> slurm.submitted().size() == 1);
        String id = slurm.submitted().get(0).id();
        await().until(() -> slurm.count(Tool.SQUEUE) > 2);
        b.terminate("a15");
        await().until(() -> slurm.scancels.contains(List.of("--full", "--signal=TERM", id)));
        slurm.set(id, "FAILED", "143:0", "NonZeroExitCode");
        assertThat(awaitOutcome(b).result().exitCode()).isEqualTo(143);
    }

    @Test
    void aTaskWithoutACommandOrWithAGpuShareFailsAtOnceWithoutSbatch() {
        SlurmBackend b = started();
        RunPlan none = new RunPlan(Map.of());
        assertThat(b.start(gang("a16", 1), none, Instant.now())).get()
                .satisfies(o -> assertThat(o.result().message()).isEqualTo("task train has no command to run"));
        Allocation shared = new Allocation("a17", "job-a17", "vision", 1, List.of(new PlacedTask("train", 0, "g1",
                "H100", List.of(), 1000, 1024, List.of(), null,
                List.of(new io.gantry.placement.core.GpuShare(0, 500, 0, null, null)))), Instant.now(), "slurm");
        assertThat(b.start(shared, plan(), Instant.now())).get().satisfies(o -> assertThat(o.result().message())
                .isEqualTo("task train asks for a share of a GPU; the slurm backend runs whole GPUs only"));
        assertThat(slurm.count(Tool.SBATCH)).isZero();
    }

    @Test
    void aPartitionAnyoneMaySubmitToIsRefusedAtStartUnlessAllowed() {
        slurm.partitions = "PartitionName=gantry AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Nodes=g[1-2]\n";
        assertThatThrownBy(() -> backend(config())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Slurm partition gantry lets anyone submit")
                .hasMessageContaining("gantry.placement.slurm.require-restricted-partition=false");
        slurm.partitions = "PartitionName=batch AllowGroups=ALL Nodes=g1\n";
        assertThatThrownBy(() -> backend(config())).hasMessage("Slurm partition gantry does not exist (partitions: "
                + "[batch])");
    }

    @Test
    void aControllerThatDoesNotAnswerAtStartStopsTheStartWithTheReason() {
        slurm.failNext(Tool.SCONTROL, 100, "slurm_load_node: Unable to contact slurm controller (connect failure)");
        SlurmConfig quick = new SlurmConfig("gantry", "", Duration.ofMillis(40), Duration.ofSeconds(1), 1, 3,
                Duration.ofMillis(20), Duration.ZERO, "gpu", Map.of(), work, true, true, "rack_", "spine_", "",
                Duration.ZERO);
        assertThatThrownBy(() -> backend(quick)).isInstanceOf(IllegalStateException.class)
                .hasMessage("the Slurm controller did not answer within 0 s: scontrol exited with 1: "
                        + "slurm_load_node: Unable to contact slurm controller (connect failure)");
    }
}
