package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Jobs that wait for other jobs (Slurm's afterok / afterany / afternotok), decided by the queue. */
class DependencyTest {

    private static QueueDriver preprocessRunning() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("prep").gpus(4));
        q.granted("prep", 1);
        return q;
    }

    @Test
    void aJobWaitsWithReasonDependencyUntilTheJobItNeedsSucceedsAndIsThenDispatched() {
        QueueDriver q = preprocessRunning().submit(aJob("train").gpus(4).after("prep"));

        assertThat(q.dispatchCount("train")).isZero();
        assertThat(q.lastWait("train").reason()).isEqualTo(WaitReason.DEPENDENCY);
        assertThat(q.lastWait("train").message()).isEqualTo("waits for prep to succeed (dispatched)");

        q.finished("prep");
        assertThat(q.dispatchCount("train")).isEqualTo(1);
    }

    @Test
    void aJobWaitingForADependencyChargesNoQuotaAndBlocksNobodyBehindIt() {
        QueueDriver q = preprocessRunning().submit(aJob("train").gpus(4).after("prep"), aJob("other").gpus(4));

        assertThat(q.dispatchCount("other")).isEqualTo(1);
        assertThat(q.core.reservedMilli("a")).isEqualTo(8000);
        assertThat(q.core.pending("a")).extracting(PendingEntry::jobId).containsExactly("train");
    }

    @Test
    void whenAnAfterokDependencyFailsTheJobAndEveryJobAfterItAreCancelledSayingWhy() {
        QueueDriver q = preprocessRunning().submit(aJob("train").after("prep"), aJob("eval").after("train"));

        q.failed("prep", 1, "task w exited with 1");

        assertThat(q.core.status("train")).isEqualTo(JobState.CANCELLED);
        assertThat(q.core.status("eval")).isEqualTo(JobState.CANCELLED);
        assertThat(q.all(QueueFact.JobCancelled.class, "train")).singleElement().satisfies(c -> {
            assertThat(c.attempt()).isZero();
            assertThat(c.requestedBy()).isEqualTo("queue");
            assertThat(c.message()).isEqualTo("dependency prep failed (afterok): it can never be met");
        });
        assertThat(q.all(QueueFact.JobCancelled.class, "eval")).singleElement().extracting(
                QueueFact.JobCancelled::message).isEqualTo("dependency train was cancelled (afterok): it can never be met");
        assertThat(q.dispatchCount("train") + q.dispatchCount("eval")).isZero();
    }

    @Test
    void conditionsTable() {
        record Case(String name, Dependency.Condition condition, boolean succeeds, JobState expected) {
        }
        for (Case c : new Case[] {
                new Case("afterok, succeeded: runs", Dependency.Condition.AFTER_OK, true, JobState.DISPATCHED),
                new Case("afterok, failed: cancelled", Dependency.Condition.AFTER_OK, false, JobState.CANCELLED),
                new Case("afterany, succeeded: runs", Dependency.Condition.AFTER_ANY, true, JobState.DISPATCHED),
                new Case("afterany, failed: runs", Dependency.Condition.AFTER_ANY, false, JobState.DISPATCHED),
                new Case("afternotok, failed: runs", Dependency.Condition.AFTER_NOT_OK, false, JobState.DISPATCHED),
                new Case("afternotok, succeeded: cancelled", Dependency.Condition.AFTER_NOT_OK, true,
                        JobState.CANCELLED)}) {
            QueueDriver q = preprocessRunning().submit(aJob("next").after(c.condition(), "prep"));
            assertThat(q.core.status("next")).as(c.name()).isEqualTo(JobState.QUEUED);
            if (c.succeeds()) {
                q.succeeded("prep", 1);
            } else {
                q.failed("prep", 1, "exit 1");
            }
            assertThat(q.core.status("next")).as(c.name()).isEqualTo(c.expected());
        }
    }

    @Test
    void aDependencyThatEndedBeforeTheSubmitIsDecidedAtOnce() {
        QueueDriver ok = preprocessRunning();
        ok.finished("prep");
        ok.submit(aJob("train").after("prep"));
        assertThat(ok.last).hasAtLeastOneElementOfType(QueueFact.JobDispatched.class);
        assertThat(ok.all(QueueFact.JobWaiting.class, "train")).isEmpty();

        QueueDriver failed = preprocessRunning();
        failed.failed("prep", 1, "exit 1");
        failed.submit(aJob("train").after("prep"));
        assertThat(failed.core.status("train")).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void aDependencyTheQueueHasNotSeenYetIsWaitedForUntilItArrivesAndEnds() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("train").after("prep"));
        assertThat(q.lastWait("train").message()).isEqualTo("waits for prep to succeed (not queued yet)");

        q.submit(aJob("prep")).granted("prep", 1).finished("prep");

        assertThat(q.dispatchCount("train")).isEqualTo(1);
    }

    @Test
    void anotherTenantsJobIsNeverADependencyAndIsReportedAsNotFound() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("theirs").tenant("b"))
                .submit(aJob("mine").after("theirs"));

        assertThat(q.core.status("mine")).isEqualTo(JobState.CANCELLED);
        assertThat(q.all(QueueFact.JobCancelled.class, "mine").get(0).message())
                .isEqualTo("dependency theirs was not found (afterok): it can never be met");
    }

    @Test
    void theWaitNamesTheFirstDependencyNotMetAndHowManyMoreFollow() {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(aJob("a1"), aJob("a2"), aJob("a3"))
                .submit(aJob("all").after("a1", "a2", "a3"));
        assertThat(q.lastWait("all").message()).isEqualTo("waits for a1 to succeed (dispatched) and 2 more");

        q.finished("a1");
        assertThat(q.lastWait("all").message()).isEqualTo("waits for a2 to succeed (dispatched) and 1 more");
        q.finished("a2");
        q.finished("a3");
        assertThat(q.dispatchCount("all")).isEqualTo(1);
    }

    @Test
    void aWaitingJobCanBeCancelledAndThenNothingHappensWhenItsDependencyEnds() {
        QueueDriver q = preprocessRunning().submit(aJob("train").after("prep")).cancel("train");
        q.finished("prep");

        assertThat(q.core.status("train")).isEqualTo(JobState.CANCELLED);
        assertThat(q.all(QueueFact.JobCancelled.class, "train")).singleElement()
                .extracting(QueueFact.JobCancelled::requestedBy).isEqualTo("a-user");
    }

    @Test
    void aRestartedQueueKeepsTheJobWaitingAndReleasesItWhenItsDependencySucceeds() {
        QueueDriver q = preprocessRunning().submit(aJob("train").gpus(4).after("prep"), aJob("eval").after("train"));

        QueueCore fresh = q.rebuilt();
        assertThat(fresh.state()).isEqualTo(q.core.state());
        assertThat(fresh.apply(new Input.Restored(), q.now())).isEmpty();

        var facts = fresh.apply(new Input.RunSucceeded("prep", "a", 1), q.now());
        assertThat(facts).filteredOn(f -> f instanceof QueueFact.JobDispatched).extracting(QueueFact::jobId)
                .containsExactly("train");
    }

    @Test
    void aRestartedQueueRebuildsCancelledDependentsFromTheFactsAlone() {
        QueueDriver q = preprocessRunning().submit(aJob("train").after("prep"), aJob("eval").after("train"));
        q.failed("prep", 1, "exit 1");

        QueueCore fresh = q.rebuilt();
        assertThat(fresh.state()).isEqualTo(q.core.state());
        assertThat(fresh.status("eval")).isEqualTo(JobState.CANCELLED);
        assertThat(fresh.apply(new Input.Restored(), q.now())).isEmpty();
    }
}
