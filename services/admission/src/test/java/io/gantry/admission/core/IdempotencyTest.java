package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotencyTest {
    @Test
    void theSameTenantAndKeyAlwaysNameTheSameJobAndEventAndOtherTenantsOrKeysDoNot() {
        Idempotency.Ids a = Idempotency.ids("vision", "nightly-1");

        assertThat(Idempotency.ids("vision", "nightly-1")).isEqualTo(a);
        assertThat(Idempotency.ids("audio", "nightly-1").jobId()).isNotEqualTo(a.jobId());
        assertThat(Idempotency.ids("vision", "nightly-2").jobId()).isNotEqualTo(a.jobId());
        assertThat(a.eventId()).isNotEqualTo(a.jobId());
        // a tenant name ending where a key begins cannot collide with another split of the same characters
        assertThat(Idempotency.ids("ab", "c").jobId()).isNotEqualTo(Idempotency.ids("a", "bc").jobId());
    }

    @ParameterizedTest(name = "claimed {0}, same body {1}, job in the read model {2} -> {3}")
    @CsvSource({
            "true,  true,  false, PUBLISH",
            "false, false, true,  CONFLICT",
            "false, false, false, CONFLICT",
            "false, true,  true,  ANSWER_CURRENT_STATE",
            "false, true,  false, PUBLISH_AGAIN"})
    void aRepeatedKeyIsAnsweredByWhatTheFirstRequestLeftBehind(boolean claimedNow, boolean sameBody,
                                                               boolean jobKnown, Idempotency.Outcome expected) {
        assertThat(Idempotency.decide(claimedNow, sameBody ? "h1" : "h2", "h1", jobKnown)).isEqualTo(expected);
    }

    @Test
    void aKeyMustBeVisibleTextOfAtMost255Characters() {
        assertThat(Idempotency.keyProblem("resnet-2025-01-01")).isNull();
        assertThat(Idempotency.keyProblem(" ")).isNotNull();
        assertThat(Idempotency.keyProblem("a\u0000b")).isNotNull();
        assertThat(Idempotency.keyProblem("x".repeat(256))).isNotNull();
        assertThat(Idempotency.keyProblem("x".repeat(255))).isNull();
    }
}
