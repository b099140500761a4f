package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * GPUs that drain for a starving gang are not held idle while the runs there end at unknown times: runs of jobs that
 * declare checkpoints borrow them, and are stopped (least work lost first, only as many as the gang needs) once the
 * gang is due — when it would fit with the borrowers gone.
 */
class BorrowedDrainTest {
    private static final GangRequest BIG = aGang("big").task("w", 1, 8).build();

    private static Fixtures.Cluster drainingForBig() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation old = c.granted(aGang("old").task("w", 1, 4));
        c.apply(c.state.runStarted(old.allocationId(), T0));
        c.apply(c.state.reserve(BIG, T0));
        return c;
    }

    private static List<PlacementFact> dispatch(Fixtures.Cluster c, Fixtures.GangBuilder g, Instant at) {
        return c.apply(c.state.dispatch(g.build(), at));
    }

    @Test
    void aJobWithCheckpointsBorrowsTheDrainingGpusAndOneWithoutWaits() {
        Fixtures.Cluster c = drainingForBig();
        Instant t1 = T0.plusSeconds(60);

        assertThat(dispatch(c, aGang("plain").task("w", 1, 2), t1)).singleElement()
                .isInstanceOf(PlacementFact.PlacementDeferred.class);
        assertThat(dispatch(c, aGang("saver").task("w", 1, 2).checkpoints(), t1)).first()
                .isInstanceOf(PlacementFact.AllocationGranted.class);
        assertThat(c.state.stopBorrowers(BIG, t1)).as("old still runs: big is not due").isEmpty();
    }

    @Test
    void whenTheGangIsDueTheFewestBorrowersLosingTheLeastAreStoppedAndNoneBorrowsAgain() {
        Fixtures.Cluster c = drainingForBig();
        Instant t1 = T0.plusSeconds(60);
        Allocation early = ((PlacementFact.AllocationGranted) dispatch(c, aGang("early").task("w", 1, 2).checkpoints(),
                t1).get(0)).allocation();
        Allocation late = ((PlacementFact.AllocationGranted) dispatch(c, aGang("late").task("w", 1, 2).checkpoints(),
                t1.plusSeconds(600)).get(0)).allocation();
        c.state.checkpointCommitted("early", 1, t1.plusSeconds(1700));
        Instant t2 = t1.plusSeconds(1800);

        c.apply(c.state.runEnded(c.state.liveAllocations().stream().filter(a -> a.jobId().equals("old"))
                .findFirst().orElseThrow().allocationId(), RunResult.succeeded(t2)));
        List<PlacementFact> stops = c.apply(c.state.stopBorrowers(BIG, t2));

        // big needs all 8: both borrowers go; "early" saved 100 s ago, "late" never (1,200 s of work): early first
        assertThat(stops).hasSize(2).allSatisfy(f -> assertThat(f).isInstanceOf(PlacementFact.PreemptionRequested.class));
        assertThat(stops).extracting(f -> ((PlacementFact.PreemptionRequested) f).allocation().jobId())
                .containsExactly("early", "late");
        assertThat(((PlacementFact.PreemptionRequested) stops.get(0)).why())
                .isEqualTo("node n1 were lent to this run while they drained for job big, which is due now; this run"
                        + " stops and resumes from its last checkpoint");
        assertThat(c.state.stopBorrowers(BIG, t2)).as("asked once").isEmpty();
        assertThat(dispatch(c, aGang("another").task("w", 1, 1).checkpoints(), t2)).as("no borrowing once due")
                .singleElement().isInstanceOf(PlacementFact.PlacementDeferred.class);
        assertThat(List.of(early.jobId(), late.jobId())).containsExactly("early", "late");
    }

    @Test
    void onlyTheBorrowersTheGangNeedsGoneAreStopped() {
        Fixtures.Cluster c = drainingForBig();
        GangRequest six = aGang("six").task("w", 1, 6).build();
        c.apply(c.state.cancelReservation("big", 1));
        c.apply(c.state.reserve(six, T0));
        Instant t1 = T0.plusSeconds(60);
        dispatch(c, aGang("a").task("w", 1, 2).checkpoints(), t1);
        dispatch(c, aGang("b").task("w", 1, 2).checkpoints(), t1.plusSeconds(300));
        Instant t2 = t1.plusSeconds(900);
        c.apply(c.state.runEnded(c.state.liveAllocations().stream().filter(a -> a.jobId().equals("old"))
                .findFirst().orElseThrow().allocationId(), RunResult.succeeded(t2)));

        // six needs 6 of the 8: one borrower of 2 goes, the one that ran the shortest ("b")
        assertThat(c.apply(c.state.stopBorrowers(six, t2)))
                .extracting(f -> ((PlacementFact.PreemptionRequested) f).allocation().jobId()).containsExactly("b");
    }

    @Test
    void aReservationRecordedBeforeBorrowingExistedLendsNothing() {
        Fixtures.Cluster c = drainingForBig();
        String node = "n1";
        c.apply(List.of(new PlacementFact.NodeRegistered(c.state.node(node).orElseThrow()
                .withLabel(NodeSpec.RESERVED_AT_LABEL, null))));
        assertThat(dispatch(c, aGang("saver").task("w", 1, 2).checkpoints(), T0.plusSeconds(60))).singleElement()
                .isInstanceOf(PlacementFact.PlacementDeferred.class);
    }

    @Test
    void aBorrowerDoesNotMakeTheDrainLongerForTimeLimitedBackfill() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation old = c.granted(aGang("old").task("w", 1, 4).timeLimit(3600));
        c.apply(c.state.runStarted(old.allocationId(), T0));
        c.apply(c.state.reserve(BIG, T0));
        Instant t1 = T0.plusSeconds(60);
        dispatch(c, aGang("saver").task("w", 1, 2).checkpoints(), t1);

        assertThat(c.state.estimate("big", t1)).as("old's time limit, not the borrower's unknown end")
                .isEqualTo(T0.plusSeconds(3600));
        assertThat(dispatch(c, aGang("quick").task("w", 1, 1).timeLimit(600), t1)).first()
                .isInstanceOf(PlacementFact.AllocationGranted.class);
    }
}
