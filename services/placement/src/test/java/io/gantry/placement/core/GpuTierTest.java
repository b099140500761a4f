package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A task's GPU tier is never ignored: the queue pins a task to the GPU model of the quota flavour it reserved
 * (gpuModel) and keeps the tier, so a task may name both. Its models are then the tier's models that are also the
 * flavour's; an unknown tier, or a flavour outside the tier, defers the job saying why.
 */
class GpuTierTest {
    private static final Map<String, List<String>> TIERS = Map.of("training", List.of("H100", "A100"),
            "inference", List.of("L4"));

    /** Node h has 8 H100, node a has 8 A100. */
    private static Fixtures.Cluster pool(GangPlacer placer) {
        return Fixtures.Cluster.with(placer, aNode("h").gpus(8, "H100"), aNode("a").gpus(8, "A100"));
    }

    static Stream<Arguments> placers() {
        return Stream.of(
                Arguments.of(Named.of("topology placer", new TopologyPlacer(PlacementPolicy.BINPACK, TIERS))),
                Arguments.of(Named.of("first-fit placer", new FirstFitPlacer(TIERS))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placers")
    void anUnknownTierIsDeferredEvenWhenTheQueuePinnedTheTaskToAModel(GangPlacer placer) {
        Fixtures.Cluster c = pool(placer);

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 1, 1).model("H100").tier("nope"));

        assertThat(d.reason()).isEqualTo(DeferralCause.NO_MATCHING_GPU_MODEL);
        assertThat(d.message()).isEqualTo("task w asks for GPU tier nope, which is not configured (tiers: inference, "
                + "training)");
        assertThat(c.held()).as("nothing ran on the flavour's H100").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placers")
    void aKnownTierWithTheFlavourModelRunsOnlyOnThatModel(GangPlacer placer) {
        Fixtures.Cluster c = pool(placer);

        Allocation onA100 = c.granted(aGang("j").task("w", 1, 2).model("A100").tier("training"));

        assertThat(onA100.placements()).extracting(PlacedTask::nodeId, PlacedTask::gpuModel)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a", "A100"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placers")
    void aFlavourModelOutsideTheTierIsDeferredNamingBoth(GangPlacer placer) {
        Fixtures.Cluster c = pool(placer);

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 1, 1).model("H100").tier("inference"));

        assertThat(d.reason()).isEqualTo(DeferralCause.NO_MATCHING_GPU_MODEL);
        assertThat(d.message()).isEqualTo("task w asks for GPU tier inference (L4) and GPU model H100, which the tier "
                + "does not include");
        assertThat(c.held()).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("placers")
    void aTierAloneTakesItsModelsInPreferenceOrder(GangPlacer placer) {
        Fixtures.Cluster c = pool(placer);
        c.granted(aGang("busy").task("w", 1, 7).model("H100"));

        Allocation a = c.granted(aGang("j").task("w", 1, 2).tier("training"));

        assertThat(a.placements().get(0).gpuModel()).as("H100 has 1 free, so the second choice").isEqualTo("A100");
    }

    @Test
    void theTierOfATaskWithoutGpusIsStillChecked() {
        Fixtures.Cluster c = pool(new TopologyPlacer(PlacementPolicy.BINPACK, TIERS));

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 1, 0).tier("nope"));

        assertThat(d.reason()).isEqualTo(DeferralCause.NO_MATCHING_GPU_MODEL);
        assertThat(d.message()).contains("tier nope, which is not configured");
    }

    @Test
    void theModelsOfATierIntersectedWithTheTasksOwnListKeepTheTasksOrder() {
        GpuTiers tiers = new GpuTiers(Map.of("training", List.of("H100", "A100", "L40S")));
        TaskGroup t = new TaskGroup("w", 1, 1, null, 0, 0, List.of("L40S", "A100", "B200"), "training", null);

        assertThat(tiers.accepted(t)).containsExactly("L40S", "A100");
        assertThat(tiers.accepted(t.withTier(null))).containsExactly("L40S", "A100", "B200");
        assertThat(tiers.accepted(t.withTier("nope"))).isNull();
    }
}
