package io.gantry.queue.kafka;

import io.gantry.queue.core.DeferralCause;
import io.gantry.queue.core.QueueFact;
import io.gantry.queue.core.QuotaWait;
import io.gantry.queue.core.ReleaseCause;
import io.gantry.queue.core.WaitReason;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** Placement's reasons reach the queue's core typed: every symbol on the wire has its constant, and no other. */
class ReasonMappingTest {
    @Test
    void everyReleaseReasonOnTheWireIsAReleaseCauseOfTheCore() {
        assertThat(Arrays.stream(io.gantry.events.ReleaseReason.values()).map(Enum::name))
                .containsExactlyElementsOf(Arrays.stream(ReleaseCause.values()).map(Enum::name).toList());
    }

    @Test
    void everyDeferralReasonOnTheWireIsADeferralCauseOfTheCore() {
        assertThat(Arrays.stream(io.gantry.events.DeferralReason.values()).map(Enum::name))
                .containsExactlyElementsOf(Arrays.stream(DeferralCause.values()).map(Enum::name).toList());
    }

    @Test
    void everyQuotaWaitOfTheCoreIsOnTheWireAndAWaitKeepsItsTypedCauseThere() {
        assertThat(Arrays.stream(io.gantry.events.QuotaWait.values()).map(Enum::name))
                .containsExactlyElementsOf(Arrays.stream(QuotaWait.values()).map(Enum::name).toList());
        for (QueueFact.JobWaiting w : new QueueFact.JobWaiting[] {
                new QueueFact.JobWaiting("j", "t", 2, WaitReason.QUOTA, "waiting for quota: cohort c needs 8 x H100,"
                        + " 0 free", QuotaWait.COHORT_FULL, null),
                new QueueFact.JobWaiting("j", "t", 2, WaitReason.CAPACITY, "needs 8 GPUs on one node", null,
                        DeferralCause.FRAGMENTED),
                new QueueFact.JobWaiting("j", "t", 2, WaitReason.DEPENDENCY, "waits for a to succeed")}) {
            assertThat(WireMapping.fromEnvelope(WireMapping.toEnvelope(w, "e1", Instant.EPOCH, null))).isEqualTo(w);
        }
    }

    @Test
    void onlyInfrastructureFailuresWaitForRecovery() {
        assertThat(Arrays.stream(ReleaseCause.values()).filter(ReleaseCause::recoveryDecides))
                .containsExactlyInAnyOrder(ReleaseCause.NODE_FAILED, ReleaseCause.DEVICE_FAULT);
    }
}
