package io.gantry.admission.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SubmitRateTest {
    private static final long S = 1_000_000_000L;

    @Test
    void aBurstIsLetInThenTheRateAndEachTenantHasItsOwnBucket() {
        SubmitRate rate = new SubmitRate(2, 3);
        for (int i = 0; i < 3; i++) {
            assertThat(rate.take("vision", 0).allowed()).isTrue();
        }
        SubmitRate.Decision refused = rate.take("vision", 0);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfterSeconds()).isEqualTo(1);
        assertThat(refused.refusal()).isEqualTo("tenant vision submits faster than 2 jobs a second (bursts of 3); "
                + "retry in 1 s");
        assertThat(rate.take("audio", 0).allowed()).as("another tenant").isTrue();
        // half a second earns one back at 2 a second
        assertThat(rate.take("vision", S / 2).allowed()).isTrue();
        assertThat(rate.take("vision", S / 2).allowed()).isFalse();
        // a long pause refills the bucket to its size, no further
        for (int i = 0; i < 3; i++) {
            assertThat(rate.take("vision", 100 * S).allowed()).isTrue();
        }
        assertThat(rate.take("vision", 100 * S).allowed()).isFalse();
    }

    @Test
    void aSlowRateTellsHowLongToWait() {
        SubmitRate rate = new SubmitRate(0.1, 1);
        assertThat(rate.take("vision", 0).allowed()).isTrue();
        assertThat(rate.take("vision", 0).retryAfterSeconds()).isEqualTo(10);
        assertThat(rate.take("vision", 4 * S).retryAfterSeconds()).isEqualTo(6);
        assertThat(rate.take("vision", 4 * S).refusal()).contains("faster than 0.1 jobs a second");
    }

    @Test
    void zeroIsNoLimitAndBadSettingsAreRefused() {
        SubmitRate off = new SubmitRate(0, 0);
        for (int i = 0; i < 10_000; i++) {
            assertThat(off.take("vision", 0).allowed()).isTrue();
        }
        assertThatThrownBy(() -> new SubmitRate(-1, 5)).hasMessageContaining("gantry.admission.submit-rate");
        assertThatThrownBy(() -> new SubmitRate(5, 0)).hasMessageContaining("gantry.admission.submit-burst");
    }
}
