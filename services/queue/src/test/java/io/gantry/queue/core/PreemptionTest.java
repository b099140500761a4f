package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Preemption: reclaim, priority and over-fair-share victims, least work lost first, grace and minimum run time. */
class PreemptionTest {

    /** DaoCloud d.run: inference and training share a cohort; training borrows inference's idle GPUs. */
    private static ConfigBuilder dRun(Map<String, Object> preemption) {
        return aConfig().flavours("H100").cohort("gpu-pool")
                .queue(aQueue("inference").cohort("gpu-pool").quota("H100", 8))
                .queue(aQueue("training").cohort("gpu-pool").quota("H100", 8))
                .classes("normal", 0, "high", 100)
                .set("preemption", preemption);
    }

    private static final Map<String, Object> FAST = Map.of("minRunTime", "1m", "gracePeriod", "30s");

    private static JobBuilder[] ones(String prefix, String tenant, int n) {
        return IntStream.rangeClosed(1, n).mapToObj(i -> aJob(prefix + i).tenant(tenant).gpus(1).submittedAt(i))
                .toArray(JobBuilder[]::new);
    }

    private static List<QueueFact.JobPreempted> preempted(QueueDriver q) {
        return q.facts.stream().filter(f -> f instanceof QueueFact.JobPreempted).map(f -> (QueueFact.JobPreempted) f)
                .toList();
    }

    /** Training fills its 8 and borrows inference's 8; ten minutes later inference wants 4 back. */
    private static QueueDriver trainingBorrowsEverything(ConfigBuilder config) {
        QueueDriver q = QueueDriver.with(config.build()).at(10).submit(ones("t", "training", 16));
        for (int i = 1; i <= 16; i++) {
            q.granted("t" + i, 1);
        }
        return q.at(600);
    }

    @Test
    void aQueueBelowItsNominalQuotaReclaimsWhatTrainingBorrowedPreemptingTheRunsThatLoseTheLeastWork() {
        QueueDriver q = trainingBorrowsEverything(dRun(FAST));
        q.submit(aJob("inf1").tenant("inference").gpus(4).submittedAt(600));

        List<QueueFact.JobPreempted> p = preempted(q);
        // all started at the same second, so least work lost = fewest GPU-seconds: the newest dispatches
        assertThat(p).extracting(QueueFact.JobPreempted::jobId).containsExactlyInAnyOrder("t13", "t14", "t15", "t16");
        assertThat(p).allSatisfy(x -> {
            assertThat(x.reason()).isEqualTo(PreemptionReason.RECLAIM);
            assertThat(x.preemptorJobId()).isEqualTo("inf1");
            assertThat(x.graceSeconds()).isEqualTo(30);
            assertThat(x.message()).contains("queue inference reclaims 1 x H100", "lent to queue training");
        });
        assertThat(q.lastWait("inf1").message()).startsWith("preempting: waiting for 4 jobs").contains("RECLAIM");
        assertThat(q.lastWait("inf1").quotaWait()).isEqualTo(QuotaWait.PREEMPTING);
        assertThat(q.dispatchCount("inf1")).isZero();
    }

    @Test
    void aReclaimStopsTheBorrowersLowestPriorityRunFirstThoughItLosesMoreWorkAndNothingElse() {
        // training: its 8, then a low-priority run and, later, a normal one, borrowing 8 of inference's 8
        ConfigBuilder config = aConfig().flavours("H100").cohort("gpu-pool")
                .queue(aQueue("inference").cohort("gpu-pool").quota("H100", 8))
                .queue(aQueue("training").cohort("gpu-pool").quota("H100", 8))
                .classes("low", -10, "normal", 0).set("preemption", FAST);
        QueueDriver q = QueueDriver.with(config.build()).at(10)
                .submit(aJob("big").tenant("training").gpus(8).priorityClass("normal").submittedAt(1))
                .submit(aJob("low").tenant("training").gpus(4).priorityClass("low").submittedAt(2));
        q.granted("big", 1).granted("low", 1);
        q.at(300).submit(aJob("normal").tenant("training").gpus(4).priorityClass("normal").submittedAt(300));
        q.granted("normal", 1);
        q.at(900).submit(aJob("inf").tenant("inference").gpus(4).submittedAt(900));

        // the normal run lost less work, but stopped instead it would, queued again, stop the low one itself
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactly("low");
        assertThat(preempted(q)).singleElement().satisfies(x ->
                assertThat(x.reason()).isEqualTo(PreemptionReason.RECLAIM));
    }

