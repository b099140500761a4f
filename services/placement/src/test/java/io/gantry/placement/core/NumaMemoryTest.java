package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Memory registered per NUMA socket: a task's memory comes from the socket of its GPUs, like its CPU. */
class NumaMemoryTest {

    /** Two sockets, two GPUs each; socket 0 has 64 GiB, socket 1 has 192 GiB. */
    private static Fixtures.NodeBuilder twoSockets(String id) {
        return aNode(id).gpu("H100", 0, 0, 0).gpu("H100", 0, 0, 0).gpu("H100", 1, 1, 1).gpu("H100", 1, 1, 1)
                .socketMemoryMiB(65_536, 196_608);
    }

    @Test
    void aTaskThatNeedsMoreMemoryThanItsGpusSocketHasGetsGpusOnTheSocketThatHasIt() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(twoSockets("n1"));
        Allocation a = c.granted(aGang("big-mem").task("w", 1, 1).memoryMiB(100_000));
        assertThat(a.placements().get(0).gpuIndices()).allSatisfy(g -> assertThat(g).isIn(2, 3));
    }

    @Test
    void socketMemoryIsTakenAndGivenBackSoASecondTaskDoesNotFitWhereTheFirstUsedIt() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(twoSockets("n1"));
        c.granted(aGang("a").task("w", 1, 1).memoryMiB(150_000)); // socket 1
        // 46 GiB left on socket 1, 64 GiB on socket 0: a 60 GiB task must go to socket 0
        Allocation b = c.granted(aGang("b").task("w", 1, 1).memoryMiB(60_000));
        assertThat(b.placements().get(0).gpuIndices()).allSatisfy(g -> assertThat(g).isIn(0, 1));
        // 50,000 MiB: the node has 52,144 free in total, but no socket has that much (5,536 and 46,608)
        assertThat(c.deferred(aGang("c").task("w", 1, 1).memoryMiB(50_000)).reason())
                .isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
    }

    @Test
    void aTaskLargerThanAnySocketsMemoryIsNamedAsSuch() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(twoSockets("n1"));
        PlacementDecision.Deferred d = c.deferred(aGang("huge").task("w", 1, 1).memoryMiB(200_000));
        assertThat(d.reason()).isEqualTo(DeferralCause.TASK_LARGER_THAN_ANY_NODE);
        assertThat(d.message()).contains("196608 MiB");
    }

    @Test
    void socketMemoryMustMatchTheSocketsAndAddUpToTheNodesMemory() {
        List<Gpu> gpus = List.of(new Gpu(0, "H100", 81_920, 0, 0, 0), new Gpu(1, "H100", 81_920, 1, 1, 1));
        assertThatThrownBy(() -> new NodeSpec("n", "simulated", gpus, 2000, 1000, Map.of(), List.of(1000, 1000),
                List.of(), List.of(400L, 500L))).hasMessageContaining("numaMemoryMiB adds up to 900 but memoryMiB is 1000");
        assertThatThrownBy(() -> new NodeSpec("n", "simulated", gpus, 2000, 1000, Map.of(), List.of(1000, 1000),
                List.of(), List.of(1000L))).hasMessageContaining("numaMemoryMiB lists 1 sockets but the node has 2");
    }

    @Test
    void theSnapshotKeepsFreeMemoryPerSocket() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(twoSockets("n1"));
        c.granted(aGang("a").task("w", 1, 1).memoryMiB(150_000));
        InventorySnapshot snap = c.state.snapshot();
        assertThat(snap.nodes().get(0).freeSocketMemoryMiB()).containsExactly(65_536L, 46_608L);
        assertThat(Inventory.of(snap, "simulated").snapshot()).isEqualTo(snap);
    }
}
