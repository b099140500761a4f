package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A money budget exhausted with action HOLD: the tenant's (or queue's) jobs are accepted and queued, but held with
 * wait reason BUDGET until billing says the budget allows again or the month ends; what runs keeps running.
 */
class BudgetHoldTest {
    /** The driver's month: its clock starts at 2025-01-01. */
    private static final YearMonth MONTH = YearMonth.from(JobBuilder.EPOCH.atZone(ZoneOffset.UTC));
    private static final String HELD_A = "held: the monthly budget of tenant a is exhausted (120.50 EUR of 100.00 EUR);"
            + " held until 2025-02-01 or the budget is raised";

    private static Input.BudgetChanged budget(String tenant, String queue, YearMonth month, boolean holds,
                                              String spent) {
        return new Input.BudgetChanged(tenant, queue, month, start(month), start(month.plusMonths(1)), holds,
                new BigDecimal("100.00"), new BigDecimal(spent), "EUR");
    }

    private static Input.BudgetChanged exhausted(String tenant) {
        return budget(tenant, null, MONTH, true, "120.50");
    }

    private static Input.BudgetChanged raised(String tenant) {
        return budget(tenant, null, MONTH, false, "120.50");
    }

    private static Instant start(YearMonth m) {
        return m.atDay(1).atStartOfDay(ZoneOffset.UTC).toInstant();
    }

