package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

class FirstFitPlacementTest {

    /** One case: a cluster (possibly with something already running), a gang, and where each replica must land. */
    record Case(List<Fixtures.NodeBuilder> nodes, Consumer<Fixtures.Cluster> before, Fixtures.GangBuilder gang,
                List<String> expected) {
    }

    static Arguments named(String name, Case c) {
        return Arguments.of(Named.of(name, c));
    }

    static Stream<Arguments> placements() {
        return Stream.of(
                named("replicas take the lowest free indices of the first node before the next node",
                        new Case(List.of(anH100Node("n1"), anH100Node("n2")), c -> { }, aGang("j").task("w", 3, 4),
                                List.of("w-0@n1[0, 1, 2, 3]", "w-1@n1[4, 5, 6, 7]", "w-2@n2[0, 1, 2, 3]"))),
                named("a task fills the gap left by a running job",
                        new Case(List.of(anH100Node("n1")), c -> c.dispatch(aGang("busy").task("w", 1, 2)),
                                aGang("j").task("w", 1, 4), List.of("w-0@n1[2, 3, 4, 5]"))),
                named("a GPU model constraint skips nodes without that model",
                        new Case(List.of(aNode("a").gpus(8, "A100"), anH100Node("b")), c -> { },
                                aGang("j").task("w", 1, 2).model("H100"), List.of("w-0@b[0, 1]"))),
                named("on a mixed node a model constraint takes that model's lowest indices",
                        new Case(List.of(aNode("m").gpus(2, "A100").gpus(2, "H100")), c -> { },
                                aGang("j").task("w", 1, 2).model("H100"), List.of("w-0@m[2, 3]"))),
                named("a task short of CPU on the first node goes to the next one",
                        new Case(List.of(anH100Node("n1").cpuMillis(4_000), anH100Node("n2")), c -> { },
                                aGang("j").task("w", 1, 1).cpuMillis(8_000), List.of("w-0@n2[0]"))),
                named("a failed node is never placed on",
                        new Case(List.of(anH100Node("n1"), anH100Node("n2")), c -> c.fail("n1"),
                                aGang("j").task("w", 1, 8), List.of("w-0@n2[0, 1, 2, 3, 4, 5, 6, 7]"))),
                named("a node of another backend is never placed on",
                        new Case(List.of(anH100Node("n1").backend("local"), anH100Node("n2")), c -> { },
                                aGang("j").task("w", 1, 1), List.of("w-0@n2[0]"))),
                named("tasks are placed in spec order and a CPU-only task takes no GPU",
                        new Case(List.of(anH100Node("n1")), c -> { },
                                aGang("j").task("launcher", 1, 0).task("w", 2, 1),
                                List.of("launcher-0@n1[]", "w-0@n1[0]", "w-1@n1[1]"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placements")
    void firstFitPlacesEveryReplicaWhereExpected(Case c) {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(c.nodes().toArray(Fixtures.NodeBuilder[]::new));
        c.before().accept(cluster);

        Allocation a = cluster.granted(c.gang());

        assertThat(a.placements()).extracting(p -> p.task() + "-" + p.replica() + "@" + p.nodeId() + p.gpuIndices())
                .containsExactlyElementsOf(c.expected());
    }

    record Deferral(List<Fixtures.NodeBuilder> nodes, Consumer<Fixtures.Cluster> before, Fixtures.GangBuilder gang,
                    DeferralCause reason, String message) {
    }

    static Arguments deferred(String name, Deferral d) {
        return Arguments.of(Named.of(name, d));
    }

    static Stream<Arguments> deferrals() {
        List<Fixtures.NodeBuilder> fourNodes = List.of(anH100Node("sim-0"), anH100Node("sim-1"), anH100Node("sim-2"),
                anH100Node("sim-3"));
        return Stream.of(
                deferred("an empty cluster has no healthy nodes",
                        new Deferral(List.of(), c -> { }, aGang("j").task("w", 1, 1), DeferralCause.NO_HEALTHY_NODES,
                                "no node has registered")),
                deferred("a cluster whose nodes all failed has no healthy nodes",
                        new Deferral(List.of(anH100Node("n1")), c -> c.fail("n1"), aGang("j").task("w", 1, 1),
                                DeferralCause.NO_HEALTHY_NODES, "none of the 1 known nodes is healthy")),
                deferred("a model that only a failed node has does not match",
                        new Deferral(List.of(aNode("a").gpus(8, "A100"), anH100Node("h")), c -> c.fail("h"),
                                aGang("j").task("w", 1, 1).model("H100"), DeferralCause.NO_MATCHING_GPU_MODEL,
                                "task w needs GPU model H100; healthy nodes have A100")),
                deferred("a task of 16 GPUs is larger than any 8-GPU node",
                        new Deferral(fourNodes, c -> { }, aGang("j").task("w", 1, 16),
                                DeferralCause.TASK_LARGER_THAN_ANY_NODE,
                                "task w needs 16 GPUs, 1000 mCPU and 1024 MiB on one node; the largest healthy node has 8 GPUs")),
                deferred("a task needing more memory than any node is larger than any node",
                        new Deferral(fourNodes, c -> { }, aGang("j").task("w", 1, 1).memoryMiB(2_000_000),
                                DeferralCause.TASK_LARGER_THAN_ANY_NODE, "2000000 MiB on one node")),
                deferred("a gang of 5 x 8 is larger than a cluster of 32 GPUs",
                        new Deferral(fourNodes, c -> { }, aGang("j").task("w", 5, 8),
                                DeferralCause.GANG_LARGER_THAN_CLUSTER,
                                "needs 40 GPUs as 5 x 8, the cluster has 32 healthy GPUs")),
                deferred("a failed node shrinks the cluster a gang is measured against",
                        new Deferral(fourNodes, c -> c.fail("sim-3"), aGang("j").task("w", 4, 8),
                                DeferralCause.GANG_LARGER_THAN_CLUSTER,
                                "needs 32 GPUs as 4 x 8, the cluster has 24 healthy GPUs")),
                deferred("a gang that fits an empty cluster waits for free GPUs",
                        new Deferral(fourNodes, c -> c.dispatch(aGang("busy").task("w", 5, 4)),
                                aGang("j").task("w", 2, 8), DeferralCause.INSUFFICIENT_FREE_GPUS,
                                "needs 16 GPUs, 12 free")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("deferrals")
    void aGangThatDoesNotFitIsDeferredWithTheMostSpecificReason(Deferral d) {
        Fixtures.Cluster cluster = Fixtures.Cluster.of(d.nodes().toArray(Fixtures.NodeBuilder[]::new));
        d.before().accept(cluster);
        Map<String, List<Integer>> heldBefore = cluster.held();

        List<PlacementFact> facts = cluster.dispatch(d.gang());

        assertThat(facts).singleElement().isInstanceOfSatisfying(PlacementFact.PlacementDeferred.class, f -> {
            assertThat(f.reason()).isEqualTo(d.reason());
            assertThat(f.message()).contains(d.message());
        });
        assertThat(cluster.held()).as("a deferred gang holds nothing").isEqualTo(heldBefore);
    }
}
