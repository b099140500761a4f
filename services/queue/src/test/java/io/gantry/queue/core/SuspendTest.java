package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Suspend and resume (Kubernetes Job spec.suspend, Kueue's semantics), decided by the queue. */
class SuspendTest {

    @Test
    void aJobSubmittedSuspendedStaysQueuedWithReasonSuspendedUntilResumed() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4).suspended());

        assertThat(q.dispatchCount("j")).isZero();
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.SUSPENDED);
        assertThat(q.lastWait("j").message()).isEqualTo("submitted suspended; resume it to let it run");
        assertThat(q.core.reservedMilli("a")).isZero();

        q.resume("j");
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void aSuspendedQueuedJobIsSkippedAndOnResumeGetsItsPlaceBackByItsSubmitTime() {
        QueueDriver q = QueueDriver.withQuota(4).at(10).submit(aJob("running").gpus(4)).granted("running", 1)
                .at(20).submit(aJob("first").gpus(4).submittedAt(20)).at(30).submit(aJob("second").gpus(4)
                        .submittedAt(30));
        q.suspend("first");
        assertThat(q.lastWait("first").message()).isEqualTo("suspended by alice; resume it to let it run");
        assertThat(q.core.pending("a")).filteredOn(e -> e.jobId().equals("first"))
                .extracting(PendingEntry::waitReason).containsExactly(WaitReason.SUSPENDED);

        q.resume("first");
        assertThat(q.lastWait("first").reason()).isEqualTo(WaitReason.QUOTA);
        // what holds it once resumed: its queue's own quota, in use (not "its turn", which the resume alone says)
        assertThat(q.lastWait("first").quotaWait()).isEqualTo(QuotaWait.OWN_QUOTA);
        q.finished("running");

        assertThat(q.dispatchOrder()).containsExactly("running", "first");
    }

    @Test
    void suspendingTwiceWritesOneFactAndResumingAJobThatIsNotSuspendedWritesNone() {
        QueueDriver q = QueueDriver.withQuota(0).at(10).submit(aJob("j").gpus(4));
        q.suspend("j");
        int facts = q.facts.size();
        q.suspend("j");
        assertThat(q.facts).hasSize(facts);

        QueueDriver other = QueueDriver.withQuota(0).at(10).submit(aJob("k").gpus(4));
        int before = other.facts.size();
        other.resume("k");
        assertThat(other.facts).hasSize(before);
    }

    @Test
    void suspendingARunningJobPreemptsItAndItIsRequeuedFromItsCheckpointStillSuspendedAndNotAsAFailure() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4).retry(1, 0)).granted("j", 1);
        q.apply(new Input.CheckpointCommitted("j", "a", 1, 100, "/ckpt/j/100", q.now()));

        q.suspend("j");
        assertThat(q.all(QueueFact.JobPreempted.class, "j")).singleElement().satisfies(p -> {
            assertThat(p.reason()).isEqualTo(PreemptionReason.SUSPENDED);
            assertThat(p.preemptorJobId()).isNull();
            assertThat(p.message()).startsWith("suspended by alice");
        });
        q.suspend("j");
        assertThat(q.all(QueueFact.JobPreempted.class, "j")).as("idempotent").hasSize(1);

        q.released("j", 1, ReleaseCause.SUSPENDED);
        QueueFact.JobQueued again = q.all(QueueFact.JobQueued.class, "j").get(1);
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.resumeFrom()).isEqualTo("/ckpt/j/100");
        assertThat(again.failureRetries()).isZero();
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.SUSPENDED);
        assertThat(q.dispatchCount("j")).isEqualTo(1);
        assertThat(q.core.reservedMilli("a")).isZero();

        q.resume("j");
        assertThat(q.all(QueueFact.JobDispatched.class, "j").get(1).resumeFrom()).isEqualTo("/ckpt/j/100");
    }

    @Test
    void aRunResumedBeforePlacementStoppedItIsRequeuedAndDispatchedAgainAtOnce() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4)).granted("j", 1);
        // released PREEMPTED, as a placement from before SUSPENDED did: the same
        q.suspend("j").resume("j").released("j", 1, ReleaseCause.PREEMPTED);

        assertThat(q.dispatchCount("j")).isEqualTo(2);
    }

    @Test
    void aJobSuspendedBeforePlacementGrantedItIsAskedToStopAgainOnceGranted() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4));
        q.suspend("j");
        q.granted("j", 1);

        assertThat(q.all(QueueFact.JobPreempted.class, "j")).hasSize(2);
    }

    @Test
    void anInterruptedJobSuspendedMeanwhileStaysSuspendedWhenRecoveryRequeuesIt() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4)).granted("j", 1)
                .released("j", 1, ReleaseCause.NODE_FAILED);
        q.suspend("j").requeued("j", 1);

        assertThat(q.core.status("j")).isEqualTo(JobState.QUEUED);
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.SUSPENDED);
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void aSuspendedJobWhoseDependencyIsMetStaysSuspendedAndShowsSuspensionFirst() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("prep")).granted("prep", 1)
                .submit(aJob("train").after("prep").suspended());
        assertThat(q.lastWait("train").reason()).isEqualTo(WaitReason.SUSPENDED);
        q.resume("train");
        assertThat(q.lastWait("train").reason()).isEqualTo(WaitReason.DEPENDENCY);
        q.suspend("train").finished("prep");
        assertThat(q.dispatchCount("train")).isZero();
        q.resume("train");
        assertThat(q.dispatchCount("train")).isEqualTo(1);
    }

    @Test
    void aRestartedQueueRebuiltFromItsFactsAndTheRequestsKeepsTheJobSuspended() {
        QueueDriver q = QueueDriver.withQuota(4).at(10).submit(aJob("r").gpus(4)).granted("r", 1)
                .submit(aJob("j").gpus(4), aJob("k").gpus(4).suspended());
        q.suspend("j");
        q.resume("k");

        // the requests are restored from admission's topic, in any order with the queue's facts
        java.util.function.Consumer<QueueCore> requests = core -> {
            core.suspension(new Input.SuspensionRequested("j", "a", true, "alice"));
            core.suspension(new Input.SuspensionRequested("k", "a", false, "alice"));
        };
        QueueCore before = q.rebuilt(requests);
        QueueCore after = q.rebuilt();
        requests.accept(after);
        assertThat(before.state()).isEqualTo(q.core.state());
        assertThat(after.state()).isEqualTo(q.core.state());
        assertThat(before.apply(new Input.Restored(), q.now())).isEmpty();

        before.apply(new Input.RunSucceeded("r", "a", 1), q.now());
        var facts = before.apply(new Input.Released("r", "a", 1, ReleaseCause.RUN_SUCCEEDED), q.now());
        assertThat(facts).filteredOn(f -> f instanceof QueueFact.JobDispatched).extracting(QueueFact::jobId)
                .containsExactly("k");
    }

    @Test
    void aSuspendedRunWhoseStopExpiredIsAskedToStopAgainOnATick() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("j").gpus(4)).granted("j", 1);
        q.at(100).suspend("j");
        q.at(100 + 3600).apply(new Input.Tick(false));

        assertThat(q.all(QueueFact.JobPreempted.class, "j")).hasSize(2);
    }

    @Test
    void aResumedJobIsExplainedByWhatHoldsItNowNotLeftWaitingForItsTurn() {
        FairShareConfig lab = ConfigBuilder.aConfig().flavours("H100").cohort("lab")
                .queue(ConfigBuilder.aQueue("alpha").cohort("lab").quota("H100", 8, 4L, null))
                .queue(ConfigBuilder.aQueue("gamma").cohort("lab").quota("H100", 16)).build();
        QueueDriver q = QueueDriver.with(lab).at(10).submit(aJob("L").tenant("alpha").gpus(8)).granted("L", 1);
        q.suspend("L").released("L", 1, ReleaseCause.SUSPENDED);
        q.submit(aJob("X").tenant("alpha").gpus(4).submittedAt(20), aJob("N").tenant("alpha").gpus(8).submittedAt(21));
        assertThat(q.dispatchCount("X")).isEqualTo(1);
        assertThat(q.dispatchCount("N")).isEqualTo(1);

        int before = q.facts.size();
        q.resume("L");

        assertThat(q.lastWait("L").quotaWait()).as(q.lastWait("L").message()).isEqualTo(QuotaWait.BORROWING_LIMIT);
        // one wait per decision: admission orders a job's waits by time, and two of one instant (the resume's "its
        // turn", then the cycle's reason) would be told apart by their random event ids alone
        assertThat(q.facts.subList(before, q.facts.size())).filteredOn(QueueFact.JobWaiting.class::isInstance)
                .singleElement().extracting(f -> ((QueueFact.JobWaiting) f).quotaWait())
                .isEqualTo(QuotaWait.BORROWING_LIMIT);
        assertThat(q.lastWait("L").message()).contains("borrowing limit 4");
    }
}
