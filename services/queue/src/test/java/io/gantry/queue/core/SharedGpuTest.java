package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Tasks that take part of a GPU (a fraction or a MIG instance) pass through the queue intact and are charged to
 * quota what they hold, in thousandths of a GPU, by the rule placement and billing share.
 */
class SharedGpuTest {

    private static Input.Submitted shareJob(String id, int replicas, Integer milli, String mig) {
        JobSpec spec = new JobSpec(id, 0, null, List.of(new TaskGroup("infer", replicas, 0, null, 1000, 1024,
                List.of(), null, milli, mig)), null, null);
        return new Input.Submitted(id, "a", spec, JobBuilder.EPOCH);
    }

    @Test
    void twoHalfGpuJobsFitAOneGpuQuotaTogetherAndAThirdWaitsForHalfAGpu() {
        QueueDriver q = QueueDriver.withQuota(1);
        q.apply(shareJob("h1", 1, 500, null));
        q.apply(shareJob("h2", 1, 500, null));
        assertThat(q.dispatchedSpec("h1").tasks().get(0).gpuMilli()).isEqualTo(500);
        assertThat(q.dispatchCount("h2")).isEqualTo(1);
        assertThat(q.core.reservedMilli("a")).isEqualTo(1000);

        q.apply(shareJob("h3", 1, 500, null));
        assertThat(q.dispatchCount("h3")).isZero();
        assertThat(q.lastWait("h3").message()).contains("has 1 of 1 GPUs reserved, job needs 0.5");
    }

    @Test
    void aReleasedShareGivesBackExactlyWhatItWasCharged() {
        QueueDriver q = QueueDriver.withQuota(1);
        q.apply(shareJob("h1", 1, 300, null));
        q.apply(shareJob("h2", 1, 750, null));
        assertThat(q.dispatchCount("h2")).as("0.3 + 0.75 > 1").isZero();
        q.released("h1", 1, ReleaseCause.RUN_SUCCEEDED);
        assertThat(q.dispatchCount("h2")).isEqualTo(1);
        assertThat(q.core.reservedMilli("a")).isEqualTo(750);
    }

    @Test
    void aMigInstanceIsChargedItsComputeSlicesOverSeven() {
        QueueDriver q = QueueDriver.withQuota(1);
        q.apply(shareJob("m1", 2, null, "3g.40gb"));
        assertThat(q.dispatchedSpec("m1").tasks().get(0).migProfile()).isEqualTo("3g.40gb");
        assertThat(q.core.reservedMilli("a")).as("2 x 3/7 of a GPU").isEqualTo(2 * 428);
        q.apply(shareJob("m2", 1, null, "1g.10gb"));
        assertThat(q.dispatchCount("m2")).as("856 + 142 <= 1000").isEqualTo(1);
        q.apply(shareJob("m3", 1, null, "1g.10gb"));
        assertThat(q.dispatchCount("m3")).isZero();
        assertThat(q.lastWait("m3").message()).contains("has 0.998 of 1 GPUs reserved, job needs 0.142");
    }

    @Test
    void aPartOfAGpuNeedsZeroWholeGpusAndOneKindOfPart() {
        assertThatThrownBy(() -> new TaskGroup("t", 1, 1, null, 0, 0, List.of(), null, 500, null)).hasMessageContaining("gpuMilli must be 1-999 with gpus = 0");
        assertThatThrownBy(() -> new TaskGroup("t", 1, 0, null, 0, 0, List.of(), null, 500, "1g.10gb")).hasMessageContaining("migProfile needs gpus = 0 and no gpuMilli");
        assertThatThrownBy(() -> new TaskGroup("t", 1, 0, null, 0, 0, List.of(), null, null, "big")).hasMessageContaining("migProfile must be named");
    }
}
