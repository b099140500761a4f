package io.gantry.placement.backend;

import io.gantry.testkit.MutableClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.RunResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SimulatedBackendTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private static Allocation allocation(String jobId, Instant grantedAt, String... nodes) {
        List<PlacedTask> tasks = new java.util.ArrayList<>();
        for (int i = 0; i < nodes.length; i++) {
            tasks.add(new PlacedTask(i == 0 ? "main" : "worker", i, nodes[i], "H100", List.of(0, 1), 1000, 1024));
        }
        return new Allocation("alloc-" + jobId, jobId, "vision", 1, tasks, grantedAt, SimulatedBackend.NAME);
    }

    private static RunPlan plan(Long main, Long worker) {
        return new RunPlan(Map.of("main", new RunPlan.Task(List.of("train"), main),
                "worker", new RunPlan.Task(List.of("train"), worker)));
    }

    @Test
    void aRunEndsExactlyAtGrantedAtPlusTheLongestTasksRunSecondsHoweverLateItIsPolled() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("j", T0, "sim-0", "sim-1");
        backend.start(a, plan(30L, 90L), T0);

        assertThat(backend.poll(T0.plusSeconds(89))).isEmpty();
        List<RunOutcome> outcomes = backend.poll(T0.plusSeconds(95));

        assertThat(outcomes).containsExactly(new RunOutcome(a.allocationId(), RunResult.succeededOnItsOwn(T0.plusSeconds(90))));
        assertThat(backend.poll(T0.plusSeconds(200))).as("reported once").isEmpty();
    }

    @Test
    void underASpeedUpTheRunEndsAfterRunSecondsOfVirtualTime() {
        MutableClock wall = new MutableClock(T0);
        VirtualClock clock = new VirtualClock(wall, 120);
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Instant grantedAt = clock.instant();
        Allocation a = allocation("j", grantedAt, "sim-0");
        backend.start(a, plan(3600L, null), grantedAt);

        wall.advance(Duration.ofSeconds(29));
        assertThat(backend.poll(clock.instant())).isEmpty();
        wall.advance(Duration.ofSeconds(1)); // 30 wall seconds = one virtual hour

        assertThat(backend.poll(clock.instant())).extracting(o -> o.result().finishedAt())
                .containsExactly(grantedAt.plusSeconds(3600));
    }

    @Test
    void aTaskWithoutRunSecondsRunsForTheDefaultRunTimeOfOneMinute() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("j", T0, "sim-0", "sim-1");
        backend.start(a, plan(null, null), T0);

        assertThat(backend.poll(T0.plusSeconds(59))).isEmpty();
        assertThat(backend.poll(T0.plusSeconds(3600)))
                .containsExactly(new RunOutcome(a.allocationId(), RunResult.succeededOnItsOwn(T0.plusSeconds(60))));
    }

    @Test
    void aTaskWithoutRunSecondsNextToALongerOneEndsWithTheLongerOne() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("j", T0, "sim-0", "sim-1");
        backend.start(a, plan(null, 90L), T0);

        assertThat(backend.poll(T0.plusSeconds(3600))).extracting(o -> o.result().finishedAt())
                .containsExactly(T0.plusSeconds(90));
    }

    @Test
    void runSecondsTooLargeForAnyClockRunUntilStoppedAndNegativeOnesEndAtOnce() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation huge = allocation("huge", T0, "sim-0", "sim-1");
        Allocation negative = allocation("negative", T0, "sim-2");

        backend.start(huge, plan(Long.MAX_VALUE, 100_000_000_000_000_000L), T0);
        backend.start(negative, plan(Long.MIN_VALUE, null), T0);

        assertThat(backend.poll(T0.plus(Duration.ofDays(365L * 10_000))))
                .containsExactly(new RunOutcome(negative.allocationId(), RunResult.succeededOnItsOwn(T0)));
        assertThat(backend.running()).containsExactly(huge.allocationId());
    }

    @Test
    void aConfiguredDefaultRunTimeAppliesToTasksWithoutRunSeconds() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster(), 5);
        Allocation a = allocation("j", T0, "sim-0");
        backend.start(a, plan(null, null), T0);

        assertThat(backend.poll(T0.plusSeconds(100))).extracting(o -> o.result().finishedAt())
                .containsExactly(T0.plusSeconds(5));
    }

    @Test
    void withADefaultRunTimeOfZeroATaskWithoutRunSecondsRunsUntilStopped() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster(), 0);
        Allocation a = allocation("j", T0, "sim-0", "sim-1");
        backend.start(a, plan(10L, null), T0);

        assertThat(backend.poll(T0.plus(Duration.ofDays(365)))).isEmpty();
        backend.stop(a.allocationId());
        assertThat(backend.running()).isEmpty();
    }

    @Test
    void aFailedNodeStopsHeartbeatingAndItsRunsNeverFinishUntilRevived() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation onFailed = allocation("a", T0, "sim-1");
        Allocation elsewhere = allocation("b", T0, "sim-2");
        backend.start(onFailed, plan(10L, null), T0);
        backend.start(elsewhere, plan(10L, null), T0);

        backend.fail("sim-1");

        assertThat(backend.heartbeating("sim-1")).isFalse();
        assertThat(backend.heartbeating("sim-2")).isTrue();
        assertThat(backend.poll(T0.plusSeconds(60))).extracting(RunOutcome::allocationId)
                .containsExactly(elsewhere.allocationId());
        backend.revive("sim-1");
        assertThat(backend.heartbeating("sim-1")).isTrue();
        assertThat(backend.poll(T0.plusSeconds(61))).as("a revived run whose end passed ends at the next poll")
                .extracting(RunOutcome::allocationId).containsExactly(onFailed.allocationId());
    }

    @Test
    void itSaysWhenTheNextRunEndsSoAReplayCanJumpThere() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster(), 0);
        assertThat(backend.nextOutcomeAt()).as("nothing running").isEqualTo(Instant.MAX);
        backend.start(allocation("late", T0, "sim-0"), plan(300L, null), T0);
        backend.start(allocation("forever", T0, "sim-1"), plan(null, null), T0);
        backend.start(allocation("early", T0, "sim-2"), plan(30L, null), T0);

        assertThat(backend.nextOutcomeAt()).isEqualTo(T0.plusSeconds(30));
        backend.stop("alloc-early");
        assertThat(backend.nextOutcomeAt()).isEqualTo(T0.plusSeconds(300));
        assertThat(backend.poll(T0.plusSeconds(300))).hasSize(1);
        assertThat(backend.nextOutcomeAt()).as("the last run never ends by itself").isEqualTo(Instant.MAX);
    }

    @Test
    void aReplaysRunTimesInMillisecondsOverrideTheSpecsWholeSeconds() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster())
                .withRunTimes((a, plan) -> a.jobId().equals("traced") ? 1_250 : -1);
        backend.start(allocation("traced", T0, "sim-0"), plan(10L, null), T0);
        backend.start(allocation("spec", T0, "sim-1"), plan(10L, null), T0);

        assertThat(backend.poll(T0.plusSeconds(10))).extracting(o -> o.result().finishedAt())
                .containsExactly(T0.plusMillis(1_250), T0.plusSeconds(10));
    }

    @Test
    void aRunStoppedWhileItsNodeIsDownNeverEnds() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        backend.start(allocation("a", T0, "sim-1"), plan(10L, null), T0);
        backend.fail("sim-1");
        assertThat(backend.poll(T0.plusSeconds(20))).isEmpty();

        backend.stop("alloc-a");
        backend.revive("sim-1");

        assertThat(backend.poll(T0.plusSeconds(30))).isEmpty();
        assertThat(backend.running()).isEmpty();
    }

    @Test
    void afterARestartLiveRunsAreRecreatedAndEndAtTheSameInstant() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("j", T0, "sim-0");
        Allocation lostPlan = allocation("k", T0, "sim-1");

        List<RunOutcome> lost = backend.adopt(List.of(new ExecutionBackend.LiveRun(a, plan(45L, null)),
                new ExecutionBackend.LiveRun(lostPlan, null)), T0.plusSeconds(10));

        assertThat(lost).extracting(RunOutcome::allocationId).containsExactly(lostPlan.allocationId());
        assertThat(backend.poll(T0.plusSeconds(100))).containsExactly(
                new RunOutcome(a.allocationId(), RunResult.succeededOnItsOwn(T0.plusSeconds(45))));
    }

    @Test
    void underASuccessPolicyTheRunEndsWhenTheLeaderEndsEvenIfItsWorkersWouldRunForever() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster(), 0);
        Allocation a = allocation("mpi", T0, "sim-0", "sim-1", "sim-2");
        backend.start(a, plan(120L, null).withSuccessLeader("main"), T0);

        assertThat(backend.nextOutcomeAt()).isEqualTo(T0.plusSeconds(120));
        assertThat(backend.poll(T0.plusSeconds(119))).isEmpty();
        assertThat(backend.poll(T0.plusSeconds(121)))
                .containsExactly(new RunOutcome(a.allocationId(), RunResult.succeededOnItsOwn(T0.plusSeconds(120))));
        assertThat(backend.running()).doesNotContain(a.allocationId());
    }

    @Test
    void underASuccessPolicyALongerWorkerDoesNotDelayTheRunsEnd() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("mpi", T0, "sim-0", "sim-1");

        backend.start(a, plan(30L, 900L).withSuccessLeader("main"), T0);

        assertThat(backend.poll(T0.plusSeconds(3600))).extracting(o -> o.result().finishedAt())
                .containsExactly(T0.plusSeconds(30));
    }

    @Test
    void withoutASuccessPolicyAWorkerThatRunsForeverKeepsTheRunGoing() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster(), 0);
        Allocation a = allocation("forever", T0, "sim-0", "sim-1");

        backend.start(a, plan(120L, null), T0);

        assertThat(backend.nextOutcomeAt()).isEqualTo(Instant.MAX);
        assertThat(backend.poll(T0.plusSeconds(86_400))).isEmpty();
    }

    @Test
    void aSimulatedTaskWouldGetTheSameRankWorldSizeAndRendezvousAsOnARealBackend() {
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        Allocation a = allocation("ranks", T0, "sim-0", "sim-1");
        backend.start(a, new RunPlan(Map.of("main", new RunPlan.Task(List.of("train"), 60L),
                "worker", new RunPlan.Task(List.of("train"), 60L, Map.of("FOO", "bar", "RANK", "7"), null, null,
                        List.of()))), T0);

        Map<String, String> worker = backend.environment(a.allocationId(), "worker", 1);

        assertThat(worker).containsEntry("FOO", "bar").containsEntry("RANK", "1").containsEntry("WORLD_SIZE", "2")
                .containsEntry("GANTRY_RANK", "1").containsEntry("MASTER_ADDR", "sim-0")
                .containsEntry("MASTER_PORT", Integer.toString(GangEnvironment.derivedPort(a.allocationId())))
                .containsEntry("GANTRY_TASK", "worker");
        assertThat(backend.environment(a.allocationId(), "main", 0)).containsEntry("RANK", "0");
        assertThat(backend.environment("no-such-run", "main", 0)).isEmpty();
    }
}