    @Test
    void whileItsVictimsStopTheirQuotaIsHeldForThePreemptorAndOthersAreToldSoTyped() {
        QueueDriver q = trainingBorrowsEverything(dRun(FAST));
        q.submit(aJob("inf1").tenant("inference").gpus(4).submittedAt(600));
        q.released("t13", 1, ReleaseCause.PREEMPTED);

        // t13 is queued again; its 1 GPU fits the cohort's quota, but that quota is inf1's until all four stop
        assertThat(q.dispatchCount("t13")).isEqualTo(1);
        assertThat(q.lastWait("t13").reason()).isEqualTo(WaitReason.QUOTA);
        assertThat(q.lastWait("t13").quotaWait()).isEqualTo(QuotaWait.HELD_FOR_PREEMPTOR);
        assertThat(q.lastWait("t13").message()).contains("reserved for job inf1, which preempted runs to get it");
    }

    @Test
    void preemptedRunsAreRequeuedWithTheirOriginalSubmitTimeAndThePreemptorGetsTheirQuotaFirst() {
        QueueDriver q = trainingBorrowsEverything(dRun(FAST));
        q.submit(aJob("inf1").tenant("inference").gpus(4).submittedAt(600));
        for (String v : List.of("t13", "t14", "t15")) {
            q.released(v, 1, ReleaseCause.PREEMPTED);
        }
        // three of four GPUs back: the requeued runs must not take them, the preemptor waits for the fourth
        assertThat(q.dispatchCount("t13")).isEqualTo(1);
        assertThat(q.dispatchCount("inf1")).isZero();
        q.released("t16", 1, ReleaseCause.PREEMPTED);

        assertThat(q.dispatchCount("inf1")).isEqualTo(1);
        QueueFact.JobQueued requeued = q.all(QueueFact.JobQueued.class, "t13").get(1);
        assertThat(requeued.attempt()).isEqualTo(2);
        assertThat(requeued.submittedAt()).isEqualTo(JobBuilder.EPOCH.plusSeconds(13));
        assertThat(requeued.requeuedBecause()).contains("preempted (RECLAIM) for job inf1");
        assertThat(q.core.status("t13")).isEqualTo(JobState.QUEUED);
        assertThat(preempted(q)).hasSize(4); // nothing preempted twice, no loop
    }

    @Test
    void reclaimTakesOnlyWhatWasBorrowedAndNeverMoreThanThePreemptorNeeds() {
        QueueDriver q = trainingBorrowsEverything(dRun(FAST));
        q.submit(aJob("inf1").tenant("inference").gpus(8).submittedAt(600));
        assertThat(preempted(q)).hasSize(8);
        q.released("t9", 1, ReleaseCause.PREEMPTED); // keep the tree busy with the others still stopping

        // beyond inference's nominal: reclaim does not apply, nothing more is preempted
        QueueDriver r = trainingBorrowsEverything(dRun(FAST));
        r.submit(aJob("inf1").tenant("inference").gpus(12).submittedAt(600));
        assertThat(preempted(r)).isEmpty();
    }

    @Test
    void sharesAreVictimsForWhatTheyHoldAndTheirReleaseGivesBackExactlyThat() {
        // training fills its 8 GPUs with whole ones and borrows inference's 8 as 16 half-GPU runs
        QueueDriver q = QueueDriver.with(dRun(FAST).build()).at(10).submit(ones("t", "training", 8));
        for (int i = 1; i <= 16; i++) {
            q.submit(aJob("h" + i).tenant("training").fraction(500).submittedAt(100 + i));
        }
        for (int i = 1; i <= 8; i++) {
            q.granted("t" + i, 1);
        }
        for (int i = 1; i <= 16; i++) {
            q.granted("h" + i, 1);
        }
        q.at(600).submit(aJob("inf1").tenant("inference").gpus(2).submittedAt(600));

        // 2 GPUs back = four halves (the least work lost: the newest, and a half loses half a whole GPU's work)
        List<QueueFact.JobPreempted> p = preempted(q);
        assertThat(p).extracting(QueueFact.JobPreempted::jobId).containsExactlyInAnyOrder("h13", "h14", "h15", "h16");
        assertThat(p).allSatisfy(x -> assertThat(x.message()).contains("queue inference reclaims 0.5 x H100"));
        for (String v : List.of("h13", "h14", "h15")) {
            q.released(v, 1, ReleaseCause.PREEMPTED);
        }
        assertThat(q.dispatchCount("inf1")).as("1.5 GPUs back of the 2 it needs").isZero();
        q.released("h16", 1, ReleaseCause.PREEMPTED);
        assertThat(q.dispatchCount("inf1")).isEqualTo(1);
        assertThat(q.core.queue("training", q.now(), false).flavours().get(0).used())
                .as("8 whole + 12 halves, in thousandths").isEqualTo(8_000 + 12 * 500);
    }

