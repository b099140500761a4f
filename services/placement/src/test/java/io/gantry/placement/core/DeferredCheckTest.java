package io.gantry.placement.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.aNode;
import static org.assertj.core.api.Assertions.assertThat;

/** After a release, placement tells which of the gangs it deferred would fit now, each on its own, changing nothing. */
class DeferredCheckTest {

    @Test
    void eachGangIsCheckedOnItsOwnSoANoIsExactAndTheCheckLeavesTheInventoryAsItWas() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"), aNode("n2").gpus(8, "H100"));
        Allocation running = c.granted(aGang("running").task("w", 1, 8));
        c.granted(aGang("other").task("w", 1, 8));
        GangRequest first = aGang("first").task("w", 1, 8).build();
        GangRequest second = aGang("second").task("w", 1, 8).build();
        GangRequest small = aGang("small").task("w", 1, 0).cpuMillis(1000).build();
        c.apply(c.state.cancel("running", 1, Instant.EPOCH)); // 8 GPUs free on one node
        InventorySnapshot before = c.state.snapshot();

        List<ClusterState.DeferredCheck> checks = c.state.checkDeferred(List.of(first, second, small),
                Instant.EPOCH, 10);

        // both fit the one free node on their own; the queue may dispatch only one of them (quota, order), so
        // placement must not answer "no" for the second on the first's account
        assertThat(checks).containsExactly(new ClusterState.DeferredCheck("first", 1, true),
                new ClusterState.DeferredCheck("second", 1, true),
                new ClusterState.DeferredCheck("small", 1, true));
        GangRequest huge = aGang("huge").task("w", 2, 8).build();
        assertThat(c.state.checkDeferred(List.of(huge), Instant.EPOCH, 10))
                .containsExactly(new ClusterState.DeferredCheck("huge", 1, false));
        assertThat(c.state.snapshot()).isEqualTo(before);
        assertThat(running.totalGpus()).isEqualTo(8);
    }

    @Test
    void atMostTheLimitIsCheckedAndGangsAlreadyPlacedAreSkipped() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"));
        c.granted(aGang("placed").task("w", 1, 1));
        GangRequest placed = aGang("placed").task("w", 1, 1).build();
        GangRequest a = aGang("a").task("w", 1, 1).build();
        GangRequest b = aGang("b").task("w", 1, 1).build();
        assertThat(c.state.checkDeferred(List.of(placed, a, b), Instant.EPOCH, 1))
                .containsExactly(new ClusterState.DeferredCheck("a", 1, true));
    }

    @Test
    void deferredGangsKeepTheirPlaceUntilGrantedOrForgottenAndANewAttemptGoesToTheBack() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"));
        DeferredGangs deferred = new DeferredGangs();
        GangRequest a = aGang("a").task("w", 2, 8).build();
        GangRequest b = aGang("b").task("w", 2, 8).build();
        deferred.afterDispatch(a, c.state.dispatch(a, Instant.EPOCH));
        deferred.afterDispatch(b, c.state.dispatch(b, Instant.EPOCH));
        deferred.afterDispatch(a, c.state.dispatch(a, Instant.EPOCH));
        assertThat(deferred.oldestFirst()).extracting(GangRequest::jobId).containsExactly("a", "b");
        GangRequest a2 = aGang("a").attempt(2).task("w", 2, 8).build();
        deferred.afterDispatch(a2, c.state.dispatch(a2, Instant.EPOCH));
        assertThat(deferred.oldestFirst()).extracting(GangRequest::jobId).containsExactly("b", "a");
        GangRequest small = aGang("b").task("w", 1, 1).build();
        deferred.afterDispatch(small, c.state.dispatch(small, Instant.EPOCH));
        deferred.forget("a");
        assertThat(deferred.oldestFirst()).isEmpty();
    }
}
