package io.gantry.queue.kafka;

import io.gantry.queue.core.DeferralCause;
import io.gantry.queue.core.ReleaseCause;
import org.junit.jupiter.api.Test;

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
    void onlyInfrastructureFailuresWaitForRecovery() {
        assertThat(Arrays.stream(ReleaseCause.values()).filter(ReleaseCause::recoveryDecides))
                .containsExactlyInAnyOrder(ReleaseCause.NODE_FAILED, ReleaseCause.DEVICE_FAULT);
    }
}
