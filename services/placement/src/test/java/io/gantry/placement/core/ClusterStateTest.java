package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

class ClusterStateTest {

    @Test
    void aGangIsGrantedWholeWithOneDeterministicAllocationPerRun() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));

        Allocation a = cluster.granted(aGang("job-1").tenant("nlp").attempt(2).task("w", 2, 8));

        assertThat(a.allocationId()).isEqualTo(ClusterState.allocationId("job-1", 2));
        assertThat(a.tenant()).isEqualTo("nlp");
        assertThat(a.grantedAt()).isEqualTo(T0);
        assertThat(a.backend()).isEqualTo("simulated");
        assertThat(cluster.held()).isEqualTo(Map.of("n1", List.of(0, 1, 2, 3, 4, 5, 6, 7), "n2", List.of(0, 1, 2, 3, 4, 5, 6, 7)));
    }

    @Test
    void aGangOneReplicaTooLargeForTheFreeGpusTakesNothingAtAll() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));
        cluster.granted(aGang("busy").task("w", 1, 4));

        List<PlacementFact> facts = cluster.dispatch(aGang("j").task("w", 4, 4));

        assertThat(facts).singleElement().isInstanceOf(PlacementFact.PlacementDeferred.class);
        assertThat(cluster.held()).isEqualTo(Map.of("n1", List.of(0, 1, 2, 3)));
    }

    @Test
    void theRunStartsOnceAndSucceedsWithTheWholeHeldInterval() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = cluster.granted(aGang("j").task("w", 1, 2));
        Instant end = T0.plusSeconds(60);

        assertThat(cluster.apply(cluster.state.runStarted(a.allocationId(), T0))).hasSize(1);
        assertThat(cluster.state.runStarted(a.allocationId(), T0)).as("started only once").isEmpty();
        List<PlacementFact> facts = cluster.apply(cluster.state.runEnded(a.allocationId(), RunResult.succeeded(end)));

        assertThat(facts).hasSize(2);
        assertThat(facts.get(0)).isEqualTo(new PlacementFact.RunSucceeded(a, end));
        assertThat(facts.get(1)).isEqualTo(new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_SUCCEEDED, end));
        assertThat(cluster.held()).isEmpty();
    }

    @Test
    void aFailedRunReportsItsExitCodeThenReleases() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = cluster.granted(aGang("j").task("w", 2, 1));

        List<PlacementFact> facts = cluster.apply(cluster.state.runEnded(a.allocationId(),
                RunResult.failed(3, "task w-1 exited with 3", T0.plusSeconds(5))));

        assertThat(facts).containsExactly(new PlacementFact.RunFailed(a, 3, "task w-1 exited with 3", T0.plusSeconds(5)),
                new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_FAILED, T0.plusSeconds(5)));
        assertThat(cluster.held()).isEmpty();
    }

    @Test
    void cancellingAJobReleasesItsAllocationAndLaterOutcomesAreIgnored() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = cluster.granted(aGang("j").task("w", 1, 8));

        List<PlacementFact> facts = cluster.apply(cluster.state.cancel("j", 1, T0.plusSeconds(9)));

        assertThat(facts).containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.CANCELLED, T0.plusSeconds(9)));
        assertThat(cluster.held()).isEmpty();
        assertThat(cluster.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(10)))).isEmpty();
        assertThat(cluster.state.cancel("j", 1, T0.plusSeconds(11))).as("a second cancel").isEmpty();
    }

    @Test
    void aCancelOfAnOlderAttemptLeavesTheNewerRunAlone() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        cluster.granted(aGang("j").attempt(3).task("w", 1, 1));

        assertThat(cluster.state.cancel("j", 2, T0)).isEmpty();
    }

    @Test
    void aNodeFailureReleasesEveryAllocationTouchingTheNodeAndNoOther() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"), anH100Node("n3"));
        Allocation onlyN1 = cluster.granted(aGang("a").task("w", 1, 4));
        Allocation spanning = cluster.granted(aGang("b").task("w", 1, 4).task("x", 1, 8));
        Allocation onlyN3 = cluster.granted(aGang("c").task("w", 1, 8));
        assertThat(spanning.placements()).extracting(PlacedTask::nodeId).containsExactly("n1", "n2");
        Instant now = T0.plusSeconds(30);

        List<PlacementFact> facts = cluster.apply(cluster.state.nodeFailed("n2", now));
        List<PlacementFact> again = cluster.state.nodeFailed("n2", now);

        assertThat(facts).containsExactly(new PlacementFact.NodeFailed("n2"),
                new PlacementFact.AllocationReleased(spanning, ReleaseCause.NODE_FAILED, now));
        assertThat(again).as("a repeated NodeFailed releases nothing more").containsExactly(new PlacementFact.NodeFailed("n2"));
        assertThat(cluster.state.liveAllocations()).containsExactly(onlyN1, onlyN3);
        assertThat(cluster.held()).isEqualTo(Map.of("n1", List.of(0, 1, 2, 3), "n3", List.of(0, 1, 2, 3, 4, 5, 6, 7)));
        assertThat(cluster.state.snapshot().nodes()).filteredOn(n -> n.nodeId().equals("n2"))
                .singleElement().satisfies(n -> assertThat(n.eligible()).isFalse());
    }

    @Test
    void aRecoveredNodeIsPlacedOnAgain() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1")).fail("n1");
        assertThat(cluster.dispatch(aGang("j").task("w", 1, 1))).singleElement().isInstanceOf(PlacementFact.PlacementDeferred.class);

        cluster.apply(cluster.state.nodeRecovered("n1"));

        assertThat(cluster.granted(aGang("j").task("w", 1, 1)).placements().get(0).nodeId()).isEqualTo("n1");
    }

    @Test
    void releasingAnAllocationFreesExactlyItsDevicesAndResources() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));
        cluster.granted(aGang("a").task("w", 1, 3));
        InventorySnapshot before = cluster.state.snapshot();
        Allocation b = cluster.granted(aGang("b").task("w", 2, 3).cpuMillis(7_000).memoryMiB(9_000));
        cluster.granted(aGang("c").task("w", 1, 5));

        cluster.apply(cluster.state.cancel("b", 1, T0));
        cluster.apply(cluster.state.cancel("c", 1, T0));

        assertThat(b.placements()).extracting(p -> p.nodeId() + p.gpuIndices())
                .containsExactly("n1[3, 4, 5]", "n2[0, 1, 2]");
        assertThat(cluster.state.snapshot()).isEqualTo(before);
    }

    static Stream<Arguments> staleDispatches() {
        return Stream.of(
                Arguments.of(Named.of("a repeated dispatch of the running attempt", 2)),
                Arguments.of(Named.of("a dispatch of an older attempt", 1)));
    }

    @ParameterizedTest(name = "{0} is ignored")
    @MethodSource("staleDispatches")
    void staleDispatchesAreIgnored(int attempt) {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));
        cluster.granted(aGang("j").attempt(2).task("w", 1, 8));

        assertThat(cluster.dispatch(aGang("j").attempt(attempt).task("w", 1, 8))).isEmpty();
        assertThat(cluster.held()).containsOnlyKeys("n1");
    }

    @Test
    void aDispatchOfAFinishedAttemptIsIgnoredButTheNextAttemptRuns() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = cluster.granted(aGang("j").task("w", 1, 8));
        cluster.apply(cluster.state.nodeFailed("n1", T0));
        cluster.apply(cluster.state.nodeRecovered("n1"));

        assertThat(cluster.dispatch(aGang("j").attempt(1).task("w", 1, 8))).isEmpty();
        assertThat(cluster.granted(aGang("j").attempt(2).task("w", 1, 8)).allocationId()).isNotEqualTo(a.allocationId());
    }

    @Test
    void aDeferredAttemptIsPlacedWhenDispatchedAgainAfterCapacityFrees() {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(anH100Node("n1"));
        cluster.granted(aGang("busy").task("w", 1, 8));
        assertThat(cluster.dispatch(aGang("j").task("w", 1, 4))).singleElement().isInstanceOf(PlacementFact.PlacementDeferred.class);

        cluster.apply(cluster.state.cancel("busy", 1, T0));

        assertThat(cluster.granted(aGang("j").task("w", 1, 4)).attempt()).isEqualTo(1);
    }

    @Test
    void replayingTheFactsInAnyCrossTopicOrderRebuildsTheSameInventory() {
        Fixtures.Cluster live = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"), anH100Node("n3"));
        List<PlacementFact> nodeFacts = new ArrayList<>();
        live.state.nodes().forEach(n -> nodeFacts.add(new PlacementFact.NodeRegistered(n)));
        List<PlacementFact> allocationFacts = new ArrayList<>();
        allocationFacts.addAll(live.dispatch(aGang("a").task("w", 1, 8)));
        allocationFacts.addAll(live.dispatch(aGang("b").task("w", 2, 4)));
        List<PlacementFact> failure = live.apply(live.state.nodeFailed("n1", T0));
        List<PlacementFact> healthFacts = failure.subList(0, 1);
        allocationFacts.addAll(failure.subList(1, failure.size()));
        allocationFacts.addAll(live.dispatch(aGang("c").task("w", 1, 2)));

        // each topic keeps its own order; across topics anything goes
        List<List<PlacementFact>> topics = List.of(allocationFacts, healthFacts, nodeFacts);
        for (List<List<PlacementFact>> order : permutations(topics)) {
            ClusterState restored = new ClusterState("simulated", new FirstFitPlacer());
            order.forEach(topic -> topic.forEach(restored::replay));
            assertThat(restored.snapshot()).as("order %s", order).isEqualTo(live.state.snapshot());
            assertThat(restored.liveAllocations()).isEqualTo(live.state.liveAllocations());
        }
    }

    private static <T> List<List<T>> permutations(List<T> items) {
        if (items.isEmpty()) {
            return List.of(List.of());
        }
        List<List<T>> out = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            List<T> rest = new ArrayList<>(items);
            T head = rest.remove(i);
            for (List<T> p : permutations(rest)) {
                List<T> l = new ArrayList<>(Collections.singletonList(head));
                l.addAll(p);
                out.add(l);
            }
        }
        return out;
    }
}
