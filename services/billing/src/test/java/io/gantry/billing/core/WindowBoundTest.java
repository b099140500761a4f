package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WindowBoundTest {
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    @Test
    void aDateIsItsMidnightInBillingsZoneNotUtc() {
        assertThat(WindowBound.parse("from", "2026-11-01", BERLIN)).isEqualTo(Instant.parse("2026-10-31T23:00:00Z"));
        assertThat(WindowBound.parse("to", "2026-07-01", BERLIN)).isEqualTo(Instant.parse("2026-06-30T22:00:00Z"));
        assertThat(WindowBound.parse("from", "2026-11-01", ZoneId.of("UTC")))
                .isEqualTo(Instant.parse("2026-11-01T00:00:00Z"));
    }

    @Test
    void anInstantIsTakenAsWritten() {
        assertThat(WindowBound.parse("from", " 2026-11-01T12:00:00Z ", BERLIN))
                .isEqualTo(Instant.parse("2026-11-01T12:00:00Z"));
    }

    @Test
    void absentIsNull() {
        assertThat(WindowBound.parse("from", null, BERLIN)).isNull();
        assertThat(WindowBound.parse("from", " ", BERLIN)).isNull();
    }

    @Test
    void anythingElseNamesTheField() {
        assertThatThrownBy(() -> WindowBound.parse("to", "yesterday", BERLIN))
                .isInstanceOfSatisfying(InvalidInput.class, e -> {
                    assertThat(e.fields()).hasSize(1);
                    assertThat(e.fields().get(0).field()).isEqualTo("to");
                    assertThat(e.fields().get(0).message()).contains("Europe/Berlin");
                });
    }
}
