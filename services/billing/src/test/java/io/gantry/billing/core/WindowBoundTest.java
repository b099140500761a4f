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
    void theFarthestDatesAreInstantsTheWindowThenJudges() {
        assertThat(WindowBound.parse("to", "+999999999-12-31", BERLIN)).isNotNull();
        assertThat(WindowBound.parse("from", "-999999999-01-01", BERLIN)).isNotNull();
    }

    @Test
    void anythingElseNamesTheField() {
        for (String bad : java.util.List.of("2026-02-30", "2026-11-1", "1e10", "2026-11-01T00:00")) {
            assertThatThrownBy(() -> WindowBound.parse("from", bad, BERLIN)).as(bad)
                    .isInstanceOf(InvalidInput.class);
        }
        assertThatThrownBy(() -> WindowBound.parse("to", "yesterday", BERLIN))
                .isInstanceOfSatisfying(InvalidInput.class, e -> {
                    assertThat(e.fields()).hasSize(1);
                    assertThat(e.fields().get(0).field()).isEqualTo("to");
                    assertThat(e.fields().get(0).message()).contains("Europe/Berlin");
                });
    }
}
