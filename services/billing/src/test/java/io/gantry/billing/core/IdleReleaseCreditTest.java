package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run the queue stopped for idling (release reason IDLE), or because its owner suspended the job (SUSPENDED), is
 * billed like any release: neither is a fault, nor a preemption.
 */
class IdleReleaseCreditTest {

    @Test
    void anIdleReleaseIsNeverCreditedWhateverThePreemptionPolicy() {
        for (boolean creditPreemptions : new boolean[] {false, true}) {
            CreditPolicy policy = CreditPolicy.of(creditPreemptions);
            assertThat(policy.credits("IDLE")).as("preemptions credited: " + creditPreemptions).isFalse();
            assertThat(policy.credits("SUSPENDED")).as("the tenant's own suspension is not a preemption").isFalse();
            assertThat(policy.credits(CreditPolicy.NODE_FAILED)).isTrue();
        }
    }
}
