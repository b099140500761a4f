package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A job's own retry policy: a failed run is tried again after a growing backoff, until its budget is spent. */
class RetryTest {
    private static QueueDriver failingOnce(JobBuilder job) {
        QueueDriver q = QueueDriver.withQuota(8).at(10).submit(job);
        q.at(11).granted(job.id(), 1);
        q.at(100).failed(job.id(), 1, "task w exited with 3").released(job.id(), 1, ReleaseCause.RUN_FAILED);
        return q;
    }

    @Test
    void aFailedRunIsQueuedAgainAndOfferedToPlacementOnlyAfterItsBackoff() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 30));

        QueueFact.JobQueued again = q.all(QueueFact.JobQueued.class, "j").get(1);
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.failureRetries()).isEqualTo(1);
        assertThat(again.notBefore()).isEqualTo(JobBuilder.EPOCH.plusSeconds(130));
        assertThat(again.requeuedBecause()).isEqualTo("run failed: task w exited with 3; retry 1 of 2 after 30 s");
        assertThat(q.core.status("j")).isEqualTo(JobState.QUEUED);
        assertThat(q.lastWait("j")).as("the job view says why it waits").isEqualTo(new QueueFact.JobWaiting("j",
                "a", 2, WaitReason.BACKOFF, "retry 1 of 2 is offered at " + JobBuilder.EPOCH.plusSeconds(130)
                + " (a backoff of 30 s after its run failed: task w exited with 3)"));
        assertThat(q.dispatchCount("j")).isEqualTo(1);

        q.at(129).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).as("still backing off").isEqualTo(1);
        q.at(130).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).isEqualTo(2);
        assertThat(q.all(QueueFact.JobDispatched.class, "j").get(1).attempt()).isEqualTo(2);
    }

    @Test
    void aJobSuspendedAndResumedDuringItsBackoffStillSaysItBacksOff() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 30));
        q.at(110).suspend("j");
        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.SUSPENDED);

        q.at(115).resume("j");

        assertThat(q.lastWait("j").reason()).isEqualTo(WaitReason.BACKOFF);
        assertThat(q.lastWait("j").message()).endsWith("its retry is offered at " + JobBuilder.EPOCH.plusSeconds(130));
        q.at(130).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).isEqualTo(2);
    }

    @Test
    void eachRetryWaitsTwiceAsLongAndTheLastFailureFailsTheJobSayingSo() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 30));
        q.at(130).apply(new Input.Tick(false));
        q.at(131).granted("j", 2);
        q.at(200).failed("j", 2, "task w exited with 3").released("j", 2, ReleaseCause.RUN_FAILED);
        QueueFact.JobQueued third = q.all(QueueFact.JobQueued.class, "j").get(2);
        assertThat(third.failureRetries()).isEqualTo(2);
        assertThat(third.notBefore()).isEqualTo(JobBuilder.EPOCH.plusSeconds(260));
        q.at(260).apply(new Input.Tick(false));
        q.at(261).granted("j", 3);
        q.at(300).failed("j", 3, "task w exited with 3").released("j", 3, ReleaseCause.RUN_FAILED);

        assertThat(q.core.status("j")).isEqualTo(JobState.FAILED);
        assertThat(q.all(QueueFact.JobFailed.class, "j")).singleElement().satisfies(f -> {
            assertThat(f.attempt()).isEqualTo(3);
            assertThat(f.message()).isEqualTo("task w exited with 3 (retries used: 2 of 2)");
        });
        assertThat(q.core.reservedMilli("a")).isZero();
    }

    @Test
    void withoutARetryPolicyOrPastItsTimeLimitAFailedRunFailsTheJob() {
        QueueDriver plain = failingOnce(aJob("p").gpus(4));
        assertThat(plain.core.status("p")).isEqualTo(JobState.FAILED);

        QueueDriver limited = QueueDriver.withQuota(8).at(10).submit(aJob("t").gpus(4).retry(3, 0));
        limited.at(11).granted("t", 1);
        limited.at(100).apply(new Input.RunFailed("t", "a", 1, "time limit 60 s", FailureReason.TIME_LIMIT));
        assertThat(limited.core.status("t")).as("it would hit its limit again").isEqualTo(JobState.FAILED);
    }

    @Test
    void aRetryWithoutBackoffIsOfferedAtOnceAndInfrastructureRequeuesKeepTheCount() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 0));
        assertThat(q.dispatchCount("j")).isEqualTo(2);
        // a node failure is recovery's: requeued under its budget, the job's own retries used stay 1
        q.at(120).granted("j", 2).released("j", 2, ReleaseCause.NODE_FAILED).requeued("j", 2);
        assertThat(q.all(QueueFact.JobQueued.class, "j").get(2).failureRetries()).isEqualTo(1);
    }

    @Test
    void aJobCancelledDuringItsBackoffIsNeverOfferedAgain() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 300));
        q.at(150).cancel("j");
        assertThat(q.core.status("j")).isEqualTo(JobState.CANCELLED);
        q.at(1_000).apply(new Input.Tick(false));
        assertThat(q.dispatchCount("j")).isEqualTo(1);
    }

    @Test
    void aRestartedCoreKeepsTheBackoffItRebuildsFromItsFacts() {
        QueueDriver q = failingOnce(aJob("j").gpus(4).retry(2, 30));
        QueueCore fresh = new QueueCore(q.config);
        q.facts.forEach(f -> fresh.replay(f, JobBuilder.EPOCH.plusSeconds(100)));
        assertThat(fresh.apply(new Input.Restored(), JobBuilder.EPOCH.plusSeconds(110)))
                .noneMatch(f -> f instanceof QueueFact.JobDispatched);
        assertThat(fresh.nextRetryAt()).isEqualTo(JobBuilder.EPOCH.plusSeconds(130));
        assertThat(fresh.apply(new Input.Tick(false), JobBuilder.EPOCH.plusSeconds(130)))
                .anyMatch(f -> f instanceof QueueFact.JobDispatched d && d.attempt() == 2);
    }

    @Test
    void theBackoffDoublesUpToAnHourAndThePolicyIsBounded() {
        RetryPolicy p = new RetryPolicy(10, 600);
        assertThat(List.of(p.backoff(1), p.backoff(2), p.backoff(3), p.backoff(4)))
                .containsExactly(Duration.ofMinutes(10), Duration.ofMinutes(20), Duration.ofMinutes(40),
                        Duration.ofHours(1));
        assertThatThrownBy(() -> new RetryPolicy(11, 0)).hasMessageContaining("maxRetries must be 0-10");
        assertThatThrownBy(() -> new RetryPolicy(1, 3601)).hasMessageContaining("backoffSeconds must be 0-3600");
    }
}
