package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/** Preemption with a grace period, time limits and the free capacity every release reports. */
class PreemptionAndTimeLimitTest {

    /** A started run of job j (attempt 1, one 8-GPU task) on one H100 node. */
    private static Fixtures.Cluster running(Fixtures.GangBuilder gang) {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = cluster.granted(gang);
        cluster.apply(cluster.state.runStarted(a.allocationId(), T0));
        return cluster;
    }

    /** Job j's started run, asked at T0+100 to stop within 30 s. */
    private static Fixtures.Cluster stopAskedAt100() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));
        c.apply(c.state.preempt("j", 1, 30, T0.plusSeconds(100)));
        return c;
    }

    private static Allocation live(Fixtures.Cluster c, String jobId) {
        return c.state.liveAllocation(jobId).orElseThrow();
    }

    @Test
    void aPreemptedRunIsReleasedPreemptedExactlyAtTheEndOfItsGracePeriod() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));
        Allocation a = live(c, "j");

        List<PlacementFact> asked = c.apply(c.state.preempt("j", 1, 30, T0.plusSeconds(100)));

        assertThat(asked).containsExactly(new PlacementFact.PreemptionRequested(a, T0.plusSeconds(100), T0.plusSeconds(130)));
        assertThat(c.state.expire(T0.plusSeconds(129))).as("not before the grace period ends").isEmpty();
        List<PlacementFact> facts = c.apply(c.state.expire(T0.plusSeconds(131)));
        assertThat(facts).as("no outcome, only the release, at the deadline itself")
                .containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.PREEMPTED, T0.plusSeconds(130)));
        assertThat(c.held()).isEmpty();
        assertThat(c.state.pendingDeadlines()).isZero();
    }

    @Test
    void aRunStoppedForIdlingIsReleasedIdleAtItsDeadlineOrWhenItsTasksExitOnSigterm() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));
        Allocation a = live(c, "j");
        c.apply(c.state.preempt("j", 1, 30, T0.plusSeconds(100), ReleaseCause.IDLE));
        assertThat(c.apply(c.state.expire(T0.plusSeconds(130))))
                .containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.IDLE, T0.plusSeconds(130)));

        Fixtures.Cluster d = running(aGang("k").task("w", 1, 8));
        Allocation b = live(d, "k");
        d.apply(d.state.preempt("k", 1, 30, T0.plusSeconds(100), ReleaseCause.IDLE));
        assertThat(d.apply(d.state.runEnded(b.allocationId(),
                RunResult.failed(143, "task w-0 exited with 143", T0.plusSeconds(104)))))
                .containsExactly(new PlacementFact.AllocationReleased(b, ReleaseCause.IDLE, T0.plusSeconds(104)));
    }

    @Test
    void aRunThatExitsZeroAfterItsStopNoticeWasStoppedNotDone() {
        // the guide's loop: on the notice, save a checkpoint, report it and exit 0
        Fixtures.Cluster c = stopAskedAt100();
        Allocation a = live(c, "j");

        List<PlacementFact> facts = c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(110))));

        assertThat(facts).as("released as the stop (requeued from its checkpoint), no success")
                .containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.PREEMPTED, T0.plusSeconds(110)));
        assertThat(c.state.expire(T0.plusSeconds(200))).as("the deadline went with the release").isEmpty();

        Fixtures.Cluster d = running(aGang("k").task("w", 1, 8));
        Allocation b = live(d, "k");
        d.apply(d.state.preempt("k", 1, 30, T0.plusSeconds(100), ReleaseCause.IDLE));
        assertThat(d.apply(d.state.runEnded(b.allocationId(), RunResult.succeeded(T0.plusSeconds(100)))))
                .as("at the notice's instant too, with the stop's own cause")
                .containsExactly(new PlacementFact.AllocationReleased(b, ReleaseCause.IDLE, T0.plusSeconds(100)));
    }

    static Stream<Arguments> ownSuccesses() {
        return Stream.of(
                Arguments.of(Named.of("finished before the notice, reported after it",
                        RunResult.succeeded(T0.plusSeconds(99)))),
                Arguments.of(Named.of("a simulated run's modelled end in the grace period (it never reads notices)",
                        RunResult.succeededOnItsOwn(T0.plusSeconds(110)))));
    }

    @ParameterizedTest(name = "a success {0} stands")
    @MethodSource("ownSuccesses")
    void aSuccessTheRunReachedOnItsOwnStandsWhileItsStopIsPending(RunResult result) {
        Fixtures.Cluster c = stopAskedAt100();
        Allocation a = live(c, "j");

        List<PlacementFact> facts = c.apply(c.state.runEnded(a.allocationId(), result));

        assertThat(facts).containsExactly(new PlacementFact.RunSucceeded(a, result.finishedAt()),
                new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_SUCCEEDED, result.finishedAt()));
    }

    @Test
    void aTaskExitingOnSigtermDuringTheGracePeriodIsPreemptedNotFailed() {
        Fixtures.Cluster c = stopAskedAt100();
        Allocation a = live(c, "j");

        List<PlacementFact> facts = c.apply(c.state.runEnded(a.allocationId(),
                RunResult.failed(143, "task w-0 exited with 143", T0.plusSeconds(104))));

        assertThat(facts).containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.PREEMPTED, T0.plusSeconds(104)));
    }

    static Stream<Arguments> ignoredPreemptions() {
        return Stream.of(
                Arguments.of(Named.of("a repeated JobPreempted (with another grace)",
                        (Function<ClusterState, List<PlacementFact>>) s -> s.preempt("j", 1, 5, T0.plusSeconds(101)))),
                Arguments.of(Named.of("a JobPreempted of another attempt",
                        (Function<ClusterState, List<PlacementFact>>) s -> s.preempt("j", 2, 30, T0.plusSeconds(101)))),
                Arguments.of(Named.of("a JobPreempted of an unknown job",
                        (Function<ClusterState, List<PlacementFact>>) s -> s.preempt("nope", 1, 30, T0.plusSeconds(101)))));
    }

    @ParameterizedTest(name = "{0} changes nothing")
    @MethodSource("ignoredPreemptions")
    void stalePreemptionsAreIgnored(Function<ClusterState, List<PlacementFact>> again) {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));
        c.apply(c.state.preempt("j", 1, 30, T0.plusSeconds(100)));

        assertThat(again.apply(c.state)).isEmpty();
        assertThat(c.state.stopDeadline(live(c, "j").allocationId())).contains(T0.plusSeconds(130));
    }

    @Test
    void aJobPreemptedAfterTheRunWasReleasedIsIgnored() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));
        Allocation a = live(c, "j");
        c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(50))));

        assertThat(c.state.preempt("j", 1, 30, T0.plusSeconds(60))).isEmpty();
    }

    @Test
    void theGracePeriodNeverCountsFromBeforeTheGrant() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8));

        assertThat(c.state.preempt("j", 1, 10, T0.minusSeconds(3600)))
                .containsExactly(new PlacementFact.PreemptionRequested(live(c, "j"), T0, T0.plusSeconds(10)));
    }

    @Test
    void aRunReachingItsTimeLimitFailsWithTimeLimitAndIsReleasedAtThatInstantNotBefore() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = c.granted(aGang("j").task("w", 1, 4).timeLimit(3600));
        assertThat(a.timeLimitSeconds()).isEqualTo(3600L);
        assertThat(c.state.expire(T0.plusSeconds(7200))).as("the limit counts from the start, not the grant").isEmpty();
        Instant started = T0.plusSeconds(5);
        c.apply(c.state.runStarted(a.allocationId(), started));

        assertThat(c.state.expire(started.plusSeconds(3599))).isEmpty();
        List<PlacementFact> facts = c.apply(c.state.expire(started.plusSeconds(3600).plusMillis(150)));

        Instant limit = started.plusSeconds(3600);
        assertThat(facts).containsExactly(
                new PlacementFact.RunFailed(a, null, "time limit 3600 s reached", limit, FailureCause.TIME_LIMIT),
                new PlacementFact.AllocationReleased(a, ReleaseCause.TIME_LIMIT, limit));
        assertThat(c.state.liveAllocations()).isEmpty();
    }

    @Test
    void aPreemptionDeadlineBeforeTheTimeLimitWinsAndOnlyOneReleaseIsDecided() {
        Fixtures.Cluster c = running(aGang("j").task("w", 1, 8).timeLimit(100));
        Allocation a = live(c, "j");
        c.apply(c.state.preempt("j", 1, 60, T0.plusSeconds(30)));

        assertThat(c.state.expire(T0.plusSeconds(500)))
                .containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.PREEMPTED, T0.plusSeconds(90)));
    }

    @Test
    void replayingTheFactsRebuildsPendingGracePeriodsAndTimeLimits() {
        Fixtures.Cluster live = Fixtures.Cluster.topology(anH100Node("n1"));
        List<PlacementFact> all = new ArrayList<>();
        live.state.nodes().forEach(n -> all.add(new PlacementFact.NodeRegistered(n)));
        all.addAll(live.dispatch(aGang("a").task("w", 1, 2).timeLimit(50)));
        all.addAll(live.apply(live.state.runStarted(live(live, "a").allocationId(), T0)));
        all.addAll(live.dispatch(aGang("b").task("w", 1, 2)));
        all.addAll(live.apply(live.state.preempt("b", 1, 20, T0.plusSeconds(10))));

        ClusterState restored = new ClusterState("simulated", new TopologyPlacer());
        all.forEach(restored::replay);

        assertThat(restored.expire(T0.plusSeconds(100))).isEqualTo(live.state.expire(T0.plusSeconds(100)))
                .extracting(f -> f.getClass().getSimpleName() + (f instanceof PlacementFact.AllocationReleased r ? " " + r.reason() : ""))
                .containsExactly("AllocationReleased PREEMPTED", "RunFailed", "AllocationReleased TIME_LIMIT");
    }

    @Test
    void everyReleaseKnowsTheFreeWholeGpusPerModelAndTheMostOnOneHealthyNode() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(
                aNode("h1").gpus(8, "H100"), aNode("h2").gpus(8, "H100"), aNode("a1").gpus(4, "A100"),
                aNode("mixed").gpus(2, "L4").gpus(2, "A100"), aNode("down").gpus(8, "T4"));
        c.fail("down");
        c.granted(aGang("big").task("w", 1, 8).model("H100"));
        Allocation small = c.granted(aGang("small").task("w", 1, 3).model("H100"));
        c.granted(aGang("a").task("w", 1, 3).model("A100"));

        c.apply(c.state.cancel("small", 1, T0));

        assertThat(small.placements().get(0).nodeId()).isEqualTo("h2");
        // nodesWithFree: index k = nodes with exactly k free GPUs of that model (h1 is full, h2 empty again)
        assertThat(c.state.freeCapacity())
                .usingRecursiveFieldByFieldElementComparatorIgnoringFields("largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(
                new FreeCapacity("A100", 3, 2, List.of(0, 1, 1), 1000),
                new FreeCapacity("H100", 8, 8, List.of(1, 0, 0, 0, 0, 0, 0, 0, 1), 1000),
                new FreeCapacity("L4", 2, 2, List.of(0, 0, 1), 1000));
    }

    @Test
    void freeCapacityFollowsGrantsFailuresAndRecoveries() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("h1").gpus(8, "H100"), aNode("h2").gpus(8, "H100"));
        c.granted(aGang("x").task("w", 1, 5));
        assertThat(c.state.freeCapacity()).usingRecursiveFieldByFieldElementComparatorIgnoringFields("nodesWithFree", "largestFreeMilli", "largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(new FreeCapacity("H100", 11, 8));

        c.fail("h2");
        assertThat(c.state.freeCapacity()).usingRecursiveFieldByFieldElementComparatorIgnoringFields("nodesWithFree", "largestFreeMilli", "largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(new FreeCapacity("H100", 3, 3));
        c.apply(c.state.nodeRecovered("h2"));
        assertThat(c.state.freeCapacity()).usingRecursiveFieldByFieldElementComparatorIgnoringFields("nodesWithFree", "largestFreeMilli", "largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(new FreeCapacity("H100", 11, 8));
    }
}
