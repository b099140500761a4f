package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A run the queue stopped for idling (release reason IDLE) is billed like any release: it is not a fault. */
class IdleReleaseCreditTest {

    @Test
    void anIdleReleaseIsNeverCreditedWhateverThePreemptionPolicy() {
        for (boolean creditPreemptions : new boolean[] {false, true}) {
            CreditPolicy policy = CreditPolicy.of(creditPreemptions);
            assertThat(policy.credits("IDLE")).as("preemptions credited: " + creditPreemptions).isFalse();
            assertThat(policy.credits(CreditPolicy.NODE_FAILED)).isTrue();
        }
    }
}
