package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.stream.Stream;

import static io.gantry.billing.core.Fixtures.anEntry;
import static io.gantry.billing.core.Fixtures.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class UsageTest {

    private static UsageWindow window(Long from, Long to) {
        return new UsageWindow(from == null ? null : at(from), to == null ? null : at(to));
    }

    /** One entry of 2 GPUs held over [1000, 5000) ms. */
    private static final LedgerEntry ENTRY = anEntry("a/n1").gpus("H100", 2).heldMillis(1_000, 5_000).build();

    static Stream<Arguments> windows() {
        return Stream.of(
                arguments(named("a window covering the whole entry counts all of it", window(0L, 10_000L)), 8_000L),
                arguments(named("a window inside the entry counts only the overlap", window(2_000L, 3_000L)), 2_000L),
                arguments(named("a window cutting the start counts the tail", window(4_000L, 9_000L)), 2_000L),
                arguments(named("a window cutting the end counts the head", window(0L, 1_500L)), 1_000L),
                arguments(named("a window ending where the entry starts counts nothing", window(0L, 1_000L)), 0L),
                arguments(named("a window starting where the entry ends counts nothing", window(5_000L, 6_000L)), 0L),
                arguments(named("an unbounded window counts the whole entry", window(null, null)), 8_000L),
                arguments(named("a window open at the start counts up to its end", window(null, 2_001L)), 2_002L),
                arguments(named("a window open at the end counts from its start", window(4_999L, null)), 2L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("windows")
    void overlap(UsageWindow window, long expectedGpuMillis) {
        assertThat(Usage.gpuMillisIn(ENTRY, window)).isEqualTo(expectedGpuMillis);
    }

    @Test
    void usageIsGroupedByTenantAndGpuModelWithExactSeconds() {
        List<LedgerEntry> entries = List.of(
                anEntry("a/n1").tenant("vision").gpus("H100", 2).heldMillis(0, 1_001).build(),
                anEntry("b/n1").tenant("vision").gpus("H100", 1).heldMillis(0, 1).build(),
                anEntry("c/n1").tenant("vision").gpus("A100", 4).heldMillis(500, 1_500).build(),
                anEntry("d/n1").tenant("nlp").gpus(null, 0).heldMillis(0, 1_000).build(),
                anEntry("e/n1").tenant("nlp").gpus("H100", 1).heldMillis(5_000, 6_000).build());
        UsageReport report = Usage.summarize(entries, window(0L, 1_000L));
        assertThat(report.rows()).containsExactly(
                new UsageRow("nlp", null, 0, 1),
                new UsageRow("vision", "A100", 2_000, 1),
                new UsageRow("vision", "H100", 2_001, 2));
        assertThat(report.rows().get(2).gpuSeconds()).isEqualByComparingTo("2.001");
        assertThat(report.rows().get(2).gpuSeconds().toPlainString()).isEqualTo("2.001");
        assertThat(report.totalGpuMillis()).isEqualTo(4_001);
        assertThat(report.totalGpuSeconds()).isEqualTo(new BigDecimal("4.001"));
    }

    @Test
    void aZeroLengthEntryCountsOnlyInTheWindowHoldingItsInstant() {
        LedgerEntry zero = anEntry("z/n1").heldMillis(1_000, 1_000).build();
        assertThat(Usage.summarize(List.of(zero), window(1_000L, 2_000L)).rows())
                .containsExactly(new UsageRow("vision", "H100", 0, 1));
        assertThat(Usage.summarize(List.of(zero), window(0L, 1_000L)).rows()).isEmpty();
    }

    @Test
    void anEmptyLedgerHasNoRowsAndZeroTotal() {
        UsageReport report = Usage.summarize(List.of(), UsageWindow.all());
        assertThat(report.rows()).isEmpty();
        assertThat(report.totalGpuSeconds().toPlainString()).isEqualTo("0.000");
    }

    @Test
    void aWindowMustEndAfterItStartsAndHaveMillisecondBounds() {
        assertThatThrownBy(() -> window(5L, 5L)).hasMessage("to: must be after from");
        assertThatThrownBy(() -> new UsageWindow(at(0).plusNanos(1), null))
                .hasMessage("from: must have at most millisecond precision");
    }

    @Test
    void aWindowStaysWithinTheYears1To9999SoEveryBoundHasAnEpochMillisecond() {
        assertThatThrownBy(() -> new UsageWindow(java.time.Instant.parse("-1000000000-01-01T00:00:00Z"), null))
                .hasMessage("from: must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z");
        assertThatThrownBy(() -> new UsageWindow(null, java.time.Instant.parse("+294277-01-01T00:00:00Z")))
                .hasMessage("to: must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z");
        assertThat(new UsageWindow(java.time.Instant.parse("0001-01-01T00:00:00Z"),
                java.time.Instant.parse("9999-12-31T23:59:59.999Z")).overlapMillis(0, 1000)).isEqualTo(1000);
    }
}
