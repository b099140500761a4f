package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** A gang placement keeps deferring gets placement to reserve (drain) capacity once it has starved long enough. */
class CapacityReservationTest {

    private static QueueDriver twoGangsParked() {
        FairShareConfig c = aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 64))
                .build();
        QueueDriver q = QueueDriver.with(c).at(0).submit(aJob("old").tenant("team").gang(2, 8).submittedAt(0))
                .submit(aJob("young").tenant("team").gang(4, 8).submittedAt(300));
        return q.deferred("old", 1).deferred("young", 1);
    }

    private static List<QueueFact> reservations(QueueDriver q) {
        return q.facts.stream().filter(f -> f instanceof QueueFact.CapacityReservationRequested
                || f instanceof QueueFact.CapacityReservationCancelled).toList();
    }

    @Test
    void theLongestStarvingParkedGangGetsTheOneReservationAtATickAndNoOtherMeanwhile() {
        QueueDriver q = twoGangsParked();
        q.at(500).apply(new Input.Tick(false));
        assertThat(reservations(q)).isEmpty(); // nobody has waited 10 minutes yet

        q.at(700).apply(new Input.Tick(false));
        assertThat(reservations(q)).singleElement().isInstanceOfSatisfying(
                QueueFact.CapacityReservationRequested.class, r -> {
                    assertThat(r.jobId()).isEqualTo("old");
                    assertThat(r.spec().gangMilli()).isEqualTo(16_000);
                    assertThat(r.message()).startsWith("job waited 11 min (starvation wait 10 min)");
                });
        q.at(1000).apply(new Input.Tick(false));
        assertThat(reservations(q)).hasSize(1); // "young" starves too, but one reservation at a time
        assertThat(q.core.capacityReservedFor()).isEqualTo("old");
    }

    @Test
    void theReservationEndsWhenTheGangIsGrantedAndTheNextStarvingGangGetsOne() {
        QueueDriver q = twoGangsParked();
        q.at(700).apply(new Input.Tick(false)).capacityChanged().granted("old", 1).deferred("young", 1);
        assertThat(reservations(q)).last().isEqualTo(
                new QueueFact.CapacityReservationCancelled("old", "team", 1, "granted"));

        q.at(1000).apply(new Input.Tick(false));
        assertThat(reservations(q)).last().isInstanceOfSatisfying(QueueFact.CapacityReservationRequested.class,
                r -> assertThat(r.jobId()).isEqualTo("young"));
    }

    @Test
    void aCancelledGangGivesItsReservationBackAtTheNextTick() {
        QueueDriver q = twoGangsParked();
        q.at(700).apply(new Input.Tick(false)).cancel("old");
        q.at(1000).apply(new Input.Tick(false));
        assertThat(reservations(q)).extracting(QueueFact::jobId, f -> f.getClass().getSimpleName()).containsExactly(
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationRequested"),
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationCancelled"),
                org.assertj.core.groups.Tuple.tuple("young", "CapacityReservationRequested"));
    }

    @Test
    void aSuspendedGangGivesItsReservationBackAtTheNextTickAndTheNextStarvingGangGetsOne() {
        QueueDriver q = twoGangsParked();
        q.at(700).apply(new Input.Tick(false)).suspend("old");
        q.at(1000).apply(new Input.Tick(false));
        // a job its owner suspended will not run: nodes drained for it would idle, and the other gang starve
        assertThat(reservations(q)).extracting(QueueFact::jobId, f -> f.getClass().getSimpleName()).containsExactly(
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationRequested"),
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationCancelled"),
                org.assertj.core.groups.Tuple.tuple("young", "CapacityReservationRequested"));
        assertThat(reservations(q).get(1)).isEqualTo(
                new QueueFact.CapacityReservationCancelled("old", "team", 1, "withdrawn"));
    }

    @Test
    void aGangHeldForItsBudgetGivesItsReservationBack() {
        QueueDriver q = twoGangsParked();
        q.at(700).apply(new Input.Tick(false));
        java.time.YearMonth month = java.time.YearMonth.from(JobBuilder.EPOCH.atZone(java.time.ZoneOffset.UTC));
        q.apply(new Input.BudgetChanged("team", null, month,
                month.atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant(),
                month.plusMonths(1).atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant(), true,
                new java.math.BigDecimal("100.00"), new java.math.BigDecimal("120.50"), "EUR"));
        q.at(1000).apply(new Input.Tick(false));
        // every job of the tenant is held: the reservation goes back, and no gang of it asks for another
        assertThat(reservations(q)).extracting(QueueFact::jobId, f -> f.getClass().getSimpleName()).containsExactly(
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationRequested"),
                org.assertj.core.groups.Tuple.tuple("old", "CapacityReservationCancelled"));
        assertThat(q.core.capacityReservedFor()).isNull();
    }

    @Test
    void aRestartedCoreKnowsWhichGangHoldsTheReservation() {
        QueueDriver q = twoGangsParked();
        q.at(700).apply(new Input.Tick(false));
        QueueCore restarted = q.rebuilt();
        assertThat(restarted.capacityReservedFor()).isEqualTo("old");
        Input tick = new Input.Tick(false);
        assertThat(restarted.apply(tick, q.now())).isEqualTo(q.core.apply(tick, q.now()));
    }

    @Test
    void theRequestCarriesTheConfiguredDrainBoundOrNoneWhenDrainsOnlyWait() {
        FairShareConfig bounded = aConfig().flavours("H100").starvationWait("10m").set("maxDrain", "30m")
                .queue(aQueue("team").quota("H100", 64)).build();
        assertThat(FairShareConfig.fromYaml(bounded.toDocument())).isEqualTo(bounded);
        QueueDriver q = QueueDriver.with(bounded).at(0).submit(aJob("old").tenant("team").gang(2, 8).submittedAt(0))
                .deferred("old", 1);
        q.at(700).apply(new Input.Tick(false));
        assertThat(reservations(q)).singleElement().isInstanceOfSatisfying(
                QueueFact.CapacityReservationRequested.class, r -> assertThat(r.maxDrainSeconds()).isEqualTo(1800L));

        FairShareConfig never = aConfig().flavours("H100").starvationWait("10m").set("maxDrain", "never")
                .queue(aQueue("team").quota("H100", 64)).build();
        assertThat(never.maxDrain()).as("never").isNull();
        assertThat(aConfig().flavours("H100").queue(aQueue("team").quota("H100", 64)).build().maxDrain())
                .as("the default: only wait").isNull();
        assertThat(FairShareConfig.fromYaml(never.toDocument())).isEqualTo(never);
        QueueDriver w = QueueDriver.with(never).at(0).submit(aJob("old").tenant("team").gang(2, 8).submittedAt(0))
                .deferred("old", 1);
        w.at(700).apply(new Input.Tick(false));
        assertThat(reservations(w)).singleElement().isInstanceOfSatisfying(
                QueueFact.CapacityReservationRequested.class, r -> assertThat(r.maxDrainSeconds()).isNull());
    }

    @Test
    void aSingleGpuJobNeverReservesItIsServedByTheNextGpuThatFrees() {
        FairShareConfig c = aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 64))
                .build();
        QueueDriver q = QueueDriver.with(c).at(0).submit(aJob("one").tenant("team").gpus(1).submittedAt(0),
                aJob("half").tenant("team").fraction(500).submittedAt(0));
        q.deferred("one", 1).deferred("half", 1);
        q.at(3600).apply(new Input.Tick(false));
        assertThat(reservations(q)).isEmpty();
    }

    @Test
    void aGangPutBackInTheQueueWaitsTheStarvationWaitAgainBeforeItReserves() {
        FairShareConfig c = aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 64))
                .build();
        // submitted long ago, stopped (for another gang's drain, say) at 5000 s and parked again at once
        QueueDriver q = QueueDriver.with(c).at(0).submit(aJob("g").tenant("team").gang(2, 8).submittedAt(0));
        q.at(5000).released("g", 1, ReleaseCause.PREEMPTED).deferred("g", 2);
        q.at(5300).apply(new Input.Tick(false));
        assertThat(reservations(q)).as("waited 5 min since it was queued again").isEmpty();
        q.at(5700).apply(new Input.Tick(false));
        assertThat(reservations(q)).singleElement().isInstanceOfSatisfying(
                QueueFact.CapacityReservationRequested.class,
                r -> assertThat(r.message()).startsWith("job waited 11 min (starvation wait 10 min)"));
    }

    @Test
    void aGangQuotaKeepsOutDoesNotReserveItWaitsForItsShareNotForPlacement() {
        FairShareConfig c = aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 16))
                .build();
        QueueDriver q = QueueDriver.with(c).at(0).submit(aJob("g").tenant("team").gang(2, 8).submittedAt(0))
                .deferred("g", 1);
        q.submit(aJob("other").tenant("team").gpus(16).submittedAt(10)).granted("other", 1);
        q.at(3600).apply(new Input.Tick(false));
        assertThat(reservations(q)).as("the queue's 16 GPUs are all in use").isEmpty();
        q.finished("other");
        assertThat(q.dispatchCount("g")).as("woken by the release").isEqualTo(2);
        q.deferred("g", 1).at(3700).apply(new Input.Tick(false));
        assertThat(reservations(q)).extracting(QueueFact::jobId).containsExactly("g");
    }
}
