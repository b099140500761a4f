package io.gantry.billing.kafka;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BillingHandlerTest {

    @Test
    void theSameEntryAlwaysGetsTheSameEventIdAndDifferentEntriesDifferentOnes() {
        assertThat(BillingHandler.eventId("alloc-1/n1")).isEqualTo(BillingHandler.eventId("alloc-1/n1"));
        assertThat(BillingHandler.eventId("alloc-1/n1")).isNotEqualTo(BillingHandler.eventId("alloc-1/n2"));
    }
}
