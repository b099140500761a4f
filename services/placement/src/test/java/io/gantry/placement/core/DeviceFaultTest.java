package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.stream.IntStream;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/** Recovery's device-fault decisions applied to the cluster: cordoned GPUs, stopped and failed runs. */
class DeviceFaultTest {

    private static List<PlacementFact> fault(Fixtures.Cluster c, String node, Integer gpu, DeviceAction action,
                                             Instant faultAt) {
        return c.apply(c.state.deviceFault(node, gpu, action, "Xid 79 on GPU " + gpu + " of " + node, faultAt,
                faultAt.plusMillis(200)));
    }

    private static NodeSpec node(Fixtures.Cluster c, String id) {
        return c.state.nodes().stream().filter(n -> n.nodeId().equals(id)).findFirst().orElseThrow();
    }

    private static List<String> describe(List<PlacementFact> facts) {
        return facts.stream().map(f -> {
            if (f instanceof PlacementFact.NodeRegistered r) {
                return "registered " + r.node().nodeId() + " cordoned=" + r.node().cordoned() + " gpus="
                        + r.node().cordonedGpus();
            }
            if (f instanceof PlacementFact.AllocationReleased r) {
                return "released " + r.allocation().jobId() + " " + r.reason();
            }
            if (f instanceof PlacementFact.RunFailed r) {
                return "failed " + r.allocation().jobId() + ": " + r.message();
            }
            return f.toString();
        }).toList();
    }

