package io.gantry.billing.kafka;

import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

class BillingHandlerTest {

    @Test
    void theSameEntryAlwaysGetsTheSameEventIdAndDifferentEntriesDifferentOnes() {
        assertThat(BillingHandler.eventId("alloc-1/n1")).isEqualTo(BillingHandler.eventId("alloc-1/n1"));
        assertThat(BillingHandler.eventId("alloc-1/n1")).isNotEqualTo(BillingHandler.eventId("alloc-1/n2"));
    }

    @Test
    void aLostDatabaseIsRetriedButABadRowIsNot() {
        RuntimeException poolTimeout = new RuntimeException("wrapped",
                new SQLTransientConnectionException("pool - Connection is not available"));
        RuntimeException connectionRefused = new RuntimeException(new SQLException("refused", "08001"));
        RuntimeException shutdown = new RuntimeException(new SQLException("terminating connection", "57P01"));
        RuntimeException checkViolation = new RuntimeException(new SQLException("violates check", "23514"));

        assertThat(BillingHandler.isTransient(poolTimeout)).isTrue();
        assertThat(BillingHandler.isTransient(connectionRefused)).isTrue();
        assertThat(BillingHandler.isTransient(shutdown)).isTrue();
        assertThat(BillingHandler.isTransient(checkViolation)).isFalse();
        assertThat(BillingHandler.isTransient(new IllegalStateException("no cause"))).isFalse();
    }
}
