package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** The checkpoint recovery chose for a requeued job travels with the attempt to placement, and only with it. */
class ResumeTest {
    private static List<QueueFact.JobDispatched> dispatches(QueueDriver q, String jobId) {
        return q.facts.stream().filter(f -> f instanceof QueueFact.JobDispatched d && d.jobId().equals(jobId))
                .map(QueueFact.JobDispatched.class::cast).toList();
    }

    @Test
    void aRequeuedAttemptIsDispatchedWithTheCheckpointItResumesFromAndTheFirstAttemptWithNone() {
        QueueDriver q = QueueDriver.withQuota(64);
        q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED)
                .apply(new Input.Requeued("a1", "a", 1, "node n1 failed", "/ckpt/a1/step-1200.pt"));

        assertThat(dispatches(q, "a1")).extracting(QueueFact.JobDispatched::attempt, QueueFact.JobDispatched::resumeFrom)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, null),
                        org.assertj.core.groups.Tuple.tuple(2, "/ckpt/a1/step-1200.pt"));
    }

    @Test
    void aRestartedQueueStillKnowsWhereTheQueuedAttemptResumesFrom() {
        QueueDriver before = QueueDriver.withQuota(0);
        before.submit(aJob("a1")).at(10);
        QueueFact.JobQueued requeued = new QueueFact.JobQueued("a1", "a", 2, aJob("a1").spec(),
                JobBuilder.EPOCH, 1, "node n1 failed", "/ckpt/a1/step-7.pt");

        QueueDriver after = QueueDriver.withQuota(64).given(requeued).capacityChanged();

        assertThat(dispatches(after, "a1")).singleElement()
                .extracting(QueueFact.JobDispatched::resumeFrom).isEqualTo("/ckpt/a1/step-7.pt");
    }

    @Test
    void aRequeueWithoutACheckpointStartsOverEvenIfAnEarlierAttemptResumed() {
        QueueDriver q = QueueDriver.withQuota(64);
        q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED)
                .apply(new Input.Requeued("a1", "a", 1, "node n1 failed", "/ckpt/a1/step-5.pt"))
                .released("a1", 2, ReleaseCause.NODE_FAILED)
                .apply(new Input.Requeued("a1", "a", 2, "node n2 failed", null));

        assertThat(dispatches(q, "a1")).extracting(QueueFact.JobDispatched::resumeFrom)
                .containsExactly(null, "/ckpt/a1/step-5.pt", null);
    }
}