    @Test
    void aHardwareFaultCordonsTheGpuAndReleasesOnlyTheRunHoldingItAsADeviceFault() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = c.granted(aGang("a").task("w", 1, 4));
        Allocation b = c.granted(aGang("b").task("w", 1, 4));
        int gpu = b.placements().get(0).gpuIndices().get(1);
        assertThat(describe(fault(c, "n1", gpu, DeviceAction.CORDON_DEVICE, T0.plusSeconds(5))))
                .containsExactly("registered n1 cordoned=false gpus=[" + gpu + "]", "released b DEVICE_FAULT");
        assertThat(c.state.liveAllocation("a")).contains(a);
        assertThat(c.state.freeCapacity()).singleElement().extracting(FreeCapacity::freeGpus).isEqualTo(3);
        assertThat(node(c, "n1").labels()).containsEntry(NodeSpec.CORDON_REASON_LABEL, "Xid 79 on GPU " + gpu + " of n1");
    }

    @Test
    void aRunPlacedOnTheGpuBetweenTheFaultAndTheCordonIsStoppedToo() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        Instant faultAt = T0.minusMillis(300); // reported while the GPU was idle; the decision is a round trip away
        List<PlacementFact> granted = c.dispatch(aGang("j").task("w", 1, 1)); // granted at T0, on the faulty GPU
        int gpu = ((PlacementFact.AllocationGranted) granted.get(0)).allocation().placements().get(0).gpuIndices()
                .get(0);
        List<PlacementFact> decided = c.apply(c.state.deviceFault("n1", gpu, DeviceAction.CORDON_DEVICE,
                "Xid 79 on GPU " + gpu + " of n1", faultAt, T0.plusSeconds(1)));
        assertThat(describe(decided))
                .containsExactly("registered n1 cordoned=false gpus=[" + gpu + "]", "released j DEVICE_FAULT");
        assertThat(c.state.liveAllocation("j")).isEmpty();

        // a restore replays the same facts and ends in the same place: the release is a fact, not a side effect
        Fixtures.Cluster restored = Fixtures.Cluster.of(anH100Node("n1"));
        restored.apply(granted);
        restored.apply(decided);
        assertThat(restored.state.liveAllocations()).isEqualTo(c.state.liveAllocations()).isEmpty();
        assertThat(node(restored, "n1").cordonedGpus()).containsExactly(gpu);
        assertThat(restored.state.freeCapacity()).isEqualTo(c.state.freeCapacity());
    }

    @Test
    void noLaterJobIsPlacedOnACordonedGpu() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        fault(c, "n1", 3, DeviceAction.CORDON_DEVICE, T0);
        IntStream.range(0, 7).forEach(i -> assertThat(c.granted(aGang("j" + i).task("w", 1, 1)).placements().get(0)
                .gpuIndices()).doesNotContain(3));
        assertThat(c.deferred(aGang("last").task("w", 1, 1)).reason()).isNotNull();
        assertThat(c.held().get("n1")).doesNotContain(3).hasSize(7);
    }

    @Test
    void anEightGpuGangNoLongerFitsANodeWithACordonedGpuWithTheTopologyPlacerEither() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        fault(c, "n1", 0, DeviceAction.CORDON_DEVICE, T0);
        assertThat(c.granted(aGang("a").task("w", 1, 8)).placements().get(0).nodeId()).isEqualTo("n2");
        c.deferred(aGang("b").task("w", 1, 8));
    }

    @Test
    void aShareGrantedBetweenTheFaultAndTheCordonIsStoppedToo() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(Fixtures.aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(500)); // granted at T0, after the fault
        assertThat(describe(c.apply(c.state.deviceFault("n1", 0, DeviceAction.CORDON_DEVICE, "Xid 79 on GPU 0 of n1",
                T0.minusSeconds(1), T0.plusSeconds(1)))))
                .containsExactly("registered n1 cordoned=false gpus=[0]", "released a DEVICE_FAULT");
    }

    @Test
    void aCordonedGpuTakesNoNewShareEvenWhileItStillHoldsOne() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(Fixtures.aNode("n1").gpus(1, "H100"));
        c.granted(aGang("a").task("w", 1, 0).fraction(500));
        // a restore may replay the cordon (placement.node-events) before the share's release (allocation-events)
        c.apply(List.of(new PlacementFact.NodeRegistered(node(c, "n1").withCordonedGpus(List.of(0)))));
        assertThat(c.state.liveAllocation("a")).isPresent();
        c.deferred(aGang("b").task("w", 1, 0).fraction(300));
    }

    @Test
    void aReleasedRunOnACordonedGpuDoesNotFreeTheGpu() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = c.granted(aGang("a").task("w", 1, 8));
        fault(c, "n1", 2, DeviceAction.CORDON_DEVICE, T0.plusSeconds(1));
        assertThat(c.state.liveAllocation("a")).isEmpty();
        assertThat(c.state.freeCapacity()).singleElement().extracting(FreeCapacity::freeGpus).isEqualTo(7);
        assertThat(a.placements().get(0).gpuIndices()).contains(2);
    }

    @Test
    void anApplicationFaultFailsTheRunAndLeavesTheDeviceInService() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        c.granted(aGang("a").task("w", 1, 8));
        assertThat(describe(fault(c, "n1", 5, DeviceAction.FAIL_RUNS, T0.plusSeconds(1))))
                .containsExactly("failed a: Xid 79 on GPU 5 of n1", "released a RUN_FAILED");
        assertThat(node(c, "n1").cordonedGpus()).isEmpty();
        c.granted(aGang("b").task("w", 1, 8));
    }

    @Test
    void aRunGrantedAfterTheFaultIsNeverHitByALateOrRepeatedDecision() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        c.granted(aGang("a").task("w", 1, 8)); // granted at T0
        assertThat(fault(c, "n1", 5, DeviceAction.FAIL_RUNS, T0.minusSeconds(1))).isEmpty();
    }

    @Test
    void aRepeatedHardwareDecisionWritesNothingNew() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        fault(c, "n1", 5, DeviceAction.CORDON_DEVICE, T0);
        assertThat(fault(c, "n1", 5, DeviceAction.CORDON_DEVICE, T0.plusSeconds(9))).isEmpty();
    }

    @Test
    void aNodeWideFaultCordonsTheNodeAndReleasesEveryRunOnIt() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"), anH100Node("n2"));
        c.granted(aGang("a").task("w", 1, 4));
        c.granted(aGang("b").task("w", 1, 4));
        assertThat(describe(fault(c, "n1", null, DeviceAction.CORDON_NODE, T0.plusSeconds(1))))
                .containsExactly("registered n1 cordoned=true gpus=[]", "released a DEVICE_FAULT",
                        "released b DEVICE_FAULT");
        assertThat(c.granted(aGang("c").task("w", 1, 4)).placements().get(0).nodeId()).isEqualTo("n2");
    }

    @Test
    void aDrainCordonsTheNodeAndTheGpuAndStopsOnlyTheRunHoldingTheGpu() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        Allocation a = c.granted(aGang("a").task("w", 1, 4));
        c.granted(aGang("b").task("w", 1, 4));
        int gpu = a.placements().get(0).gpuIndices().get(0);
        assertThat(describe(fault(c, "n1", gpu, DeviceAction.DRAIN_NODE, T0.plusSeconds(1))))
                .containsExactly("registered n1 cordoned=true gpus=[" + gpu + "]", "released a DEVICE_FAULT");
        assertThat(c.state.liveAllocation("b")).isPresent();
    }

    @Test
    void anOperatorReturnsTheGpuToServiceAfterRepairAndARestartKeepsTheCordonUntilThen() {
        Fixtures.Cluster c = Fixtures.Cluster.of(anH100Node("n1"));
        fault(c, "n1", 3, DeviceAction.CORDON_DEVICE, T0);
        // the backend re-registers its nodes at every start, without placement's control labels
        c.apply(c.state.register(anH100Node("n1").build()));
        assertThat(node(c, "n1").cordonedGpus()).containsExactly(3);
        c.apply(c.state.uncordonGpus("n1", java.util.Set.of()));
        assertThat(node(c, "n1").cordonedGpus()).isEmpty();
        assertThat(node(c, "n1").labels()).doesNotContainKey(NodeSpec.CORDON_REASON_LABEL);
        c.granted(aGang("a").task("w", 1, 8));
    }

    @Test
    void aStrayCordonLabelValueIsIgnoredPartByPart() {
        NodeSpec n = anH100Node("n1").build().withLabel(NodeSpec.CORDONED_GPUS_LABEL, "1, x,4");
        assertThat(n.cordonedGpus()).containsExactly(1, 4);
    }
}
