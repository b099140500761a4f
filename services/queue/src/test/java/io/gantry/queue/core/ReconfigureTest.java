package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** A new configuration takes effect without a restart, keeping what runs and what waits. */
class ReconfigureTest {

    private static ConfigBuilder team(int nominal) {
        return aConfig().flavours("H100").cohort("pool")
                .queue(aQueue("vision").cohort("pool").quota("H100", nominal))
                .queue(aQueue("nlp").cohort("pool").quota("H100", 8));
    }

    @Test
    void raisingAQuotaAdmitsWaitingJobsAtOnceAndKeepsTheRunningOnesCharged() {
        QueueDriver q = QueueDriver.with(team(4).build()).submit(aJob("n1").tenant("nlp").gpus(8),
                aJob("v1").tenant("vision").gpus(4), aJob("v2").tenant("vision").gpus(4));
        assertThat(q.dispatchCount("v2")).isZero();
        assertThat(q.lastWait("v2").reason()).isEqualTo(WaitReason.QUOTA);

        var facts = q.core.reconfigure(team(8).build(), q.now());
        assertThat(facts).extracting(QueueFact::jobId).contains("v2");
        assertThat(q.core.queue("vision", q.now(), false).flavours().get(0).used()).isEqualTo(8_000);
        assertThat(q.core.queue("nlp", q.now(), false).flavours().get(0).used()).isEqualTo(8_000);
    }

    @Test
    void aQueueOutsideAnyCohortGetsTheRaisedQuotaToo() {
        ConfigBuilder four = aConfig().flavours("H100").queue(aQueue("solo").quota("H100", 4));
        ConfigBuilder eight = aConfig().flavours("H100").queue(aQueue("solo").quota("H100", 8));
        QueueDriver q = QueueDriver.with(four.build()).submit(aJob("s1").tenant("solo").gpus(4),
                aJob("s2").tenant("solo").gpus(4));
        assertThat(q.dispatchCount("s2")).isZero();
        assertThat(q.core.reconfigure(eight.build(), q.now())).filteredOn(f -> f instanceof QueueFact.JobDispatched)
                .extracting(QueueFact::jobId).containsExactly("s2");
    }

    @Test
    void removingAQueueLeavesItsWaitingJobsExplainedAsNeverFittingAndItsRunsFinishNormally() {
        QueueDriver q = QueueDriver.with(team(4).build()).submit(aJob("n1").tenant("nlp").gpus(8),
                aJob("v1").tenant("vision").gpus(4), aJob("v2").tenant("vision").gpus(4));
        FairShareConfig nlpOnly = aConfig().flavours("H100").queue(aQueue("nlp").quota("H100", 8)).build();
        var facts = q.core.reconfigure(nlpOnly, q.now());
        assertThat(facts).filteredOn(f -> f instanceof QueueFact.JobWaiting w && w.jobId().equals("v2")
                && w.reason() == WaitReason.NEVER_FITS).hasSize(1);
        q.finished("v1");
        assertThat(q.core.status("v1")).isEqualTo(JobState.SUCCEEDED);
    }

    @Test
    void aJobParkedForCapacityIsLookedAtAgainUnderANewQuotaAndMayPreemptThen() {
        // quota 64 on 8 GPUs: the high-priority job fits its quota, so it waits for capacity instead of preempting
        java.util.function.IntFunction<FairShareConfig> quota = n -> aConfig().flavours("H100")
                .classes("normal", 0, "high", 100)
                .set("preemption", java.util.Map.of("minRunTime", "1m", "gracePeriod", "30s"))
                .queue(aQueue("team").quota("H100", n)).build();
        QueueDriver q = QueueDriver.with(quota.apply(64)).at(0).submit(aJob("low").tenant("team").gpus(8)
                .submittedAt(0)).granted("low", 1);
        q.at(600).submit(aJob("high").tenant("team").gpus(8).priorityClass("high").submittedAt(600))
                .deferred("high", 1);
        assertThat(q.lastWait("high").reason()).isEqualTo(WaitReason.CAPACITY);

        // the operator sizes the quota to the GPUs: parked jobs are offered again, and now quota keeps "high" out
        q.reconfigure(quota.apply(8));

        assertThat(q.facts).filteredOn(f -> f instanceof QueueFact.JobPreempted p && p.jobId().equals("low"))
                .singleElement().satisfies(f -> assertThat(((QueueFact.JobPreempted) f).reason())
                        .isEqualTo(PreemptionReason.PRIORITY));
        assertThat(q.rebuilt(quota.apply(8)).state()).isEqualTo(q.core.state());
    }

