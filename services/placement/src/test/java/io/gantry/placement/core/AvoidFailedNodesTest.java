package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/** A job that infrastructure failed runs next somewhere else when it fits there (retry by failure category). */
class AvoidFailedNodesTest {

    private static String nodeOf(Allocation a) {
        return a.placements().get(0).nodeId();
    }

    /** Job j's first run on one node; returns the cluster and that node, the other being empty. */
    private static Fixtures.Cluster firstRunOf(Fixtures.GangBuilder gang) {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = c.granted(gang);
        c.apply(c.state.runStarted(a.allocationId(), T0));
        return c;
    }

    private static String other(String node) {
        return node.equals("n1") ? "n2" : "n1";
    }

    @Test
    void aRunWhoseNodeFailedRunsAgainElsewhereEvenWhenItsNodeCameBackAndWouldPackTighter() {
        Fixtures.Cluster c = firstRunOf(aGang("j").task("w", 1, 4));
        String failedOn = nodeOf(c.state.liveAllocation("j").orElseThrow());
        c.fail(failedOn);
        assertThat(c.state.avoiding("j")).containsExactly(failedOn);
        c.apply(c.state.nodeRecovered(failedOn));
        // another job makes the recovered node the tighter fit for 4 GPUs: binpack alone would go back there
        Allocation filler = c.granted(aGang("filler").task("w", 1, 4));
        assertThat(nodeOf(filler)).isEqualTo(failedOn);

        Allocation second = c.granted(aGang("j").attempt(2).task("w", 1, 4));

        assertThat(nodeOf(second)).isEqualTo(other(failedOn));
        assertThat(c.state.avoiding("j")).as("a preference for the next grant only").isEmpty();
    }

    @Test
    void thePreferenceNeverMakesAJobWaitWhenOnlyTheFailedNodeHasRoom() {
        Fixtures.Cluster c = firstRunOf(aGang("j").task("w", 1, 8));
        String failedOn = nodeOf(c.state.liveAllocation("j").orElseThrow());
        c.fail(failedOn);
        assertThat(nodeOf(c.granted(aGang("big").task("w", 1, 8)))).as("the other node is full now")
                .isEqualTo(other(failedOn));
        c.apply(c.state.nodeRecovered(failedOn));

        Allocation second = c.granted(aGang("j").attempt(2).task("w", 1, 8));

        assertThat(nodeOf(second)).isEqualTo(failedOn);
    }

    @Test
    void aHardwareFaultOnAGpuTheRunHeldSendsItsNextRunToAnotherNode() {
        Fixtures.Cluster c = firstRunOf(aGang("j").task("w", 1, 2));
        Allocation first = c.state.liveAllocation("j").orElseThrow();
        String on = nodeOf(first);
        int gpu = first.placements().get(0).gpuIndices().get(0);
        c.apply(c.state.deviceFault(on, gpu, DeviceAction.CORDON_DEVICE, "Xid 79: GPU fell off the bus", T0,
                T0.plusSeconds(1)));
        assertThat(c.state.liveAllocation("j")).isEmpty();
        c.granted(aGang("filler").task("w", 1, 4)); // the faulty node, 7 GPUs left, stays the tighter fit

        Allocation second = c.granted(aGang("j").attempt(2).task("w", 1, 2));

        assertThat(nodeOf(second)).isEqualTo(other(on));
    }

    @Test
    void aRunStoppedForOtherReasonsIsNotSentAway() {
        Fixtures.Cluster c = firstRunOf(aGang("j").task("w", 1, 4));
        c.apply(c.state.preempt("j", 1, 0, T0));
        c.apply(c.state.expire(T0.plusSeconds(1)));
        assertThat(c.state.avoiding("j")).isEmpty();
    }

    @Test
    void aReleaseReplayedBeforeTheNodeFailureAtARestoreAvoidsEveryNodeOfTheRunAndAnEndedJobIsForgotten() {
        Fixtures.Cluster live = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"), anH100Node("n3"));
        Allocation gang = live.granted(aGang("j").task("w", 2, 8));
        List<PlacementFact> failure = live.apply(live.state.nodeFailed(nodeOf(gang), T0));
        assertThat(live.state.avoiding("j")).containsExactly(nodeOf(gang));

        // a restart reads the allocation topic before recovery's: the release comes without the failure
        Fixtures.Cluster restored = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"), anH100Node("n3"));
        restored.state.replay(new PlacementFact.AllocationGranted(gang));
        failure.stream().filter(f -> f instanceof PlacementFact.AllocationReleased).forEach(restored.state::replay);
        assertThat(restored.state.avoiding("j")).containsExactlyInAnyOrderElementsOf(
                gang.placements().stream().map(PlacedTask::nodeId).distinct().toList());

        restored.state.forget("j");
        assertThat(restored.state.avoiding("j")).isEmpty();
    }
}
