package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** A job placement deferred is parked, and woken only by a capacity change it might fit in: no retry storm. */
class ParkingTest {

    private static FreeCapacity free(String model, int free, int largestOnNode) {
        return new FreeCapacity(Map.of(model, new FreeCapacity.Model(free, largestOnNode)));
    }

    /** small runs; big (8 x H100 on one node) is deferred by placement and parked. */
    private static QueueDriver bigParked(JobBuilder big) {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("small").gpus(1), big);
        q.granted("small", 1).deferred(big.id(), 1);
        assertThat(q.core.state().live().get(big.id()).parked()).isTrue();
        return q;
    }

    private static Input released(String job, FreeCapacity free) {
        return new Input.Released(job, "a", 1, ReleaseCause.RUN_SUCCEEDED, free);
    }

    @Test
    void aDeferralThatCrossedACapacityChangeIsOfferedAgainAtOnceInsteadOfParked() {
        // dispatched while its nodes were down; they came back (recovery's topic) before placement's "no" arrived
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("job").gpus(1));
        assertThat(q.dispatchCount("job")).isEqualTo(1);
        q.apply(new Input.CapacityChanged("node n1 recovered"));
        q.deferred("job", 1);

        assertThat(q.dispatchCount("job")).as("no later wake-up would come: offered again").isEqualTo(2);
        assertThat(q.core.state().live().get("job").parked()).isFalse();
    }

    @Test
    void aDeferralWithNoCapacityChangeSinceTheDispatchParksTheJob() {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("job").gpus(1));
        q.deferred("job", 1);
        q.apply(new Input.CapacityChanged("node n1 recovered"));
        assertThat(q.dispatchCount("job")).as("woken by the change that came after").isEqualTo(2);
        q.deferred("job", 1);

        assertThat(q.dispatchCount("job")).as("nothing changed since: parked").isEqualTo(2);
        assertThat(q.core.state().live().get("job").parked()).isTrue();
    }

    @Test
    void aReleaseThatLeavesTooFewGpusOnAnyNodeDoesNotWakeTheParkedGang() {
        QueueDriver q = bigParked(aJob("big").gpus(8).model("H100"));
        q.succeeded("small", 1).apply(released("small", free("H100", 12, 4)));
        assertThat(q.dispatchCount("big")).isEqualTo(1);
        assertThat(q.core.state().live().get("big").parked()).isTrue();
    }

    @Test
    void aReleaseThatLeavesEnoughOfItsModelOnOneNodeWakesIt() {
        QueueDriver q = bigParked(aJob("big").gpus(8).model("H100"));
        q.succeeded("small", 1).apply(released("small", free("H100", 8, 8)));
        assertThat(q.dispatchCount("big")).isEqualTo(2);
    }

    @Test
    void freeGpusOfAModelTheJobDoesNotAcceptDoNotWakeIt() {
        QueueDriver q = bigParked(aJob("big").gpus(8).model("H100"));
        q.succeeded("small", 1).apply(released("small", free("A100", 64, 8)));
        assertThat(q.dispatchCount("big")).isEqualTo(1);
    }

    @Test
    void aGangOfSmallTasksNeedsTheGangInTotalButOnlyTheLargestTaskOnOneNode() {
        QueueDriver q = bigParked(aJob("big").gang(4, 2));
        q.succeeded("small", 1).apply(released("small", free("H100", 8, 2)));
        assertThat(q.dispatchCount("big")).isEqualTo(2);
    }

    @Test
    void anUnknownCapacityANewNodeOrThePeriodicRecheckWakesEveryParkedJob() {
        QueueDriver unknown = bigParked(aJob("big").gpus(8).model("H100"));
        unknown.succeeded("small", 1).released("small", 1, ReleaseCause.RUN_SUCCEEDED);
        assertThat(unknown.dispatchCount("big")).isEqualTo(2);

        QueueDriver node = bigParked(aJob("big").gpus(8).model("H100"));
        node.capacityChanged();
        assertThat(node.dispatchCount("big")).isEqualTo(2);

        QueueDriver tick = bigParked(aJob("big").gpus(8).model("H100"));
        tick.apply(new Input.Tick(false));
        assertThat(tick.dispatchCount("big")).isEqualTo(1);
        tick.apply(new Input.Tick(true));
        assertThat(tick.dispatchCount("big")).isEqualTo(2);
    }

    @Test
    void aParkedJobIsWokenByTheCurrentReportNotByWhatWasFreedSinceItParked() {
        // the reverted "freed since parked" rule starved this case: each report stands on its own
        QueueDriver q = bigParked(aJob("big").gpus(8).model("H100"));
        q.succeeded("small", 1).apply(released("small", free("H100", 4, 4)));
        q.submit(aJob("other").gpus(1)).granted("other", 1).succeeded("other", 1)
                .apply(new Input.Released("other", "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 8, 8)));
        assertThat(q.dispatchCount("big")).isEqualTo(2);
    }

    @Test
    void aGangThatNeverFitsCostsOneDispatchPerCapacityChangeAndNoMore() {
        QueueDriver q = bigParked(aJob("huge").gang(6, 8));
        for (int i = 0; i < 50; i++) {
            // small jobs come and go: none of their releases leaves 48 GPUs free, so the gang stays parked
            q.submit(aJob("s" + i).gpus(1)).granted("s" + i, 1).succeeded("s" + i, 1)
                    .apply(new Input.Released("s" + i, "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 31, 8)));
        }
        assertThat(q.dispatchCount("huge")).isEqualTo(1);
        q.capacityChanged().deferred("huge", 1);
        assertThat(q.dispatchCount("huge")).isEqualTo(2);
        assertThat(q.core.state().live().get("huge").parked()).isTrue();
    }

    @Test
    void capacityThatFlapsWakesTheParkedGangOncePerRecoveryAndItRunsWhenTheCapacityStays() {
        QueueDriver q = bigParked(aJob("big").gpus(8).model("H100"));
        for (int flap = 0; flap < 10; flap++) {
            // the node comes back, the gang is offered, the node fails again before placement places it
            q.capacityChanged().deferred("big", 1);
        }
        assertThat(q.dispatchCount("big")).isEqualTo(11);
        q.capacityChanged().granted("big", 1);
        assertThat(q.core.status("big")).isEqualTo(JobState.DISPATCHED);
        assertThat(q.dispatchCount("big")).isEqualTo(12);
    }

    private static FreeCapacity free(String model, int free, int largest, Integer... nodesWithFree) {
        return new FreeCapacity(Map.of(model, new FreeCapacity.Model(free, largest, List.of(nodesWithFree))));
    }

    @Test
    void aGangOfFiveGpuTasksIsNotWokenByFreeGpusScatteredOverNodesWithFewerThanFiveEach() {
        // 4 tasks x 5 GPUs: 24 free and one node with 5, but no four nodes with 5 each
        QueueDriver q = bigParked(aJob("big").gang(4, 5));
        q.succeeded("small", 1).apply(released("small", free("H100", 24, 5, 0, 0, 1, 1, 5, 1)));
        assertThat(q.dispatchCount("big")).isEqualTo(1);
        q.submit(aJob("other").gpus(1)).granted("other", 1).succeeded("other", 1)
                .apply(new Input.Released("other", "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 26, 6, 0, 0, 0, 0, 0, 4, 1)));
        assertThat(q.dispatchCount("big")).isEqualTo(2);
    }

    @Test
    void oneReleaseWakesOnlyAsManyParkedGangsAsMightFitTogetherOldestFirst() {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("small").gpus(1),
                aJob("g1").gpus(8).submittedAt(1), aJob("g2").gpus(8).submittedAt(2), aJob("g3").gpus(8).submittedAt(3));
        q.granted("small", 1).deferred("g1", 1).deferred("g2", 1).deferred("g3", 1);
        // two empty nodes: room for two of the three 8-GPU gangs, the two that waited longest
        q.succeeded("small", 1).apply(released("small", free("H100", 16, 8, 3, 0, 0, 0, 0, 0, 0, 0, 2)));
        assertThat(List.of(q.dispatchCount("g1"), q.dispatchCount("g2"), q.dispatchCount("g3")))
                .containsExactly(2L, 2L, 1L);
    }

    private static Input.Submitted shareJob(String id, int milli) {
        JobSpec spec = new JobSpec(id, 0, null, List.of(new TaskGroup("infer", 1, 0, null, 0, 0, List.of(), null,
                milli, null)));
        return new Input.Submitted(id, "a", spec, JobBuilder.EPOCH.plusSeconds(id.length()));
    }

    private static FreeCapacity shares(int wholeFree, int largestFreeMilli) {
        return new FreeCapacity(Map.of("H100", new FreeCapacity.Model(wholeFree, wholeFree > 0 ? 1 : 0, List.of(),
                largestFreeMilli)));
    }

    @Test
    void aParkedFractionIsWokenOnlyWhenSomeDeviceHasItsShareFreeAndOneReleaseWakesOnlyWhatFits() {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("small").gpus(1));
        q.granted("small", 1);
        q.apply(shareJob("p7", 700)).apply(shareJob("p6aa", 600)).deferred("p7", 1).deferred("p6aa", 1);

        q.succeeded("small", 1).apply(new Input.Released("small", "a", 1, ReleaseCause.RUN_SUCCEEDED, shares(0, 300)));
        assertThat(List.of(q.dispatchCount("p7"), q.dispatchCount("p6aa"))).containsExactly(1L, 1L);

        // a shared device with 700 free: room for one of them, the one that waited longest
        q.submit(aJob("other").gpus(1)).granted("other", 1).succeeded("other", 1)
                .apply(new Input.Released("other", "a", 1, ReleaseCause.RUN_SUCCEEDED, shares(0, 700)));
        assertThat(List.of(q.dispatchCount("p7"), q.dispatchCount("p6aa"))).containsExactly(2L, 1L);
    }

    @Test
    void placementsOwnCheckOfADeferredGangOverridesTheSummaryBothWays() {
        // the summary says 8 free on one node: might fit; placement, which knows CPU and memory, says it does not
        QueueDriver no = bigParked(aJob("big").gpus(8).model("H100"));
        no.succeeded("small", 1).apply(new Input.Released("small", "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 8, 8),
                List.of(new Input.DeferredCheck("big", 1, false))));
        assertThat(no.dispatchCount("big")).isEqualTo(1);

        // a check for another attempt says nothing about this one: the summary decides
        QueueDriver stale = bigParked(aJob("big").gpus(8).model("H100"));
        stale.succeeded("small", 1).apply(new Input.Released("small", "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 8, 8),
                List.of(new Input.DeferredCheck("big", 7, false))));
        assertThat(stale.dispatchCount("big")).isEqualTo(2);

        QueueDriver yes = bigParked(aJob("big").gpus(8).model("H100"));
        yes.succeeded("small", 1).apply(new Input.Released("small", "a", 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 8, 8),
                List.of(new Input.DeferredCheck("big", 1, true))));
        assertThat(yes.dispatchCount("big")).isEqualTo(2);
    }

    /**
     * A release whose deferred checks say each of {@code fitting} fits now, but only on node-7, which has {@code gpus}
     * GPUs free (and CPU and memory for all of them). 20 more H100 are free, on nodes whose CPU and memory are taken:
     * the summary alone cannot tell.
     */
    private static Input releasedOntoOnePlace(String job, String tenant, int gpus, String... fitting) {
        Input.Place place = new Input.Place("node-7", gpus, List.of(), 64_000, 512 * 1024);
        List<Input.DeferredCheck> checks = java.util.Arrays.stream(fitting)
                .map(id -> new Input.DeferredCheck(id, 1, true, place)).toList();
        return new Input.Released(job, tenant, 1, ReleaseCause.RUN_SUCCEEDED, free("H100", 20 + gpus, 4), checks);
    }

    @Test
    void podsThatFitOnlyInThePlaceOneReleaseFreedAreDispatchedOnlyAsManyAsItHoldsInQueueOrder() {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("small").gpus(1), aJob("p1").gpus(1).submittedAt(1),
                aJob("p2").gpus(1).submittedAt(2), aJob("p3").gpus(1).submittedAt(3));
        q.granted("small", 1).deferred("p1", 1).deferred("p2", 1).deferred("p3", 1);

        // one GPU freed where they fit: the one that waited longest goes, the others stay parked (no deferral)
        q.succeeded("small", 1).apply(releasedOntoOnePlace("small", "a", 1, "p1", "p2", "p3"));
        assertThat(List.of(q.dispatchCount("p1"), q.dispatchCount("p2"), q.dispatchCount("p3")))
                .containsExactly(2L, 1L, 1L);
        assertThat(List.of(q.core.state().live().get("p2").parked(), q.core.state().live().get("p3").parked()))
                .containsExactly(true, true);

        // room for two there: both
        q.submit(aJob("other").gpus(1)).granted("other", 1).succeeded("other", 1)
                .apply(releasedOntoOnePlace("other", "a", 2, "p2", "p3"));
        assertThat(List.of(q.dispatchCount("p2"), q.dispatchCount("p3"))).containsExactly(2L, 2L);
    }

    @Test
    void aPodQuotaHoldsBackLeavesTheOnePlaceToTheNextInsteadOfKeepingItFree() {
        QueueDriver q = QueueDriver.withQuotas(Quotas.ofGpus(64, Map.of("b", 1)))
                .submit(aJob("small").gpus(1), aJob("p1").tenant("b").gpus(1).submittedAt(1));
        q.granted("small", 1).deferred("p1", 1);
        // b's one GPU of quota is taken now; a's p2 parks after p1
        q.submit(aJob("hog").tenant("b").gpus(1), aJob("p2").gpus(1).submittedAt(2));
        q.granted("hog", 1).deferred("p2", 1);

        q.succeeded("small", 1).apply(releasedOntoOnePlace("small", "a", 1, "p1", "p2"));
        assertThat(List.of(q.dispatchCount("p1"), q.dispatchCount("p2"))).containsExactly(1L, 2L);
    }

    @Test
    void podsWithoutAnOnlyPlaceAreAllWokenAsBefore() {
        QueueDriver q = QueueDriver.withQuota(64).submit(aJob("small").gpus(1), aJob("p1").gpus(1).submittedAt(1),
                aJob("p2").gpus(1).submittedAt(2));
        q.granted("small", 1).deferred("p1", 1).deferred("p2", 1);
        q.succeeded("small", 1).apply(new Input.Released("small", "a", 1, ReleaseCause.RUN_SUCCEEDED,
                free("H100", 21, 4), List.of(new Input.DeferredCheck("p1", 1, true), new Input.DeferredCheck("p2", 1, true))));
        assertThat(List.of(q.dispatchCount("p1"), q.dispatchCount("p2"))).containsExactly(2L, 2L);
    }
}