    @Test
    void aCoreRestartedWithTheNewConfigurationAndTheSameFactsHoldsTheSameState() {
        QueueDriver q = QueueDriver.with(team(4).build()).submit(
                aJob("v1").tenant("vision").gpus(4), aJob("v2").tenant("vision").gpus(4),
                aJob("n1").tenant("nlp").gpus(2));
        q.reconfigure(team(8).build());

        QueueCore restarted = q.rebuilt(team(8).build());
        assertThat(restarted.state()).isEqualTo(q.core.state());
    }

    @Test
    void aConfigurationThatTakesAwayTheQueueOfQueuedOrRunningJobsIsNamedByTenant() {
        QueueDriver q = QueueDriver.with(team(4).build()).submit(aJob("n1").tenant("nlp").gpus(8),
                aJob("v1").tenant("vision").gpus(4), aJob("v2").tenant("vision").gpus(4));
        FairShareConfig nlpOnly = aConfig().flavours("H100").queue(aQueue("nlp").quota("H100", 8)).build();

        assertThat(q.core.stranded(nlpOnly)).singleElement().satisfies(p -> assertThat(p)
                .startsWith("queues: tenant vision has 1 queued and 1 running jobs in queue 'vision'")
                .contains("vision would have no queue"));
        assertThat(q.core.stranded(team(8).build())).isEmpty();
        // implicit queues exist for every tenant: nothing can be stranded by going back to them
        assertThat(q.core.stranded(FairShareConfig.implicit(Quotas.uniform(8)))).isEmpty();
    }

    @Test
    void aConfigurationThatTakesAwayThePriorityClassOfQueuedOrRunningJobsIsNamed() {
        QueueDriver q = QueueDriver.with(team(8).classes("normal", 0, "low", -10).build()).submit(
                aJob("l1").tenant("vision").gpus(4).priorityClass("low"),
                aJob("l2").tenant("vision").gpus(8).priorityClass("low"),
                aJob("n1").tenant("nlp").gpus(2));

        assertThat(q.core.stranded(team(8).classes("normal", 0).build())).singleElement().isEqualTo(
                "priorityClasses: 2 queued or running jobs of class 'low', which this configuration removes; add the"
                        + " class back, or apply with force to leave those jobs waiting NEVER_FITS");
        assertThat(q.core.stranded(team(8).classes("normal", 0, "low", -5).build())).as("a value changed").isEmpty();
        // jobs without a class follow the default: a new default that exists strands nothing
        assertThat(q.core.stranded(team(8).classes("standard", 0, "low", -10).build())).isEmpty();
    }

    @Test
    void aJobThatHadNoQueueBeforeDoesNotBlockTheNextConfiguration() {
        QueueDriver q = QueueDriver.with(team(4).build()).submit(aJob("x1").tenant("unknown").gpus(1));
        assertThat(q.lastWait("x1").reason()).isEqualTo(WaitReason.NEVER_FITS);
        assertThat(q.core.stranded(team(8).build())).isEmpty();
    }

    @Test
    void aRunningJobKeepsItsQuotaChargeWhileItsQueueIsGoneSoItsReturnDoesNotOverfillIt() {
        FairShareConfig visionAndNlp = aConfig().flavours("H100").queue(aQueue("vision").quota("H100", 4))
                .queue(aQueue("nlp").quota("H100", 8)).build();
        QueueDriver q = QueueDriver.with(visionAndNlp).submit(aJob("v1").tenant("vision").gpus(4),
                aJob("v2").tenant("vision").gpus(4));
        assertThat(q.dispatchCount("v2")).isZero();
        FairShareConfig nlpOnly = aConfig().flavours("H100").queue(aQueue("nlp").quota("H100", 8)).build();
        q.reconfigure(nlpOnly);

        q.reconfigure(visionAndNlp);
        assertThat(q.dispatchCount("v2")).as("v1 still runs on the 4 GPUs of vision's quota").isZero();
        assertThat(q.core.queue("vision", q.now(), false).flavours().get(0).used()).isEqualTo(4_000);

        // a core restarted without the queue, fed the same facts, then given the queue back, holds the same
        QueueCore restarted = q.rebuilt(nlpOnly);
        restarted.reconfigure(visionAndNlp, q.now());
        assertThat(restarted.state()).isEqualTo(q.core.state());

        q.finished("v1");
        assertThat(q.dispatchCount("v2")).as("the end of the run gives the quota back").isEqualTo(1);
    }
}