    @Test
    void aJobOfATenantWhoseBudgetHoldsIsQueuedButNotDispatchedAndSaysWhy() {
        QueueDriver q = QueueDriver.withQuota(8).apply(exhausted("a")).submit(aJob("j").gpus(1));

        assertThat(q.all(QueueFact.JobQueued.class, "j")).hasSize(1);
        assertThat(q.dispatchCount("j")).isZero();
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.BUDGET);
        assertThat(q.lastWait("j").message()).isEqualTo(HELD_A);
        assertThat(q.core.status("j")).isEqualTo(JobState.QUEUED);
        assertThat(q.core.pending("a")).singleElement().satisfies(p -> {
            assertThat(p.waitReason()).isEqualTo(WaitReason.BUDGET);
            assertThat(p.parked()).isFalse();
        });
    }

    @Test
    void theSentenceNamesTheScopeTheAmountsWithGroupingAndTheFirstDayOfTheNextMonth() {
        YearMonth nov = YearMonth.of(2026, 11);
        assertThat(BudgetHolds.sentence(new Input.BudgetChanged("vision", null, nov, start(nov),
                start(nov.plusMonths(1)), true, new BigDecimal("1200"), new BigDecimal("1204.50"), "EUR")))
                .isEqualTo("held: the monthly budget of tenant vision is exhausted (1,204.50 EUR of 1,200.00 EUR);"
                        + " held until 2026-12-01 or the budget is raised");
        assertThat(BudgetHolds.sentence(new Input.BudgetChanged("vision", "research", nov, start(nov),
                start(nov.plusMonths(1)), true, new BigDecimal("50000"), new BigDecimal("50210"), "JPY")))
                .isEqualTo("held: the monthly budget of queue research of tenant vision is exhausted (50,210 JPY of"
                        + " 50,000 JPY); held until 2026-12-01 or the budget is raised");
    }

    @Test
    void heldJobsAreDispatchedAsSoonAsBillingSaysTheBudgetIsNoLongerExhausted() {
        QueueDriver q = QueueDriver.withQuota(8).apply(exhausted("a")).submit(aJob("j1").gpus(1), aJob("j2").gpus(2));
        assertThat(q.dispatchOrder()).isEmpty();

        q.apply(raised("a"));

        assertThat(q.dispatchOrder()).containsExactly("j1", "j2");
    }

    @Test
    void aNewMonthReleasesTheHoldEvenBeforeBillingAnnouncesIt() {
        QueueDriver q = QueueDriver.withQuota(8).apply(exhausted("a")).submit(aJob("j").gpus(1));
        long endOfMonth = start(MONTH.plusMonths(1)).getEpochSecond() - JobBuilder.EPOCH.getEpochSecond();

        q.at(endOfMonth - 1).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).isZero();
        q.at(endOfMonth).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void runningJobsKeepRunningAndJobsAlreadyQueuedAreHeldToo() {
        QueueDriver q = QueueDriver.withQuota(2).submit(aJob("running").gpus(2), aJob("waiting").gpus(1));
        q.granted("running", 1);
        assertThat(q.lastWait("waiting").reason()).isEqualTo(WaitReason.QUOTA);

        q.apply(exhausted("a"));

        assertThat(q.last).containsExactly(new QueueFact.JobWaiting("waiting", "a", 1, WaitReason.BUDGET, HELD_A));
        q.finished("running");
        assertThat(q.core.status("running")).isEqualTo(JobState.SUCCEEDED);
        assertThat(q.dispatchCount("waiting")).as("quota is free now, the budget still holds").isZero();
        assertThat(q.all(QueueFact.JobPreempted.class, "running")).isEmpty();
    }

    @Test
    void otherTenantsAreNeitherHeldNorKeptWaitingBehindHeldJobs() {
        QueueDriver q = QueueDriver.withQuota(8).apply(exhausted("a"))
                .submit(aJob("a1").gpus(4), aJob("b1").tenant("b").gpus(4));

        assertThat(q.dispatchOrder()).containsExactly("b1");
    }

    @Test
    void aBudgetThatDoesNotHoldHoldsNothing() {
        QueueDriver q = QueueDriver.withQuota(8).apply(budget("a", null, MONTH, false, "120.50"))
                .submit(aJob("j").gpus(1));
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void aQueueBudgetHoldsOnlyTheJobsOfThatQueue() {
        FairShareConfig twoQueues = aConfig().flavours("H100")
                .queue(aQueue("vision").quota("H100", 8))
                .queue(aQueue("research").tenant("vision").quota("H100", 8)).build();
        QueueDriver q = QueueDriver.with(twoQueues).apply(budget("vision", "research", MONTH, true, "120.50"))
                .submit(aJob("r").tenant("vision").queue("research").gpus(1), aJob("v").tenant("vision").gpus(1));

        assertThat(q.dispatchOrder()).containsExactly("v");
        assertThat(q.lastWait("r").message()).startsWith("held: the monthly budget of queue research of tenant vision");
    }

    @Test
    void anAnnouncementAboutAnEarlierMonthThanTheKnownOneChangesNothing() {
        QueueDriver q = QueueDriver.withQuota(8).apply(raised("a"))
                .apply(budget("a", null, MONTH.minusMonths(1), true, "120.50")).submit(aJob("j").gpus(1));
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void aParkedJobIsHeldWhenTheBudgetIsExhaustedAndOfferedToPlacementAgainWhenItIsRaised() {
        QueueDriver q = QueueDriver.withQuota(8).submit(aJob("j").gpus(8)).deferred("j", 1);
        assertThat(q.core.state().live().get("j").parked()).isTrue();

        q.apply(exhausted("a")).capacityChanged();
        assertThat(q.dispatchCount("j")).isEqualTo(1);
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.BUDGET);

        q.apply(raised("a"));
        assertThat(q.dispatchCount("j")).isEqualTo(2);
    }

    @Test
    void aRestartedQueueRebuildsTheHoldFromItsFactsAndBillingsTopicWithoutWritingItAgain() {
        QueueDriver q = QueueDriver.withQuota(8).apply(exhausted("a")).submit(aJob("j").gpus(1));
        int waits = q.all(QueueFact.JobWaiting.class, "j").size();

        for (boolean budgetsFirst : List.of(true, false)) {
            QueueCore fresh = budgetsFirst ? new QueueCore(q.config) : q.rebuilt();
            fresh.budgetChanged(exhausted("a"));
            if (budgetsFirst) {
                q.facts.forEach(fresh::replay);
            }
            assertThat(fresh.apply(new Input.Restored(), q.now())).as("budgets first: " + budgetsFirst).isEmpty();
            assertThat(fresh.apply(raised("a"), q.now())).filteredOn(f -> f instanceof QueueFact.JobDispatched)
                    .extracting(QueueFact::jobId).containsExactly("j");
        }
        assertThat(q.all(QueueFact.JobWaiting.class, "j")).hasSize(waits);
    }

    @Test
    void aMalformedAnnouncementIsRefusedBeforeItChangesAnything() {
        assertThatThrownBy(() -> new Input.BudgetChanged("a", null, MONTH, start(MONTH), start(MONTH), true,
                BigDecimal.ONE, BigDecimal.ONE, "EUR")).hasMessageContaining("periodTo");
        assertThatThrownBy(() -> new Input.BudgetChanged(" ", null, MONTH, start(MONTH), start(MONTH.plusMonths(1)),
                true, BigDecimal.ONE, BigDecimal.ONE, "EUR")).hasMessageContaining("tenant");
    }
}
