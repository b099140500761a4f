package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static org.assertj.core.api.Assertions.assertThat;

class TopologyPlacementTest {

    static Fixtures.NodeBuilder server(String id, String spine, String rack) {
        return aNode(id).server().rack(spine, rack);
    }

    /** Two spines; spine a has racks a/r1 (n1, n2) and a/r2 (n3, n4); spine b has rack b/r1 (n5, n6). */
    static List<Fixtures.NodeBuilder> clos() {
        return List.of(server("n1", "a", "r1"), server("n2", "a", "r1"), server("n3", "a", "r2"),
                server("n4", "a", "r2"), server("n5", "b", "r1"), server("n6", "b", "r1"));
    }

    record Case(List<Fixtures.NodeBuilder> nodes, Consumer<Fixtures.Cluster> before, Fixtures.GangBuilder gang,
                List<String> expected) {
    }

    static Arguments named(String name, Case c) {
        return Arguments.of(Named.of(name, c));
    }

    static Stream<Arguments> placements() {
        return Stream.of(
                named("a 1-GPU job goes to the fullest node that fits, not an empty one",
                        new Case(clos(), c -> c.dispatch(aGang("busy").task("w", 1, 6)), aGang("j").task("w", 1, 1),
                                List.of("w-0@n1[6]"))),
                named("a 1-GPU job takes the fullest PCIe switch of the node",
                        new Case(List.of(server("n1", "a", "r1")), c -> c.dispatch(aGang("busy").task("w", 1, 1)),
                                aGang("j").task("w", 1, 1), List.of("w-0@n1[1]"))),
                named("a 2-GPU job stays under one PCIe switch rather than crossing the socket",
                        new Case(List.of(server("n1", "a", "r1")), c -> c.dispatch(aGang("busy").task("w", 1, 1)),
                                aGang("j").task("w", 1, 2), List.of("w-0@n1[2, 3]"))),
                named("a 4-GPU job stays on one socket",
                        new Case(List.of(server("n1", "a", "r1")), c -> c.dispatch(aGang("busy").task("w", 1, 2)),
                                aGang("j").task("w", 1, 4), List.of("w-0@n1[4, 5, 6, 7]"))),
                named("two 4-GPU tasks of one gang share one node",
                        new Case(clos(), c -> { }, aGang("j").task("w", 2, 4),
                                List.of("w-0@n1[0, 1, 2, 3]", "w-1@n1[4, 5, 6, 7]"))),
                named("a 16-GPU gang with rack required lands in one rack",
                        new Case(clos(), c -> c.dispatch(aGang("busy").task("w", 1, 4)),
                                aGang("j").task("w", 2, 8).required(TopologyLevel.RACK),
                                List.of("w-0@n3[0, 1, 2, 3, 4, 5, 6, 7]", "w-1@n4[0, 1, 2, 3, 4, 5, 6, 7]"))),
                named("a gang that fits no rack spans as few racks of one spine as it can",
                        new Case(clos(), c -> { }, aGang("j").task("w", 3, 8),
                                List.of("w-0@n1[0, 1, 2, 3, 4, 5, 6, 7]", "w-1@n2[0, 1, 2, 3, 4, 5, 6, 7]",
                                        "w-2@n3[0, 1, 2, 3, 4, 5, 6, 7]"))),
                named("an NVLink-required pair avoids a node whose free GPUs sit in two NVLink domains",
                        new Case(List.of(aNode("split").gpu("H100", 0, 0, 0).gpu("H100", 0, 0, 1),
                                aNode("whole").gpu("H100", 0, 0, 0).gpu("H100", 0, 0, 0).gpu("H100", 0, 0, 0)),
                                c -> { }, aGang("j").task("w", 1, 2).required(TopologyLevel.NVLINK),
                                List.of("w-0@whole[0, 1]"))),
                named("a model preference list takes the first model that fits",
                        new Case(List.of(aNode("a").gpus(8, "A100"), aNode("h").gpus(2, "H100")), c -> { },
                                aGang("j").task("w", 1, 4).models("H100", "A100"), List.of("w-0@a[0, 1, 2, 3]"))),
                named("a model preference list prefers the first model when it fits",
                        new Case(List.of(aNode("a").gpus(8, "A100"), aNode("h").gpus(8, "H100")), c -> { },
                                aGang("j").task("w", 1, 4).models("H100", "A100"), List.of("w-0@h[0, 1, 2, 3]"))),
                named("a failed node is never placed on",
                        new Case(clos(), c -> c.fail("n1"), aGang("j").task("w", 1, 8),
                                List.of("w-0@n2[0, 1, 2, 3, 4, 5, 6, 7]"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placements")
    void placesEveryReplicaWhereExpected(Case c) {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(c.nodes().toArray(Fixtures.NodeBuilder[]::new));
        c.before().accept(cluster);
        Allocation a = cluster.granted(c.gang());
        assertThat(a.placements().stream().map(p -> p.task() + "-" + p.replica() + "@" + p.nodeId() + p.gpuIndices()))
                .containsExactlyElementsOf(c.expected());
    }

    record Deferral(List<Fixtures.NodeBuilder> nodes, Consumer<Fixtures.Cluster> before, Fixtures.GangBuilder gang,
                    DeferralCause reason, List<String> message) {
    }

    static Stream<Arguments> deferrals() {
        return Stream.of(
                Arguments.of(Named.of("required NODE never spans two nodes",
                        new Deferral(clos(), c -> { }, aGang("j").task("w", 2, 8).required(TopologyLevel.NODE),
                                DeferralCause.TOPOLOGY_UNSATISFIABLE,
                                List.of("needs 16 GPUs", "within one node (required)", "the largest node", "has 8 GPUs")))),
                Arguments.of(Named.of("a rack-required gang waits when no rack has enough free, naming the best rack",
                        new Deferral(clos(), c -> {
                            c.dispatch(aGang("x").task("w", 1, 8));
                            c.dispatch(aGang("y").task("w", 1, 8));
                            c.dispatch(aGang("z").task("w", 1, 4));
                        }, aGang("j").task("w", 3, 8).required(TopologyLevel.RACK),
                                DeferralCause.TOPOLOGY_UNSATISFIABLE,
                                List.of("needs 24 GPUs as 3 x 8 within one rack (required)", "the largest rack, a/r1, has 16 GPUs")))),
                Arguments.of(Named.of("a rack-required gang waits with the free count of the best rack",
                        new Deferral(clos(), c -> {
                            for (int i = 0; i < 6; i++) {
                                c.dispatch(aGang("x" + i).task("w", 1, 5));
                            }
                        }, aGang("j").task("w", 2, 8).required(TopologyLevel.RACK),
                                DeferralCause.TOPOLOGY_UNSATISFIABLE,
                                List.of("needs 16 GPUs within one rack (required); the best rack, a/r1, has 6 free "
                                        + "(18 free in the cluster)")))),
                Arguments.of(Named.of("enough free GPUs scattered over nodes is fragmentation",
                        new Deferral(List.of(server("n1", "a", "r1"), server("n2", "a", "r1")), c -> {
                            c.dispatch(aGang("x").task("w", 1, 4));
                            c.dispatch(aGang("y").task("w", 1, 5));
                        }, aGang("j").task("w", 1, 6), DeferralCause.FRAGMENTED,
                                List.of("task w needs 6 GPUs on one node", "7 GPUs are free", "the most free on one node is 4")))),
                Arguments.of(Named.of("an unknown tier names the configured tiers",
                        new Deferral(clos(), c -> { }, aGang("j").task("w", 1, 1).tier("gaming"),
                                DeferralCause.NO_MATCHING_GPU_MODEL, List.of("tier gaming", "not configured")))),
                Arguments.of(Named.of("no acceptable model anywhere says which models the pool has",
                        new Deferral(clos(), c -> { }, aGang("j").task("w", 1, 1).models("B200", "GB200"),
                                DeferralCause.NO_MATCHING_GPU_MODEL, List.of("B200 or GB200", "healthy nodes have H100")))),
                Arguments.of(Named.of("a gang larger than the cluster says the numbers",
                        new Deferral(List.of(server("n1", "a", "r1")), c -> { }, aGang("j").task("w", 5, 8),
                                DeferralCause.GANG_LARGER_THAN_CLUSTER, List.of("needs 40 GPUs as 5 x 8", "8 healthy")))),
                Arguments.of(Named.of("CPU must fit the NUMA socket of the task's GPUs",
                        new Deferral(List.of(server("n1", "a", "r1")), c -> { },
                                aGang("j").task("w", 1, 1).cpuMillis(60_000), DeferralCause.TASK_LARGER_THAN_ANY_NODE,
                                List.of("60000 mCPU on one NUMA socket", "48000 mCPU per socket")))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deferrals")
    void defersWithTheMostSpecificReason(Deferral d) {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(d.nodes().toArray(Fixtures.NodeBuilder[]::new));
        d.before().accept(cluster);
        PlacementDecision.Deferred deferred = cluster.deferred(d.gang());
        assertThat(deferred.reason()).isEqualTo(d.reason());
        assertThat(deferred.message()).contains(d.message());
    }

    @Test
    void aTierResolvesToItsModelsInPreferenceOrder() {
        var placer = new TopologyPlacer(PlacementPolicy.BINPACK, Map.of("training", List.of("H100", "A100")));
        Fixtures.Cluster cluster = Fixtures.Cluster.with(placer, aNode("a").gpus(8, "A100"), aNode("h").gpus(2, "H100"));
        assertThat(cluster.granted(aGang("big").task("w", 1, 4).tier("training")).placements().get(0).nodeId())
                .isEqualTo("a");
        assertThat(cluster.granted(aGang("small").task("w", 1, 2).tier("training")).placements().get(0).nodeId())
                .isEqualTo("h");
    }

    @Test
    void spreadPutsSmallJobsOnTheEmptiestNode() {
        var placer = new TopologyPlacer(PlacementPolicy.SPREAD, Map.of());
        Fixtures.Cluster cluster = Fixtures.Cluster.with(placer, server("n1", "a", "r1"), server("n2", "a", "r1"));
        Set<String> nodes = new TreeSet<>();
        for (int i = 0; i < 2; i++) {
            nodes.add(cluster.granted(aGang("j" + i).task("w", 1, 1)).placements().get(0).nodeId());
        }
        assertThat(nodes).containsExactly("n1", "n2");
    }

    @Test
    void binpackingEightSingleGpuJobsLeavesWholeNodesFree() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(clos().toArray(Fixtures.NodeBuilder[]::new));
        for (int i = 0; i < 8; i++) {
            cluster.granted(aGang("j" + i).task("w", 1, 1));
        }
        assertThat(cluster.held()).containsOnlyKeys("n1");
        assertThat(cluster.state.inventory().fragmentation(List.of(8))).isZero();
    }

    @Test
    void fragmentationCountsFreeGpusOnNodesThatCannotHostTheTypicalRequest() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(server("n1", "a", "r1"), server("n2", "a", "r1"));
        cluster.granted(aGang("x").task("w", 1, 4));
        // n1 has 4 free (stranded for an 8-GPU request), n2 has 8: 4 of 12 free GPUs are stranded
        assertThat(cluster.state.inventory().fragmentation(List.of(8))).isEqualTo(4.0 / 12);
        assertThat(cluster.state.inventory().fragmentation(List.of(4))).isZero();
    }

    @Test
    void cpuComesFromTheSocketOfTheTasksGpusAndTheCpuSetIsItsCores() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(server("n1", "a", "r1"));
        cluster.granted(aGang("x").task("w", 1, 4));
        PlacedTask p = cluster.granted(aGang("j").task("w", 1, 4).cpuMillis(40_000)).placements().get(0);
        assertThat(p.gpuIndices()).containsExactly(4, 5, 6, 7);
        assertThat(p.cpuSet()).hasSize(48).startsWith(48).endsWith(95);
        NodeView n = cluster.state.snapshot().nodes().get(0);
        assertThat(n.freeSocketCpuMillis()).containsExactly(47_000, 8_000);
    }

    @Test
    void aGangOfWholeNodesThatEnoughFreeGpusCannotHoldInNodeSizedPiecesWaitsFragmented() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(server("n1", "a", "r1"), server("n2", "a", "r1"),
                server("n3", "a", "r1"), server("n4", "a", "r1"));
        for (String j : List.of("x", "y", "z")) {
            cluster.granted(aGang(j).task("w", 1, 5).required(TopologyLevel.NODE));
        }
        // 3 + 3 + 3 + 8 = 17 free, but one node has 8 free: one task of 8 fits, not two
        PlacementDecision.Deferred d = cluster.deferred(aGang("big").task("w", 2, 8));

        assertThat(d.reason()).isEqualTo(DeferralCause.FRAGMENTED);
        assertThat(d.message()).isEqualTo("needs 16 GPUs as 2 x 8, 17 free in the cluster, but the nodes' free GPUs "
                + "hold only 1 of its 2 tasks of 8 (the most free on one node: 8)");
    }

    @Test
    void aGangWithoutGpusThatCpuKeepsOutIsToldItIsCpuAndMemoryNotGpus() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(server("n1", "a", "r1"));
        cluster.granted(aGang("busy").task("w", 2, 0).cpuMillis(45_000)); // 3000 mCPU left on each socket
        PlacementDecision.Deferred d = cluster.deferred(aGang("prep").task("w", 2, 0).cpuMillis(4_000)
                .memoryMiB(1_024));
        assertThat(d.message()).isEqualTo("needs 8000 mCPU and 2048 MiB as 2 tasks (no GPUs); no set of nodes has "
                + "that much CPU and memory free for every task now");
        assertThat(d.message()).doesNotContain("GPUs as", "0 GPUs");
    }

    @Test
    void aRegistrationWithAGpuOnAnUnknownSocketIsRejectedWithTheReason() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new NodeSpec("n", "simulated",
                        List.of(new Gpu(0, "H100", 1, 1, 0, 0)), 1000, 1, Map.of(), List.of(1000)))
                .hasMessageContaining("gpu 0 is on NUMA socket 1 but the node has 1 socket");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new NodeSpec("n", "simulated", List.of(), 1000, 1,
                        Map.of(), List.of(400, 400)))
                .hasMessageContaining("numaCpuMillis adds up to 800 but cpuMillis is 1000");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Gpu(0, "H100", -1))
                .hasMessageContaining("memoryMiB must be >= 0");
    }

    @Test
    void theRackOfAGangIsWhereEveryReplicaSits() {
        Fixtures.Cluster cluster = Fixtures.Cluster.topology(clos().toArray(Fixtures.NodeBuilder[]::new));
        cluster.granted(aGang("busy").task("w", 3, 1).required(TopologyLevel.NODE));
        Allocation a = cluster.granted(aGang("j").task("w", 4, 4).required(TopologyLevel.RACK));
        List<String> racks = new ArrayList<>();
        for (PlacedTask p : a.placements()) {
            racks.add(cluster.state.nodes().stream().filter(n -> n.nodeId().equals(p.nodeId())).findFirst()
                    .orElseThrow().rack());
        }
        assertThat(racks.stream().collect(Collectors.toSet())).hasSize(1);
    }
}
