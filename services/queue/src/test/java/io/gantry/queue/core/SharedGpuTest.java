package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tasks that take part of a GPU (a fraction or a MIG instance) pass through the queue intact. */
class SharedGpuTest {

    private static Input.Submitted halfGpuJob(String id, int replicas) {
        JobSpec spec = new JobSpec(id, 0, null, List.of(new TaskGroup("infer", replicas, 0, null, 1000, 1024,
                List.of(), null, 500, null)), null, null);
        return new Input.Submitted(id, "a", spec, JobBuilder.EPOCH);
    }

    @Test
    void aFractionalJobReachesPlacementWithItsFractionAndCountsOneGpuPerTaskAgainstQuota() {
        QueueDriver q = QueueDriver.withQuota(3);
        q.apply(halfGpuJob("half", 2));
        JobSpec dispatched = q.dispatchedSpec("half");
        assertThat(dispatched.tasks().get(0).gpuMilli()).isEqualTo(500);
        assertThat(q.core.reservedGpus("a")).isEqualTo(2);

        q.apply(halfGpuJob("more", 2));
        assertThat(q.dispatchCount("more")).isZero();
        assertThat(q.lastWait("more").message()).contains("has 2 of 3 GPUs reserved, job needs 2");
    }

    @Test
    void aPartOfAGpuNeedsZeroWholeGpusAndOneKindOfPart() {
        assertThatThrownBy(() -> new TaskGroup("t", 1, 1, null, 0, 0, List.of(), null, 500, null)).hasMessageContaining("gpuMilli must be 1-999 with gpus = 0");
        assertThatThrownBy(() -> new TaskGroup("t", 1, 0, null, 0, 0, List.of(), null, 500, "1g.10gb")).hasMessageContaining("migProfile needs gpus = 0 and no gpuMilli");
    }
}
