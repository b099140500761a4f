package io.gantry.placement.core;

import io.gantry.model.GpuShares;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** GPU fractions and MIG instances: one unit model (GpuShare), never oversubscribed unless configured. */
class GpuSharingTest {

    private static Fixtures.Cluster cluster(GpuSharing sharing, Fixtures.NodeBuilder... nodes) {
        return Fixtures.Cluster.with(new TopologyPlacer(PlacementPolicy.BINPACK, Map.of(), sharing), nodes);
    }

    private static Fixtures.Cluster cluster(Fixtures.NodeBuilder... nodes) {
        return cluster(GpuSharing.DEFAULT, nodes);
    }

    private static GpuShare share(Allocation a) {
        PlacedTask p = a.placements().get(0);
        assertThat(p.gpuIndices()).as("a share holds no whole GPU").isEmpty();
        return p.gpuShares().get(0);
    }

    @Test
    void everyStandardMigProfileIsWorthWhatTheQueueChargesForItsName() {
        // the queue charges a MIG request by its name before placement picks a device; placement holds it by the
        // catalogue's compute slices: the two must be the same amount
        MigProfiles.SHAPES.forEach((shape, profiles) -> profiles.forEach(p ->
                assertThat(p.milli()).as(shape + " " + p.name()).isEqualTo(GpuShares.migMilli(p.name()))));
    }

    @Test
    void aHalfGpuTaskGetsHalfOfOneDeviceAndItsMemoryNotTheWholeGpu() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100"));

        Allocation a = c.granted(aGang("j").task("w", 1, 0).fraction(500));

        assertThat(share(a)).isEqualTo(GpuShare.fraction(0, 500, 40_960));
        assertThat(a.placements().get(0).gpuModel()).isEqualTo("H100");
        assertThat(a.placements().get(0).gpuMilli()).isEqualTo(500);
        assertThat(c.state.freeCapacity()).as("a shared device is not a free whole GPU")
                .usingRecursiveFieldByFieldElementComparatorIgnoringFields("nodesWithFree", "largestFreeMilli", "largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(new FreeCapacity("H100", 1, 1));
    }

