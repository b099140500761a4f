package io.gantry.runtime.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RunTokensTest {

    @Test
    void aRunTokenClaimsItsJobAndAttemptAndIsProvedOnlyByItsHash() {
        String token = RunTokens.newToken("job-42", 3);

        assertThat(token).startsWith("gtr_3.").hasSize("gtr_3.".length() + 12 + 1 + 64);
        assertThat(RunTokens.isRunToken(token)).isTrue();
        assertThat(RunTokens.claim(token)).hasValueSatisfying(c -> {
            assertThat(c.attempt()).isEqualTo(3);
            assertThat(c.isOf("job-42")).isTrue();
            assertThat(c.isOf("job-43")).isFalse();
        });
        assertThat(RunTokens.matches(token, RunTokens.sha256(token))).isTrue();
        assertThat(RunTokens.newToken("job-42", 3)).as("random beyond the claim").isNotEqualTo(token);
    }

    @Test
    void textNotInTheFormatClaimsNothing() {
        assertThat(RunTokens.claim("gtr_" + "ab".repeat(32))).isEmpty();
        assertThat(RunTokens.claim("gtr_0.0123456789ab.ff")).as("attempts start at 1").isEmpty();
        assertThat(RunTokens.claim("gtr_1.short.ff")).isEmpty();
        assertThat(RunTokens.claim("gty_1.0123456789ab.ff")).as("a tenant's token").isEmpty();
        assertThat(RunTokens.claim(null)).isEmpty();
    }
}
