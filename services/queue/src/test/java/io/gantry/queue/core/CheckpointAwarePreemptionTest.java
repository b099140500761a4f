package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** With checkpoints, preemption loses the work since a run's last checkpoint, and the victim resumes from it. */
class CheckpointAwarePreemptionTest {
    private static final Map<String, Object> FAST = Map.of("minRunTime", "1m", "gracePeriod", "30s");

    /** Queue "a" holds 8 GPUs: two low-priority 4-GPU runs, "old" (10 s) and "young" (300 s); "urgent" wants 4. */
    private static QueueDriver twoRuns() {
        QueueDriver q = QueueDriver.with(aConfig().flavours("H100").queue(aQueue("a").quota("H100", 8))
                .classes("normal", 0, "high", 100).set("preemption", FAST).build());
        q.at(10).submit(aJob("old").tenant("a").gpus(4).submittedAt(10)).granted("old", 1);
        q.at(300).submit(aJob("young").tenant("a").gpus(4).submittedAt(300)).granted("young", 1);
        return q;
    }

    private static List<String> preempted(QueueDriver q) {
        return q.facts.stream().filter(f -> f instanceof QueueFact.JobPreempted).map(QueueFact::jobId).toList();
    }

    private static Input.CheckpointCommitted saved(String job, long second, String path) {
        return new Input.CheckpointCommitted(job, "a", 1, second, path, JobBuilder.EPOCH.plusSeconds(second));
    }

    @Test
    void withoutCheckpointsTheYoungerRunLosesLessAndIsPreempted() {
        QueueDriver q = twoRuns().at(1000).submit(aJob("urgent").tenant("a").gpus(4).priority(10).submittedAt(1000));

        assertThat(preempted(q)).containsExactly("young");
    }

    @Test
    void theOlderRunThatJustCheckpointedLosesLessThanTheYoungerOneThatNeverDidAndIsPreemptedInstead() {
        QueueDriver q = twoRuns().at(990).apply(saved("old", 990, "/ckpt/old/990"))
                .at(1000).submit(aJob("urgent").tenant("a").gpus(4).priority(10).submittedAt(1000));

        assertThat(preempted(q)).containsExactly("old");
    }

    @Test
    void aPreemptedRunIsQueuedAgainFromItsNewestCheckpoint() {
        QueueDriver q = twoRuns().at(900).apply(saved("old", 900, "/ckpt/old/900"))
                .at(990).apply(saved("old", 990, "/ckpt/old/990"))
                .at(1000).submit(aJob("urgent").tenant("a").gpus(4).priority(10).submittedAt(1000))
                .released("old", 1, ReleaseCause.PREEMPTED);

        assertThat(q.facts).filteredOn(f -> f instanceof QueueFact.JobQueued j && j.jobId().equals("old")
                        && j.attempt() == 2).singleElement()
                .satisfies(f -> assertThat(((QueueFact.JobQueued) f).resumeFrom()).isEqualTo("/ckpt/old/990"));
    }
}
