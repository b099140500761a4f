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
    void aGangThatFittedNothingIsLookedAtAgainOnlyWhereSomethingChangedAndEveryKindOfChangeCounts() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"), aNode("n2").gpus(8, "H100"));
        Allocation first = c.granted(aGang("first").task("w", 1, 8));
        c.granted(aGang("second").task("w", 1, 8));
        GangBuilderPair one = new GangBuilderPair("one", 1);
        c.deferred(one.builder());
        assertThat(c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10))
                .containsExactly(new ClusterState.DeferredCheck("one", 1, false));

        // a node that registers after the "no": its GPUs count (and it is the one place the gang fits)
        c.apply(c.state.register(aNode("n3").gpus(1, "H100").build()));
        assertThat(c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10))
                .containsExactly(new ClusterState.DeferredCheck("one", 1, true, c.state.inventory().roomOn("n3")));
        c.granted(aGang("third").task("w", 1, 1));
        assertThat(c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10))
                .extracting(ClusterState.DeferredCheck::fits).containsExactly(false);

        // a failed node that recovers, and a release
        c.fail("n3");
        c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10);
        c.apply(c.state.nodeRecovered("n3"));
        assertThat(c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10))
                .extracting(ClusterState.DeferredCheck::fits).containsExactly(true);
        c.granted(aGang("fourth").task("w", 1, 1));
        c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10);
        c.apply(c.state.cancel(first.jobId(), 1, Instant.EPOCH));
        assertThat(c.state.checkDeferred(List.of(one.gang()), Instant.EPOCH, 10, 10))
                .extracting(ClusterState.DeferredCheck::fits).containsExactly(true);
    }

    /** A gang and its builder (the cluster fixture dispatches builders, the check takes requests). */
    private record GangBuilderPair(String id, int gpus) {
        Fixtures.GangBuilder builder() {
            return aGang(id).task("w", 1, gpus);
        }

        GangRequest gang() {
            return builder().build();
        }
    }

    @Test
    void gangsOfOneShapeAreTriedOnceSoTheLimitCountsTrialsAndAllAlikeGangsGetTheirVerdict() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"));
        c.granted(aGang("running").task("w", 1, 6));
        List<GangRequest> deferred = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
            deferred.add(aGang("big-" + i).task("w", 1, 4).build()); // 2 GPUs free: none fits
        }
        deferred.add(aGang("small").task("w", 1, 2).build());
        deferred.add(aGang("big-50").task("w", 1, 4).build());

        List<ClusterState.DeferredCheck> checks = c.state.checkDeferred(deferred, Instant.EPOCH, 2, 100);

        assertThat(checks).hasSize(52);
        assertThat(checks).filteredOn(ClusterState.DeferredCheck::fits).extracting(ClusterState.DeferredCheck::jobId)
                .containsExactly("small");
        // two trials (the 4-GPU shape and the 2-GPU one), the rest answered by them. Looked at again with nothing
        // changed, the gangs that fitted nothing cost no trial; with one trial left for "small", a third shape waits
        GangRequest other = aGang("other").task("w", 1, 1).build();
        List<GangRequest> withThird = new java.util.ArrayList<>(deferred);
        withThird.add(other);
        assertThat(c.state.checkDeferred(withThird, Instant.EPOCH, 1, 100)).hasSize(52)
                .extracting(ClusterState.DeferredCheck::jobId).doesNotContain("other");
        // a gang that needs more than one that did not fit is not tried either, nor one differing only in name and run
        // time: with no trial left, both still get their answer
        List<GangRequest> more = new java.util.ArrayList<>(deferred);
        more.add(aGang("bigger").task("w", 1, 5).cpuMillis(64_000).build());
        more.add(aGang("renamed").task("other-name", 1, 2).last(t -> t.withRunSeconds(99L)).build());
        assertThat(c.state.checkDeferred(more, Instant.EPOCH, 2, 100)).hasSize(54)
                .filteredOn(ch -> ch.jobId().equals("bigger") || ch.jobId().equals("renamed"))
                .extracting(ClusterState.DeferredCheck::fits).containsExactly(false, true);
        // and at most the scan bound of gangs is looked at
        assertThat(c.state.checkDeferred(deferred, Instant.EPOCH, 2, 10)).hasSize(10);
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

    @Test
    void aGangThatFittedNothingAndNowFitsOnlyTheNodeARunLeftIsToldThatNodeAndWhatItHasFree() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(aNode("n1").gpus(8, "H100"), aNode("n2").gpus(8, "H100"));
        Allocation full = c.granted(aGang("full").task("w", 1, 8));
        c.granted(aGang("seven").task("w", 1, 7));
        c.granted(aGang("one").task("w", 1, 1));
        GangRequest p1 = aGang("p1").task("w", 1, 1).build();
        GangRequest p2 = aGang("p2").task("w", 1, 1).build();
        c.deferred(aGang("p1").task("w", 1, 1));
        c.deferred(aGang("p2").task("w", 1, 1));
        ClusterState.Room before = c.state.inventory().roomOn(full.placements().get(0).nodeId());

        c.apply(c.state.cancel("full", 1, Instant.EPOCH));
        List<ClusterState.DeferredCheck> checks = c.state.checkDeferred(List.of(p1, p2), Instant.EPOCH, 10, 10);

        // both fit only where "full" ran, each on its own: the queue sends only as many as that node holds
        String node = full.placements().get(0).nodeId();
        ClusterState.Room room = c.state.inventory().roomOn(node);
        assertThat(room.freeGpus()).isEqualTo(before.freeGpus() + 8);
        assertThat(checks).containsExactly(new ClusterState.DeferredCheck("p1", 1, true, room),
                new ClusterState.DeferredCheck("p2", 1, true, room));
        // the queue sent neither (say): with nothing changed since, the next check still knows it is that node
        assertThat(c.state.checkDeferred(List.of(p1, p2), Instant.EPOCH, 10, 10)).isEqualTo(checks);

        // with free GPUs on both nodes it is not one place: no only place is named
        c.apply(c.state.cancel("one", 1, Instant.EPOCH));
        assertThat(c.state.checkDeferred(List.of(p1, p2), Instant.EPOCH, 10, 10))
                .extracting(ClusterState.DeferredCheck::onlyPlace).containsOnlyNulls();
    }
}
