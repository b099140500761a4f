package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job the queue ended leaves nothing behind: the state holds what live runs and jobs still waiting need, so it
 * (and a snapshot of it) stays bounded however many jobs ran.
 */
class ForgetEndedJobsTest {

    @Test
    void theGrantedAttemptOfAJobStillWaitingMakesAnOlderDispatchStale() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = c.granted(aGang("j").task("w", 1, 4));
        c.apply(c.state.runEnded(a.allocationId(), RunResult.failed(1, "boom", T0.plusSeconds(5))));

        assertThat(c.state.grantedAttempt("j")).hasValue(1);
        assertThat(c.state.dispatch(aGang("j").task("w", 1, 4).build(), T0.plusSeconds(6))).isEmpty();
    }

    @Test
    void anEndedJobIsForgottenWithItsGrantedAttemptAndTheNodesItAvoided() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        Allocation a = c.granted(aGang("j").task("w", 1, 4));
        c.apply(c.state.nodeFailed(a.placements().get(0).nodeId(), T0.plusSeconds(1)));
        assertThat(c.state.avoidingJobs()).containsExactly("j");

        c.state.forget("j");

        assertThat(c.state.grantedAttempt("j")).isEmpty();
        assertThat(c.state.avoiding("j")).isEmpty();
        assertThat(c.state.avoidingJobs()).isEmpty();
    }

    @Test
    void aJobCancelledWhileItRunsKeepsItsRunUntilTheRelease() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = c.granted(aGang("j").task("w", 1, 4));

        c.state.forget("j");

        assertThat(c.state.liveAllocation("j")).contains(a);
        assertThat(c.state.dispatch(aGang("j").task("w", 1, 4).build(), T0.plusSeconds(1)))
                .as("a job holding devices is never placed twice").isEmpty();
        List<PlacementFact> released = c.apply(c.state.cancel("j", 1, T0.plusSeconds(2)));
        assertThat(released).hasSize(1);
        assertThat(c.state.liveAllocations()).isEmpty();
        assertThat(c.state.grantedAttempt("j")).isEmpty();
    }
}