    @Test
    void theCpuAndMemoryNextToAFreeGpuAreReportedSoAGangShortOfCpuIsNotWokenByFreeGpusAlone() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100"));
        long cpuBefore = c.state.freeCapacity().get(0).largestFreeCpuMillis();
        c.granted(aGang("cpu-hog").task("w", 1, 1).cpuMillis((int) (cpuBefore - 500)));
        FreeCapacity after = c.state.freeCapacity().get(0);
        assertThat(after.freeGpus()).isEqualTo(1);
        assertThat(after.largestFreeCpuMillis()).isEqualTo(500);
        assertThat(after.largestFreeMemoryMiB()).isPositive();
    }

    @Test
    void whenNoWholeGpuIsFreeTheLargestFreePartOfASharedDeviceIsReportedForParkedFractions() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(400));
        assertThat(c.state.freeCapacity()).singleElement()
                .satisfies(f -> assertThat(f.largestFreeMilli()).isEqualTo(600));
        c.granted(aGang("b").task("w", 1, 0).fraction(600));
        assertThat(c.state.freeCapacity()).singleElement()
                .satisfies(f -> assertThat(f.largestFreeMilli()).isZero());
    }

    @Test
    void fractionsBinpackOntoAnAlreadySharedDeviceAndSpillOnlyWhenItIsFull() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(4, "H100"));

        GpuShare first = share(c.granted(aGang("a").task("w", 1, 0).fraction(400)));
        GpuShare second = share(c.granted(aGang("b").task("w", 1, 0).fraction(600)));
        GpuShare third = share(c.granted(aGang("c").task("w", 1, 0).fraction(100)));

        assertThat(second.index()).as("fills the shared device to exactly 1000").isEqualTo(first.index());
        assertThat(third.index()).isNotEqualTo(first.index());
        assertThat(c.state.freeCapacity()).usingRecursiveFieldByFieldElementComparatorIgnoringFields("nodesWithFree", "largestFreeMilli", "largestFreeCpuMillis", "largestFreeMemoryMiB")
                .containsExactly(new FreeCapacity("H100", 2, 2));
    }

    @Test
    void anExplicitGpuMemoryLimitKeepsTwoFractionsOffOneDeviceWhenTheirMemoryWouldNotFit() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100"));

        GpuShare big = share(c.granted(aGang("a").task("w", 1, 0).fraction(200, 60_000)));
        GpuShare other = share(c.granted(aGang("b").task("w", 1, 0).fraction(200, 30_000)));

        assertThat(big.memoryMiB()).isEqualTo(60_000);
        assertThat(other.index()).isNotEqualTo(big.index());
    }

    @Test
    void aSharedDeviceIsNeverGrantedWholeAndReleasingItsLastShareReturnsIt() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(300));
        Allocation b = c.granted(aGang("b").task("w", 1, 0).fraction(300));

        assertThat(c.deferred(aGang("whole").task("w", 1, 1)).reason()).isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
        c.apply(c.state.cancel("a", 1, T0));
        assertThat(c.deferred(aGang("whole2").task("w", 1, 1)).reason()).as("one share is still held")
                .isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
        c.apply(c.state.cancel("b", 1, T0));

        assertThat(c.granted(aGang("whole3").task("w", 1, 1)).placements().get(0).gpuIndices()).containsExactly(0);
        assertThat(b.placements().get(0).gpuShares()).hasSize(1);
    }

    @Test
    void aFractionDoesNotFitWhereTheDeviceIsFullAndTheDeferralSaysWhatWasAskedFor() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(700));

        PlacementDecision.Deferred d = c.deferred(aGang("b").task("w", 1, 0).fraction(400));

        assertThat(d.reason()).isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
        assertThat(d.message()).isEqualTo("task w needs 400/1000 of one GPU; no healthy GPU has that much unshared "
                + "room free (with the CPU on its NUMA socket and the memory)");
    }

    @Test
    void anOvercommitFactorLetsFractionsSumBeyondOneGpuUpToTheFactor() {
        Fixtures.Cluster c = cluster(new GpuSharing(2.0, MigProfiles.standard()), aNode("n1").gpus(1, "H100"));

        for (String job : List.of("a", "b", "c")) {
            assertThat(share(c.granted(aGang(job).task("w", 1, 0).fraction(600))).index()).isZero();
        }
        assertThat(c.deferred(aGang("d").task("w", 1, 0).fraction(600)).reason())
                .as("1800 + 600 > 2000").isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
    }

    @Test
    void migInstancesTakeAlignedFreeSliceRangesOfOneMigCapableGpu() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100").migCapable());

        GpuShare a = share(c.granted(aGang("a").task("w", 1, 0).mig("1g.10gb")));
        GpuShare b = share(c.granted(aGang("b").task("w", 1, 0).mig("1g.10gb")));
        GpuShare d = share(c.granted(aGang("d").task("w", 1, 0).mig("3g.40gb")));
        GpuShare e = share(c.granted(aGang("e").task("w", 1, 0).mig("4g.40gb")));

        assertThat(a).isEqualTo(new GpuShare(0, 142, 10_240, "1g.10gb", 0));
        assertThat(b).isEqualTo(new GpuShare(0, 142, 10_240, "1g.10gb", 1));
        assertThat(d).as("3g starts at 0 or 4; 0-3 is taken").isEqualTo(new GpuShare(0, 428, 40_960, "3g.40gb", 4));
        assertThat(e).as("4g only starts at 0: the other GPU").isEqualTo(new GpuShare(1, 571, 40_960, "4g.40gb", 0));
    }

    @Test
    void aFullGpuMigInstanceIsWorthExactlyOneGpu() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(1, "A100").migCapable());

        assertThat(share(c.granted(aGang("a").task("w", 1, 0).mig("7g.80gb"))))
                .isEqualTo(new GpuShare(0, 1000, 81_920, "7g.80gb", 0));
    }

    @Test
    void fractionsAndMigNeverShareADevice() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100").migCapable());

        GpuShare fraction = share(c.granted(aGang("a").task("w", 1, 0).fraction(100)));
        GpuShare mig = share(c.granted(aGang("b").task("w", 1, 0).mig("1g.10gb")));
        PlacementDecision.Deferred next = c.deferred(aGang("c").task("w", 1, 0).mig("7g.80gb"));

        assertThat(mig.index()).isNotEqualTo(fraction.index());
        assertThat(next.reason()).isEqualTo(DeferralCause.INSUFFICIENT_FREE_GPUS);
    }

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource(delimiter = '|', value = {
            "1g.10gb | NO_MATCHING_GPU_MODEL | task w asks for MIG profile 1g.10gb; no healthy MIG-capable GPU offers it",
            "5g.50gb | NO_MATCHING_GPU_MODEL | task w asks for MIG profile 5g.50gb; no healthy MIG-capable GPU offers it (it is not a standard profile of A100-40GB, A100-80GB or H100-80GB)"})
    void gpusWithoutMigCapableNeverHostMig(String profile, DeferralCause reason, String message) {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100"));

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 1, 0).mig(profile));

        assertThat(d.reason()).isEqualTo(reason);
        assertThat(d.message()).isEqualTo(message);
    }

    @Test
    void aFractionThatNeedsMoreMemoryThanAnyGpuHasIsLargerThanAnyNode() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(2, "H100"));

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 1, 0).fraction(100, 100_000));

        assertThat(d.reason()).isEqualTo(DeferralCause.TASK_LARGER_THAN_ANY_NODE);
        assertThat(d.message()).isEqualTo("task w needs 100000 MiB of one GPU's memory; the largest healthy GPU has 81920 MiB");
    }

    @Test
    void aGangMixesWholeGpusAndFractionsAndReleaseRestoresTheInventoryExactly() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(8, "H100").migCapable(), aNode("n2").gpus(8, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(250));
        InventorySnapshot before = c.state.snapshot();

        Allocation g = c.granted(aGang("g").task("w", 2, 2).task("tiny", 3, 0).fraction(250).task("m", 1, 0).mig("2g.20gb"));
        c.apply(c.state.cancel("g", 1, T0));

        assertThat(g.placements()).hasSize(6);
        assertThat(g.placements().stream().mapToLong(PlacedTask::gpuMilli).sum()).isEqualTo(4_000 + 750 + 285);
        assertThat(c.state.snapshot()).isEqualTo(before);
    }

    @Test
    void theSnapshotShowsWhoHoldsWhichShare() {
        Fixtures.Cluster c = cluster(aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(300));

        NodeView n = c.state.snapshot().nodes().get(0);

        assertThat(n.allocatedTo()).isEmpty();
        assertThat(n.freeGpuCount()).isZero();
        assertThat(n.shares()).containsExactly(Map.entry(0, List.of(new Inventory.ShareHolder("a",
                GpuShare.fraction(0, 300, 24_576)))));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "gpuMilli 0       | 0    |      | 0 | task w: gpuMilli must be 1..999, was 0",
            "gpuMilli 1000    | 1000 |      | 0 | task w: gpuMilli must be 1..999, was 1000",
            "with whole GPUs  | 500  |      | 1 | task w: gpuMilli and migProfile need gpus = 0",
            "both kinds       | 500  | 1g.10gb | 0 | task w: give gpuMilli or migProfile, not both"})
    void invalidSharedRequestsAreRefused(String name, int milli, String mig, int gpus, String message) {
        assertThatThrownBy(() -> new TaskGroup("w", 1, gpus, null, 0, 0, List.of(), null, null, milli, null, mig))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void overcommitBelowOneAndUnknownMigShapesAreRefused() {
        assertThatThrownBy(() -> new GpuSharing(0.5, MigProfiles.standard()))
                .hasMessage("GPU overcommit must be a finite factor >= 1.0, was 0.5");
        assertThatThrownBy(() -> new MigProfiles(Map.of("H200", "H200-141GB")))
                .hasMessageStartingWith("GPU model H200: unknown MIG shape `H200-141GB`");
        assertThat(new MigProfiles(Map.of("GH", "H100-80GB")).shape("GH", 1)).isEqualTo("H100-80GB");
    }

    @Test
    void theStandardShapesHaveSevenComputeSlicesAndValidPlacements() {
        MigProfiles.SHAPES.forEach((shape, profiles) -> {
            assertThat(profiles).extracting(MigProfile::name).doesNotHaveDuplicates();
            assertThat(profiles.get(profiles.size() - 1).computeSlices()).as(shape).isEqualTo(7);
        });
        assertThat(MigProfiles.standard().shape("A100", 40_960)).isEqualTo("A100-40GB");
        assertThat(MigProfiles.standard().shape("A100", 81_920)).isEqualTo("A100-80GB");
        assertThat(MigProfiles.standard().shape("L4", 24_576)).isNull();
    }
}
