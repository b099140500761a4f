package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The spec the queue hands placement: a task that named no model is pinned to the flavour its quota was charged on,
 * unless pinning could send it where it must not go.
 */
class FlavourAssignmentTest {
    /** Quota only on L4 (the first flavour): whatever the job accepts, the charge lands there. */
    private static QueueDriver cluster() {
        return QueueDriver.with(aConfig().flavours("L4", "H100")
                .queue(aQueue("a").quota("L4", 8).quota("H100", 0)).build());
    }

    @Test
    void aWholeGpuTaskWithoutAModelIsPinnedToItsFlavour() {
        QueueDriver q = cluster().submit(aJob("j").gpus(2));
        assertThat(q.dispatchedSpec("j").tasks().get(0).gpuModel()).isEqualTo("L4");
    }

    @Test
    void aFractionIsPinnedToTheFlavourItIsChargedOn() {
        QueueDriver q = cluster().submit(aJob("f").fraction(500));
        assertThat(q.dispatchedSpec("f").tasks().get(0).gpuModel()).isEqualTo("L4");
    }

    @Test
    void aTaskNamingATierIsNeverPinnedOutsideIt() {
        // the queue does not know which models tier "fast" has (placement's configuration does): pinning it to L4
        // could run it on a model outside its tier
        QueueDriver q = cluster().submit(aJob("t").gpus(2).tier("fast"));
        JobSpec dispatched = q.dispatchedSpec("t");
        assertThat(dispatched.tasks().get(0).gpuModel()).isNull();
        assertThat(dispatched.tasks().get(0).gpuTier()).isEqualTo("fast");
    }

    @Test
    void aMigInstanceIsLeftForPlacementToPutOnAMigCapableDevice() {
        QueueDriver q = cluster().submit(aJob("m").mig("1g.10gb"));
        assertThat(q.dispatchedSpec("m").tasks().get(0).gpuModel()).isNull();
        assertThat(q.dispatchedSpec("m").tasks().get(0).migProfile()).isEqualTo("1g.10gb");
    }

    /**
     * A task the queue leaves unpinned (a MIG instance, a tier) is still charged on the flavour its quota was checked
     * on, also after a restart rebuilds the ledger from the facts: here H100, the only flavour with quota, not the
     * queue's first flavour.
     */
    @Test
    void anUnpinnedTaskIsChargedOnTheFlavourItWasAdmittedOn() {
        QueueDriver q = QueueDriver.with(aConfig().flavours("L4", "H100")
                .queue(aQueue("a").quota("L4", 0).quota("H100", 8)).build());
        q.submit(aJob("m").mig("3g.40gb")).submit(aJob("t").gpus(2).tier("fast"));
        assertThat(q.dispatchCount("m")).isEqualTo(1);
        assertThat(q.dispatchCount("t")).isEqualTo(1);
        assertThat(q.core.state().usage().get("a")).as("L4, H100").startsWith(0L, 428L + 2000L);
        assertThat(q.rebuilt().state()).isEqualTo(q.core.state());
    }
}
