package io.gantry.launcher.load;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BrokerSamplerTest {

    @Test
    void aStreamsClientIdLosesItsPerRunUuidSoRunsCompare() {
        assertThat(BrokerSampler.clientName(
                "gantry-billing-month-to-date-c6ba1901-b353-4d5f-928d-64cbfe128750-StreamThread-1-producer"))
                .isEqualTo("gantry-billing-month-to-date-StreamThread-1-producer");
        assertThat(BrokerSampler.clientName("gantry-queue-producer")).isEqualTo("gantry-queue-producer");
        assertThat(BrokerSampler.clientName(null)).isEqualTo("(none)");
    }
}
