package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Capacity reservations and drain, cordon, RDMA NICs and the per-job placement policy (issue #5 items 7, 8, 1, 4). */
class ReservationAndCordonTest {

    /** Grants {@code gang} and starts its run at {@code T0}. */
    private static Allocation run(Fixtures.Cluster c, Fixtures.GangBuilder gang) {
        Allocation a = c.granted(gang);
        c.apply(c.state.runStarted(a.allocationId(), T0));
        return a;
    }

    private static List<PlacementFact> dispatchAt(Fixtures.Cluster c, Fixtures.GangBuilder gang, Instant at) {
        return c.apply(c.state.dispatch(gang.build(), at));
    }

    private static PlacementFact.PlacementDeferred deferral(List<PlacementFact> facts) {
        assertThat(facts).hasSize(1).first().isInstanceOf(PlacementFact.PlacementDeferred.class);
        return (PlacementFact.PlacementDeferred) facts.get(0);
    }

    private static Allocation grant(List<PlacementFact> facts) {
        assertThat(facts).first().isInstanceOf(PlacementFact.AllocationGranted.class);
        return ((PlacementFact.AllocationGranted) facts.get(0)).allocation();
    }

    private static List<String> nodesOf(Allocation a) {
        return a.placements().stream().map(PlacedTask::nodeId).distinct().sorted().toList();
    }

    // ---------------------------------------------------------------- choosing what to drain

    record Case(String name, List<Fixtures.NodeBuilder> nodes, List<Fixtures.GangBuilder> running,
                Fixtures.GangBuilder starving, String domain, List<String> drained) {
    }

    static Stream<Arguments> drains() {
        return Stream.of(
                new Case("a reservation picks the node with the least GPU-seconds left to run",
                        List.of(anH100Node("n1"), anH100Node("n2"), anH100Node("n3")),
                        List.of(aGang("long").task("w", 1, 8).timeLimit(3600),
                                aGang("short").task("w", 1, 8).timeLimit(600),
                                aGang("open-a").task("w", 1, 4), aGang("open-b").task("w", 1, 4)),
                        aGang("R").task("w", 1, 8).required(TopologyLevel.NODE), "node n2", List.of("n2")),
                new Case("work without a time limit costs more than any time-limited work",
                        List.of(anH100Node("n1"), anH100Node("n2")),
                        List.of(aGang("open").task("w", 1, 1), aGang("limited").task("w", 1, 8).timeLimit(86_400)),
                        aGang("R").task("w", 1, 8), "node n2", List.of("n2")),
                new Case("on equal cost the domain with fewer allocations is drained",
                        List.of(anH100Node("n1"), anH100Node("n2")),
                        List.of(aGang("a").task("w", 1, 4).timeLimit(600), aGang("b").task("w", 1, 4).timeLimit(600),
                                aGang("c").task("w", 1, 8).timeLimit(600)),
                        aGang("R").task("w", 1, 8), "node n2", List.of("n2")),
                new Case("a rack-required gang drains the rack with the least work left",
                        List.of(anH100Node("n1").rack("P1", "S3"), anH100Node("n2").rack("P1", "S3"),
                                anH100Node("n3").rack("P1", "S4"), anH100Node("n4").rack("P1", "S4")),
                        List.of(aGang("a").task("w", 1, 8).timeLimit(720), aGang("b").task("w", 1, 8).timeLimit(100),
                                aGang("c").task("w", 1, 8).timeLimit(7200)),
                        aGang("R").task("w", 2, 8).required(TopologyLevel.RACK), "rack P1/S3", List.of("n1", "n2")),
                new Case("the GPU model of the gang decides which nodes can be drained",
                        List.of(aNode("a100").gpus(8, "A100"), anH100Node("h100")),
                        List.of(aGang("a").task("w", 1, 8).model("A100").timeLimit(60),
                                aGang("h").task("w", 1, 8).model("H100").timeLimit(6000)),
                        aGang("R").task("w", 1, 8).model("H100"), "node h100", List.of("h100"))
        ).map(c -> Arguments.of(Named.of(c.name(), c)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("drains")
    void aReservationDrainsTheCheapestDomainWhereTheGangWouldFit(Case c) {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(c.nodes().toArray(Fixtures.NodeBuilder[]::new));
        c.running().forEach(g -> run(cluster, g));

        cluster.apply(cluster.state.reserve(c.starving().build(), T0));

        CapacityReservation r = cluster.state.reservation("R").orElseThrow();
        assertThat(r.domain()).isEqualTo(c.domain());
        assertThat(r.nodes()).isEqualTo(c.drained());
        assertThat(cluster.state.reservations()).containsExactly(r);
    }

    @Test
    void aReservationIsANoOpWhenTheJobIsAlreadyReservedOrHoldsAnAllocation() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        run(c, aGang("a").task("w", 1, 8).timeLimit(600));
        c.apply(c.state.reserve(aGang("R").task("w", 2, 8).build(), T0));

        assertThat(c.state.reserve(aGang("R").task("w", 2, 8).build(), T0)).as("already reserved").isEmpty();
        assertThat(c.state.reserve(aGang("a").task("w", 1, 8).build(), T0)).as("holds an allocation").isEmpty();
        assertThat(c.state.reserve(aGang("huge").task("w", 3, 8).build(), T0)).as("fits nowhere even drained")
                .isEmpty();
    }

    // ---------------------------------------------------------------- bounded drains

    private static final GangRequest R8 = aGang("R").task("w", 1, 8).build();

    /** n1 runs "open" (4 GPUs, no time limit) and "limited" (4 GPUs, 10 min); an 8-GPU gang R reserved n1. */
    private static Fixtures.Cluster blockedByAnOpenRun() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        run(c, aGang("open").task("w", 1, 4));
        run(c, aGang("limited").task("w", 1, 4).timeLimit(600));
        c.apply(c.state.reserve(R8, T0, java.time.Duration.ofMinutes(30)));
        return c;
    }

    @Test
    void onlyTheFewestCheckpointedRunsTheGangNeedsGoneAreStoppedThoseLosingLeastFirst() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        run(c, aGang("one").task("w", 1, 1));
        run(c, aGang("three").task("w", 1, 3));
        run(c, aGang("four").task("w", 1, 4));
        c.state.checkpointCommitted("one", 1, T0);                   // at 600 s: 1 GPU x 600 s lost
        c.state.checkpointCommitted("three", 1, T0.plusSeconds(500)); //            3 GPUs x 100 s
        c.state.checkpointCommitted("four", 1, T0.plusSeconds(100));  //            4 GPUs x 500 s
        GangRequest two = aGang("R").task("w", 1, 2).build();
        c.apply(c.state.reserve(two, T0, java.time.Duration.ofMinutes(30)));
        assertThat(c.state.stopDrainBlockers(two, T0.plusSeconds(600)))
                .extracting(f -> ((PlacementFact.PreemptionRequested) f).allocation().jobId()).containsExactly("three");
    }

    @Test
    void aRunThatSavedNoCheckpointIsNeverStoppedAndWhileItIsInTheWayTheDrainWaits() {
        Fixtures.Cluster c = blockedByAnOpenRun();
        c.state.checkpointCommitted("open", 2, T0); // another attempt's: not this run's
        assertThat(c.state.stopDrainBlockers(R8, T0)).isEmpty();
        c.state.checkpointCommitted("open", 1, T0);
        assertThat(c.state.stopDrainBlockers(R8, T0.plusSeconds(60))).hasSize(1);
    }

    @Test
    void aRunThatWouldHoldADrainPastItsBoundIsStoppedAndOneEndingWithinItIsWaitedFor() {
        Fixtures.Cluster c = blockedByAnOpenRun();
        c.state.checkpointCommitted("open", 1, T0);
        assertThat(c.state.estimate("R", T0)).as("a run there has no time limit").isNull();

        List<PlacementFact> stops = c.apply(c.state.stopDrainBlockers(R8, T0));
        assertThat(stops).singleElement().isInstanceOfSatisfying(PlacementFact.PreemptionRequested.class, p -> {
            assertThat(p.allocation().jobId()).isEqualTo("open");
            assertThat(p.deadline()).isEqualTo(T0.plusSeconds(30));
            assertThat(p.why()).as("the run's preemption notice").startsWith("node ").contains(" drain for job R, ")
                    .contains("resumes from its last checkpoint");
        });
        assertThat(c.state.stopDrainBlockers(R8, T0.plusSeconds(5))).as("already being stopped").isEmpty();
        assertThat(c.state.estimate("R", T0)).as("the limited run's end").isEqualTo(T0.plusSeconds(600));

        List<PlacementFact> released = c.apply(c.state.expire(T0.plusSeconds(30)));
        assertThat(released).singleElement().isInstanceOfSatisfying(PlacementFact.AllocationReleased.class, r -> {
            assertThat(r.allocation().jobId()).isEqualTo("open");
            assertThat(r.reason()).isEqualTo(ReleaseCause.PREEMPTED);
        });
    }

    @Test
    void withoutABoundADrainOnlyWaitsAndWithAZeroBoundEveryRunThereIsStopped() {
        Fixtures.Cluster waiting = Fixtures.Cluster.topology(anH100Node("n1"));
        run(waiting, aGang("open").task("w", 1, 4));
        waiting.apply(waiting.state.reserve(R8, T0));
        assertThat(waiting.state.stopDrainBlockers(R8, T0)).isEmpty();

        Fixtures.Cluster eager = Fixtures.Cluster.topology(anH100Node("n1"));
        run(eager, aGang("open").task("w", 1, 4));
        run(eager, aGang("limited").task("w", 1, 4).timeLimit(600));
        eager.apply(eager.state.reserve(R8, T0, java.time.Duration.ZERO));
        eager.state.drainGrace(10);
        eager.state.checkpointCommitted("open", 1, T0);
        eager.state.checkpointCommitted("limited", 1, T0);
        assertThat(eager.state.stopDrainBlockers(R8, T0)).hasSize(2)
                .allSatisfy(f -> assertThat(((PlacementFact.PreemptionRequested) f).deadline())
                        .isEqualTo(T0.plusSeconds(10)));
        assertThat(eager.state.node("n1").orElseThrow().labels()).containsEntry(NodeSpec.RESERVED_MAX_DRAIN_LABEL, "0");
        eager.apply(eager.state.cancelReservation("R", 1));
        assertThat(eager.state.node("n1").orElseThrow().labels()).doesNotContainKey(NodeSpec.RESERVED_MAX_DRAIN_LABEL);
    }

    @Test
    void aReservationThatNoLongerCountsStopsNothing() {
        Fixtures.Cluster c = blockedByAnOpenRun();
        c.state.checkpointCommitted("open", 1, T0);
        c.apply(c.state.cancelReservation("R", 1));
        assertThat(c.state.stopDrainBlockers(R8, T0)).isEmpty();
    }

    // ---------------------------------------------------------------- while draining

    /** n1 runs a 4-GPU job with a 10 min limit; an 8-GPU gang R reserved n1 (the only node). */
    private static Fixtures.Cluster drainingOneNode() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        run(c, aGang("a").task("w", 1, 4).timeLimit(600));
        c.apply(c.state.reserve(aGang("R").task("w", 1, 8).build(), T0));
        return c;
    }

    @Test
    void backfillWhoseTimeLimitEndsBeforeTheDrainMayUseDrainedCapacity() {
        Fixtures.Cluster c = drainingOneNode();

        Allocation b = grant(dispatchAt(c, aGang("b").task("w", 1, 4).timeLimit(300), T0));

        assertThat(nodesOf(b)).containsExactly("n1");
        assertThat(c.state.estimate("R", T0)).as("the backfill ends before the drain: the estimate stands")
                .isEqualTo(T0.plusSeconds(600));
    }

    @Test
    void backfillThatWouldOutlastTheDrainIsDeferredReservedNamingTheJobAndTheEstimate() {
        Fixtures.Cluster c = drainingOneNode();

        PlacementFact.PlacementDeferred tooLong = deferral(dispatchAt(c, aGang("c").task("w", 1, 4).timeLimit(900), T0));
        PlacementFact.PlacementDeferred noLimit = deferral(dispatchAt(c, aGang("d").task("w", 1, 4), T0));

        assertThat(tooLong.reason()).isEqualTo(DeferralCause.RESERVED);
        assertThat(tooLong.message()).isEqualTo("would fit only on capacity reserved for job R (node n1, drain est. "
                + "10 min); a run whose time limit ends before the drain may use it");
        assertThat(noLimit.reason()).as("no time limit never backfills").isEqualTo(DeferralCause.RESERVED);
    }

    @Test
    void aDrainBlockedByARunWithoutATimeLimitHasAnUnknownEstimateAndTakesNoBackfill() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        run(c, aGang("open").task("w", 1, 4));
        c.apply(c.state.reserve(aGang("R").task("w", 1, 8).build(), T0));

        assertThat(c.state.estimate("R", T0)).isNull();
        assertThat(deferral(dispatchAt(c, aGang("b").task("w", 1, 1).timeLimit(60), T0)).reason())
                .isEqualTo(DeferralCause.RESERVED);
        assertThat(deferral(dispatchAt(c, aGang("R").task("w", 1, 8), T0)).message())
                .isEqualTo("reserved: waiting for node drain of node n1 (est. unknown: a run there has no time limit)");
    }

    @Test
    void theReservedJobIsDeferredDrainingThenGrantedThereAfterTheDrain() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1").rack("P1", "S3"),
                anH100Node("n2").rack("P1", "S4"), anH100Node("n3").rack("P1", "S4"), anH100Node("n4").rack("P1", "S3"));
        Allocation blocker = run(c, aGang("a").task("w", 1, 8).timeLimit(720)); // n1
        run(c, aGang("b").task("w", 1, 8)); // n2, no time limit
        run(c, aGang("c").task("w", 1, 8)); // n3, no time limit
        Fixtures.GangBuilder starving = aGang("R").task("w", 2, 8).required(TopologyLevel.RACK);
        c.apply(c.state.reserve(starving.build(), T0));
        assertThat(c.state.reservation("R").orElseThrow().nodes()).containsExactly("n1", "n4");

        PlacementFact.PlacementDeferred waiting = deferral(dispatchAt(c, starving, T0));
        assertThat(waiting.reason()).isEqualTo(DeferralCause.DRAINING);
        assertThat(waiting.message()).isEqualTo("reserved: waiting for node drain of rack P1/S3 (est. 12 min)");
        assertThat(deferral(dispatchAt(c, aGang("small").task("w", 1, 8), T0)).reason())
                .as("the free node of the drained rack is kept for R").isEqualTo(DeferralCause.RESERVED);

        List<PlacementFact> expired = c.apply(c.state.expire(T0.plusSeconds(720)));
        assertThat(expired).contains(new PlacementFact.AllocationReleased(blocker, ReleaseCause.TIME_LIMIT, T0.plusSeconds(720)));
        List<PlacementFact> facts = dispatchAt(c, starving, T0.plusSeconds(721));

        assertThat(nodesOf(grant(facts))).containsExactly("n1", "n4");
        assertThat(facts.subList(1, facts.size())).as("the grant ends the reservation on the nodes' registrations")
                .allSatisfy(f -> assertThat(((PlacementFact.NodeRegistered) f).node().reservedFor()).isNull());
        assertThat(c.state.reservations()).isEmpty();
    }

    @Test
    void theReservedJobIsGrantedAtOnceWhenItFitsSomewhereElse() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = run(c, aGang("a").task("w", 1, 8).timeLimit(600));
        run(c, aGang("b").task("w", 1, 8).timeLimit(6000));
        c.apply(c.state.reserve(aGang("R").task("w", 1, 8).build(), T0));
        c.apply(c.state.runEnded(c.state.liveAllocation("b").orElseThrow().allocationId(),
                RunResult.succeeded(T0.plusSeconds(10))));

        List<PlacementFact> facts = dispatchAt(c, aGang("R").task("w", 1, 8), T0.plusSeconds(10));

        assertThat(nodesOf(grant(facts))).containsExactly("n2");
        assertThat(c.state.reservations()).isEmpty();
        assertThat(c.state.liveAllocation("a")).contains(a);
    }

    static Stream<Arguments> endings() {
        return Stream.of(
                Arguments.of(Named.of("CapacityReservationCancelled ends it",
                        (java.util.function.Function<ClusterState, List<PlacementFact>>) s -> s.cancelReservation("R", 1))),
                Arguments.of(Named.of("cancelling the job ends it",
                        (java.util.function.Function<ClusterState, List<PlacementFact>>) s -> s.cancel("R", 1, T0))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("endings")
    void cancellationEndsTheReservationAndFreesTheDrainedNodes(java.util.function.Function<ClusterState, List<PlacementFact>> end) {
        Fixtures.Cluster c = drainingOneNode();
        assertThat(deferral(dispatchAt(c, aGang("d").task("w", 1, 4), T0)).reason()).isEqualTo(DeferralCause.RESERVED);

        c.apply(end.apply(c.state));

        assertThat(c.state.reservations()).isEmpty();
        assertThat(c.state.reservation("R")).isEmpty();
        assertThat(nodesOf(grant(dispatchAt(c, aGang("d").task("w", 1, 4), T0)))).containsExactly("n1");
    }

    @Test
    void aCancellationOfAnOlderAttemptLeavesTheReservationInPlace() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        run(c, aGang("a").task("w", 1, 4).timeLimit(600));
        c.apply(c.state.reserve(aGang("R").attempt(2).task("w", 1, 8).build(), T0));

        assertThat(c.state.cancelReservation("R", 1)).isEmpty();
        assertThat(c.state.reservations()).hasSize(1);
    }

    @Test
    void aRestartRebuildsTheReservationFromTheRecordedFactsInAnyOrder() {
        Fixtures.Cluster live = Fixtures.Cluster.topology(anH100Node("n1").rack("P1", "S3"),
                anH100Node("n2").rack("P1", "S4"));
        List<PlacementFact> log = new ArrayList<>();
        for (NodeSpec n : live.state.nodes()) {
            log.add(new PlacementFact.NodeRegistered(n));
        }
        log.addAll(live.dispatch(aGang("a").task("w", 1, 8).timeLimit(600)));
        log.addAll(live.dispatch(aGang("b").task("w", 1, 8).timeLimit(6000)));
        log.addAll(live.apply(live.state.reserve(aGang("R").task("w", 1, 8).build(), T0)));

        // cross-topic order is not kept: the allocation topic is read back before the node topic
        ClusterState restored = new ClusterState(Fixtures.SIM, new TopologyPlacer());
        log.stream().filter(f -> !(f instanceof PlacementFact.NodeRegistered)).forEach(restored::replay);
        log.stream().filter(f -> f instanceof PlacementFact.NodeRegistered).forEach(restored::replay);
        // the backend re-registers every node at start, without control labels: the drain must survive it
        for (NodeSpec n : live.state.nodes()) {
            restored.register(n.withLabels(java.util.Map.of())).forEach(restored::replay);
        }

        assertThat(restored.reservations()).isEqualTo(live.state.reservations());
        Fixtures.GangBuilder backfill = aGang("c").task("w", 1, 8).timeLimit(60);
        assertThat(restored.dispatch(backfill.build(), T0)).isEqualTo(live.state.dispatch(backfill.build(), T0));
        assertThat(restored.dispatch(aGang("R").task("w", 1, 8).build(), T0))
                .isEqualTo(live.state.dispatch(aGang("R").task("w", 1, 8).build(), T0));
    }

    // ---------------------------------------------------------------- cordon

    @Test
    void aCordonedNodeGetsNoNewWorkWhileItsRunsContinue() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = run(c, aGang("a").task("w", 1, 4));

        c.apply(c.state.cordon("n1", true));

        assertThat(c.state.isCordoned("n1")).isTrue();
        assertThat(c.state.liveAllocation("a")).contains(a);
        assertThat(nodesOf(c.granted(aGang("b").task("w", 1, 2)))).as("binpack would pick n1 if it were not cordoned")
                .containsExactly("n2");
        assertThat(c.state.cordon("n1", true)).as("already cordoned").isEmpty();
    }

    @Test
    void aGangThatFitsOnlyWithCordonedNodesIsDeferredCordoned() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        c.apply(c.state.cordon("n2", true));

        PlacementFact.PlacementDeferred d = deferral(c.dispatch(aGang("g").task("w", 2, 8)));

        assertThat(d.reason()).isEqualTo(DeferralCause.CORDONED);
        assertThat(d.message()).isEqualTo("would fit only with cordoned nodes (n2)");
        assertThat(deferral(c.dispatch(aGang("huge").task("w", 3, 8))).reason())
                .as("a gang that does not fit even with them gets the usual reason")
                .isEqualTo(DeferralCause.GANG_LARGER_THAN_CLUSTER);
    }

    @Test
    void uncordonLetsTheNodeTakeWorkAgainAndACordonSurvivesARegistrationByTheBackend() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.cordon("n1", true));
        c.apply(c.state.register(anH100Node("n1").build()));
        assertThat(c.state.isCordoned("n1")).as("the backend's re-registration keeps the cordon").isTrue();

        c.apply(c.state.cordon("n1", false));

        assertThat(c.state.isCordoned("n1")).isFalse();
        assertThat(nodesOf(c.granted(aGang("g").task("w", 1, 8)))).containsExactly("n1");
    }

    @Test
    void aReservationNeverDrainsCordonedNodes() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        run(c, aGang("b").task("w", 1, 8).timeLimit(6000));
        c.apply(c.state.cordon("n1", true));

        c.apply(c.state.reserve(aGang("R").task("w", 1, 8).build(), T0));

        assertThat(c.state.reservation("R").orElseThrow().nodes()).containsExactly("n2");
    }

    // ---------------------------------------------------------------- RDMA NICs

    @Test
    void eachTaskGetsTheNicsOnItsGpusPcieSwitchElseOnItsSocket() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1").server()
                .nic("mlx5_0", 0, 0).nic("mlx5_1", 1, 7));

        Allocation a = c.granted(aGang("g").task("near", 1, 2).task("far", 1, 2));

        PlacedTask near = a.placements().stream().filter(p -> p.task().equals("near")).findFirst().orElseThrow();
        PlacedTask far = a.placements().stream().filter(p -> p.task().equals("far")).findFirst().orElseThrow();
        assertThat(near.gpuIndices()).containsExactly(0, 1);
        assertThat(near.rdmaNics()).as("same PCIe switch").containsExactly("mlx5_0");
        assertThat(far.gpuIndices()).containsExactly(2, 3);
        assertThat(far.rdmaNics()).as("no NIC on switch 1: the one on socket 0").containsExactly("mlx5_0");
    }

    @Test
    void aNodeWithoutNicsGivesTasksNone() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1").server());
        assertThat(c.granted(aGang("g").task("w", 1, 2)).placements().get(0).rdmaNics()).isEmpty();
    }

    @Test
    void aNicOnASocketTheNodeDoesNotHaveIsRejected() {
        assertThatThrownBy(() -> anH100Node("n1").nic("mlx5_0", 1, 0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("node n1: RDMA NIC mlx5_0 is on NUMA socket 1 but the node has 1 socket (numaCpuMillis)");
    }

    @Test
    void aMultiNodeGangPrefersNodesWithANicNextToItsGpusOnlyAsATiebreak() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("a").server(), anH100Node("b").server(),
                anH100Node("c").server().nic("mlx5_0", 0, 0));
        c.granted(aGang("busy").task("w", 1, 4)); // a: 4 free

        Allocation g = c.granted(aGang("g").task("big", 1, 8).task("small", 1, 4));

        PlacedTask big = g.placements().stream().filter(p -> p.task().equals("big")).findFirst().orElseThrow();
        PlacedTask small = g.placements().stream().filter(p -> p.task().equals("small")).findFirst().orElseThrow();
        assertThat(big.nodeId()).as("b and c tie on free GPUs; c has a NIC next to the GPUs").isEqualTo("c");
        assertThat(big.rdmaNics()).containsExactly("mlx5_0");
        assertThat(small.nodeId()).as("binpack (the partly used node) still comes first").isEqualTo("a");
    }

    // ---------------------------------------------------------------- per-job policy

    @Test
    void aJobAskingForSpreadGoesToTheEmptiestNodeWhileThePoolBinpacks() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        c.granted(aGang("first").task("w", 1, 2));

        Allocation spread = c.granted(aGang("s").task("w", 1, 1).policy(PlacementPolicy.SPREAD));
        Allocation packed = c.granted(aGang("p").task("w", 1, 1));

        assertThat(nodesOf(spread)).containsExactly("n2");
        assertThat(nodesOf(packed)).as("the pool's binpack for a job without a policy").containsExactly("n1");
    }

    @Test
    void aJobAskingForBinpackPacksOnASpreadPool() {
        Fixtures.Cluster c = Fixtures.Cluster.with(new TopologyPlacer(PlacementPolicy.SPREAD, java.util.Map.of()),
                anH100Node("n1"), anH100Node("n2"));
        c.granted(aGang("first").task("w", 1, 2));

        assertThat(nodesOf(c.granted(aGang("b").task("w", 1, 1).policy(PlacementPolicy.BINPACK))))
                .containsExactly(nodesOf(c.state.liveAllocation("first").orElseThrow()).get(0));
    }
}