    @Test
    void runsYoungerThanTheMinimumRunTimeAreProtectedUntilATickFindsThemOldEnough() {
        QueueDriver q = QueueDriver.with(dRun(FAST).build()).at(10).submit(ones("t", "training", 16));
        q.at(30).submit(aJob("inf1").tenant("inference").gpus(2).submittedAt(30));
        assertThat(preempted(q)).isEmpty();
        assertThat(q.lastWait("inf1").reason()).isEqualTo(WaitReason.QUOTA);

        // t1..t16 were dispatched at seconds 10..25: at 75 only t1..t6 have run a minute; of those, t5 and t6
        // lose the least work
        q.at(75).apply(new Input.Tick(false));
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactlyInAnyOrder("t5", "t6");
    }

    @Test
    void aHigherPriorityJobPreemptsLowerPriorityRunsOfItsOwnQueueButNotEqualOnes() {
        ConfigBuilder c = aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8))
                .classes("normal", 0, "high", 100).set("preemption", FAST);
        QueueDriver q = QueueDriver.with(c.build()).at(10).submit(ones("low", "team", 8)).at(400);
        q.submit(aJob("same").tenant("team").gpus(2).submittedAt(400));
        assertThat(preempted(q)).isEmpty();

        q.submit(aJob("urgent").tenant("team").gpus(2).priorityClass("high").submittedAt(401));
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactlyInAnyOrder("low7", "low8");
        assertThat(preempted(q)).allSatisfy(p -> assertThat(p.reason()).isEqualTo(PreemptionReason.PRIORITY));
        q.released("low7", 1, ReleaseCause.PREEMPTED).released("low8", 1, ReleaseCause.PREEMPTED);
        assertThat(q.dispatchCount("urgent")).isEqualTo(1);
        assertThat(q.dispatchCount("same")).isZero();
    }

    @Test
    void victimsAreChosenByLeastWorkLostThenLowestPriorityThenNewest() {
        ConfigBuilder c = aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8))
                .classes("normal", 0, "low", -10, "high", 100).set("preemption", FAST);
        QueueDriver q = QueueDriver.with(c.build())
                .at(0).submit(aJob("old-big").tenant("team").gpus(4).submittedAt(0))
                .at(500).submit(aJob("young-normal").tenant("team").gpus(2).submittedAt(500))
                .at(500).submit(aJob("young-low").tenant("team").gpus(2).priorityClass("low").submittedAt(500));
        q.at(600).submit(aJob("urgent").tenant("team").gpus(2).priorityClass("high").submittedAt(600));
        // young-normal and young-low lost the same GPU-seconds; the lower priority goes
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactly("young-low");
    }

    @Test
    void nothingIsPreemptedWhenEvenEveryAllowedVictimWouldNotMakeRoom() {
        // FIFO inside the queue: in attained-service order high-running, past one GPU-hour, would yield to urgent
        ConfigBuilder c = aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8))
                .classes("normal", 0, "high", 100).set("preemption", FAST).set("ordering", Map.of("policy", "fifo"));
        QueueDriver q = QueueDriver.with(c.build()).at(0)
                .submit(aJob("high-running").tenant("team").gpus(6).priorityClass("high").submittedAt(0))
                .submit(aJob("low-running").tenant("team").gpus(2).submittedAt(1))
                .at(600).submit(aJob("urgent").tenant("team").gpus(4).priorityClass("high").submittedAt(600));
        assertThat(preempted(q)).isEmpty();
    }

    @Test
    void overFairSharePreemptionIsOffUnlessConfiguredAndThenNeverPushesTheVictimQueueBelowThePreemptorsShare() {
        ConfigBuilder pool = aConfig().flavours("H100").cohort("pool").halfLife("0")
                .queue(aQueue("a").cohort("pool").quota("H100", 4))
                .queue(aQueue("b").cohort("pool").quota("H100", 4));
        Map<String, Object> noReclaim = Map.of("minRunTime", "1m", "reclaimWithinCohort", "never");
        QueueDriver off = QueueDriver.with(pool.set("preemption", noReclaim).build()).at(0).submit(ones("b", "b", 8));
        off.at(600).submit(aJob("a1").tenant("a").gpus(2).submittedAt(600));
        assertThat(preempted(off)).isEmpty();

        Map<String, Object> fair = Map.of("minRunTime", "1m", "reclaimWithinCohort", "never", "overFairShare", true);
        QueueDriver on = QueueDriver.with(pool.set("preemption", fair).build()).at(0).submit(ones("b", "b", 8));
        on.at(600).submit(aJob("a1").tenant("a").gpus(2).submittedAt(600));
        // b holds 8 of 8 (share 1.0); a with 2 would hold 0.25 and b keeps 0.75 >= 0.25
        assertThat(preempted(on)).hasSize(2)
                .allSatisfy(x -> assertThat(x.reason()).isEqualTo(PreemptionReason.FAIR_SHARE));

        // a gang of 6 would leave b with 2 (0.25) below a's 0.75: not allowed, so nothing is preempted
        QueueDriver big = QueueDriver.with(pool.set("preemption", fair).build()).at(0).submit(ones("b", "b", 8));
        big.at(600).submit(aJob("a6").tenant("a").gpus(6).submittedAt(600));
        assertThat(preempted(big)).isEmpty();
    }

    @Test
    void aRunThatFinishesDuringItsGracePeriodIsNotRequeuedAndItsQuotaGoesToThePreemptor() {
        ConfigBuilder c = aConfig().flavours("H100").queue(aQueue("team").quota("H100", 2))
                .classes("normal", 0, "high", 100).set("preemption", FAST);
        QueueDriver q = QueueDriver.with(c.build()).at(0).submit(aJob("low").tenant("team").gpus(2).submittedAt(0))
                .granted("low", 1)
                .at(600).submit(aJob("urgent").tenant("team").gpus(2).priorityClass("high").submittedAt(600));
        assertThat(preempted(q)).hasSize(1);
        q.succeeded("low", 1).released("low", 1, ReleaseCause.RUN_SUCCEEDED);
        assertThat(q.core.status("low")).isEqualTo(JobState.SUCCEEDED);
        assertThat(q.dispatchCount("urgent")).isEqualTo(1);
    }

    @Test
    void aPreemptionWhoseReleaseNeverComesExpiresAndIsDecidedAgain() {
        ConfigBuilder c = aConfig().flavours("H100").queue(aQueue("team").quota("H100", 2))
                .classes("normal", 0, "high", 100).set("preemption", FAST);
        QueueDriver q = QueueDriver.with(c.build()).at(0).submit(aJob("low").tenant("team").gpus(2).submittedAt(0))
                .at(600).submit(aJob("urgent").tenant("team").gpus(2).priorityClass("high").submittedAt(600));
        assertThat(preempted(q)).hasSize(1);
        q.at(620).apply(new Input.Tick(false));
        assertThat(preempted(q)).hasSize(1); // still within grace + slack
        q.at(600 + 30 + 30 + 1).apply(new Input.Tick(false));
        assertThat(preempted(q)).hasSize(2).extracting(QueueFact.JobPreempted::attempt).containsExactly(1, 1);
    }

    @Test
    void preemptionIsOffWhenConfiguredSo() {
        QueueDriver q = trainingBorrowsEverything(dRun(Map.of("reclaimWithinCohort", "never", "withinQueue", "never")));
        q.submit(aJob("inf1").tenant("inference").gpus(4).submittedAt(600));
        q.at(900).apply(new Input.Tick(false));
        assertThat(preempted(q)).isEmpty();
    }

    @Test
    void aRestartedCoreRemembersTheRunsBeingPreemptedAndDecidesTheSameNextStep() {
        QueueDriver q = trainingBorrowsEverything(dRun(FAST));
        q.submit(aJob("inf1").tenant("inference").gpus(4).submittedAt(600));
        QueueCore restarted = q.rebuilt();
        assertThat(restarted.state()).isEqualTo(q.core.state());

        // both see the same thing next: no new preemption while the first is under way, and the same requeue
        Input tick = new Input.Tick(false);
        assertThat(restarted.apply(tick, q.now())).isEqualTo(q.core.apply(tick, q.now()));
        Input release = new Input.Released("t16", "training", 1, ReleaseCause.PREEMPTED);
        assertThat(restarted.apply(release, q.now())).isEqualTo(q.core.apply(release, q.now()));
    }
}
