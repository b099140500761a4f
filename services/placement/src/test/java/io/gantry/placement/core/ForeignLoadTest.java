package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/** GPUs held by workloads Gantry did not start (a foreign pod, a Slurm job outside Gantry) are capacity taken. */
class ForeignLoadTest {

    private static int free(Fixtures.Cluster c) {
        return c.state.freeCapacity().stream().mapToInt(FreeCapacity::freeGpus).sum();
    }

    private static NodeView view(Fixtures.Cluster c, String id) {
        return c.state.snapshot().nodes().stream().filter(n -> n.nodeId().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void foreignGpusAreTakenOffTheFreeCountAndRecordedOnTheNode() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        List<PlacementFact> facts = c.apply(c.state.foreignLoad("n1", 2, "pod ml/train-7 (2 GPUs)"));
        assertThat(facts).singleElement().isInstanceOfSatisfying(PlacementFact.NodeRegistered.class, r -> {
            assertThat(r.node().foreignGpus()).isEqualTo(2);
            assertThat(r.node().foreignHolders()).isEqualTo("pod ml/train-7 (2 GPUs)");
        });
        assertThat(free(c)).isEqualTo(6);
        assertThat(view(c, "n1").freeGpuCount()).isEqualTo(6);
        assertThat(view(c, "n1").foreignGpus()).containsExactly(6, 7);
    }

    @Test
    void gantryNeverPlacesOnGpusHeldOutsideIt() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.foreignLoad("n1", 3, "Slurm job 55 of bob"));
        assertThat(c.granted(aGang("a").task("w", 1, 5)).placements().get(0).gpuIndices()).doesNotContain(5, 6, 7);
        PlacementDecision.Deferred d = c.deferred(aGang("b").task("w", 1, 1));
        assertThat(d.reason()).isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
    }

    @Test
    void aWholeNodeGangGoesToANodeWithoutForeignWorkEvenWithTheFirstFitPlacer() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));
        c.apply(c.state.foreignLoad("n1", 1, "pod x/y"));
        assertThat(c.granted(aGang("a").task("w", 1, 8)).placements().get(0).nodeId()).isEqualTo("n2");
        c.deferred(aGang("b").task("w", 1, 8));
    }

    @Test
    void theGpusComeBackWhenTheForeignWorkloadGoes() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.foreignLoad("n1", 8, "pod x/y"));
        c.deferred(aGang("a").task("w", 1, 8));
        List<PlacementFact> facts = c.apply(c.state.foreignLoad("n1", 0, null));
        assertThat(facts).singleElement().isInstanceOfSatisfying(PlacementFact.NodeRegistered.class, r -> {
            assertThat(r.node().labels()).doesNotContainKeys(NodeSpec.FOREIGN_GPUS_LABEL, NodeSpec.FOREIGN_HOLDERS_LABEL);
        });
        assertThat(free(c)).isEqualTo(8);
        c.granted(aGang("a").task("w", 1, 8));
    }

    @Test
    void anUnchangedCountOrAnUnknownNodeRecordsNothing() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.foreignLoad("n1", 2, "pod x/y"));
        assertThat(c.state.foreignLoad("n1", 2, "pod x/y")).isEmpty();
        assertThat(c.state.foreignLoad("n1", 0, null)).hasSize(1);
        assertThat(c.state.foreignLoad("nope", 2, "pod x/y")).isEmpty();
        Fixtures.Cluster none = Fixtures.Cluster.topology(anH100Node("n1"));
        assertThat(none.state.foreignLoad("n1", 0, "whatever")).isEmpty();
    }

    @Test
    void gantrysOwnRunsAreNeverDisplacedAndTheRestIsTakenAsItFrees() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = c.granted(aGang("a").task("w", 1, 6));
        // the backend counts 4 foreign GPUs while Gantry holds 6 of 8 (e.g. a pod seen before Gantry's own ended)
        c.apply(c.state.foreignLoad("n1", 4, "pod x/y"));
        assertThat(view(c, "n1").allocatedTo()).hasSize(6);
        assertThat(view(c, "n1").foreignGpus()).hasSize(2);
        assertThat(free(c)).isZero();
        c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(1))));
        assertThat(view(c, "n1").foreignGpus()).hasSize(4);
        assertThat(free(c)).isEqualTo(4);
    }

    @Test
    void capacityHintsLeaveForeignGpusOut() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = c.granted(aGang("a").task("w", 1, 4));
        c.apply(c.state.foreignLoad("n1", 2, "pod x/y"));
        c.deferred(aGang("big").task("w", 1, 4));
        c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(1))));
        GangRequest big = aGang("big").task("w", 1, 7).build();
        GangRequest fits = aGang("fits").task("w", 1, 4).build();
        assertThat(c.state.checkDeferred(List.of(big, fits), T0, 10)).extracting(ClusterState.DeferredCheck::fits)
                .containsExactly(false, true);
        assertThat(free(c)).isEqualTo(6);
    }

    @Test
    void aRegistrationByTheBackendAtARestartKeepsTheLastCountUntilTheBackendCountsAgain() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.foreignLoad("n1", 3, "pod x/y"));
        c.apply(c.state.register(anH100Node("n1").build()));
        assertThat(free(c)).isEqualTo(5);
    }

    @Test
    void aRebuiltIndexEqualsTheIncrementalOne() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = c.granted(aGang("a").task("w", 1, 3));
        c.apply(c.state.foreignLoad("n1", 2, "pod x/y"));
        c.granted(aGang("b").task("w", 2, 2));
        c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(1))));
        InventorySnapshot snapshot = c.state.snapshot();
        assertThat(Inventory.of(snapshot, Fixtures.SIM).snapshot()).isEqualTo(snapshot);
        // replayed from the facts in another order (registrations after the grants) the state is the same
        ClusterState replayed = new ClusterState(Fixtures.SIM, new TopologyPlacer());
        c.state.liveAllocations().forEach(x -> replayed.replay(new PlacementFact.AllocationGranted(x)));
        c.state.nodes().forEach(n -> replayed.replay(new PlacementFact.NodeRegistered(n)));
        assertThat(replayed.snapshot()).isEqualTo(snapshot);
    }

    @Test
    void aCountAboveTheNodesGpusIsClampedAndLongHolderListsAreShortened() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        c.apply(c.state.foreignLoad("n1", 99, "x".repeat(500)));
        NodeSpec n = c.state.node("n1").orElseThrow();
        assertThat(n.foreignGpus()).isEqualTo(8);
        assertThat(n.foreignHolders()).hasSize(ClusterState.MAX_HOLDERS_LENGTH).endsWith("...");
        assertThat(n.withLabel(NodeSpec.FOREIGN_GPUS_LABEL, "many").foreignGpus()).isZero();
    }
}
