package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class MonthToDateTest {
    private static final ZoneId UTC = ZoneOffset.UTC;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    static Stream<Arguments> announcements() {
        return Stream.of(
                arguments(named("two whole GPUs for a minute held 2000 thousandths", new long[]{2, 120_000, 60_000}),
                        2_000L),
                arguments(named("half a GPU for a minute held 500 thousandths", new long[]{0, 30_000, 60_000}), 500L),
                arguments(named("a 1g MIG slice for 7 s is recovered as 142 despite the rounded-down gpuMillis",
                        new long[]{0, 994, 7_000}), 142L),
                arguments(named("a whole GPU plus a third for 1001 ms is recovered exactly",
                        new long[]{1, 1_334, 1_001}), 1_333L),
                arguments(named("a CPU-only entry held nothing", new long[]{0, 0, 90_000}), 0L),
                arguments(named("a zero-length entry held its whole GPUs", new long[]{4, 0, 0}), 4_000L),
                arguments(named("a fraction held for 1 ms takes the smallest holding that fits", new long[]{0, 0, 1}),
                        0L));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("announcements")
    void heldThousandthsAreRecoveredFromAnAnnouncement(long[] gpusGpuMillisDuration, long expectedMilli) {
        assertThat(MonthToDate.heldMilli((int) gpusGpuMillisDuration[0], gpusGpuMillisDuration[1],
                gpusGpuMillisDuration[2])).isEqualTo(expectedMilli);
    }

    static Stream<Arguments> impossibleAnnouncements() {
        return Stream.of(
                arguments(named("less GPU time than its whole GPUs", new long[]{2, 119_999, 60_000})),
                arguments(named("GPU time for a zero-length entry", new long[]{0, 5, 0})),
                arguments(named("a negative duration", new long[]{1, 0, -1})));
    }

    @ParameterizedTest(name = "an announcement with {0} is refused naming gpuMillis")
    @MethodSource("impossibleAnnouncements")
    void anImpossibleAnnouncementIsRefusedNamingGpuMillis(long[] a) {
        assertThatThrownBy(() -> MonthToDate.heldMilli((int) a[0], a[1], a[2]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("gpuMillis:");
    }

    private static LedgerEntry entry(String from, String to, int gpus) {
        Instant start = Instant.parse(from);
        Instant end = Instant.parse(to);
        long d = end.toEpochMilli() - start.toEpochMilli();
        return MonthToDate.announced("a/n1", "vision", "job", 1, "a", "n1", "H100", gpus, start, end, d, gpus * d);
    }

    private static MonthToDate.Part part(String month, ZoneId zone, long gpuMicros) {
        return new MonthToDate.Part(new BillingMonth(YearMonth.parse(month), zone), gpuMicros);
    }

    static Stream<Arguments> splits() {
        long hour = 3_600_000L * 1000;
        return Stream.of(
                arguments(named("an entry inside a month stays whole",
                        entry("2026-03-10T10:00:00Z", "2026-03-10T12:00:00Z", 1)), UTC,
                        List.of(part("2026-03", UTC, 2 * hour))),
                arguments(named("an entry across midnight of the 1st is cut there in UTC",
                        entry("2026-03-31T23:00:00Z", "2026-04-01T02:00:00Z", 2)), UTC,
                        List.of(part("2026-03", UTC, 2 * hour), part("2026-04", UTC, 2 * 2 * hour))),
                arguments(named("the same entry lies wholly in April in Berlin (summer time, UTC+2)",
                        entry("2026-03-31T23:00:00Z", "2026-04-01T02:00:00Z", 2)), BERLIN,
                        List.of(part("2026-04", BERLIN, 2 * 3 * hour))),
                arguments(named("an entry across Berlin's month boundary is cut at 22:00 UTC",
                        entry("2026-03-31T21:00:00Z", "2026-03-31T23:00:00Z", 1)), BERLIN,
                        List.of(part("2026-03", BERLIN, hour), part("2026-04", BERLIN, hour))),
                arguments(named("an entry over three months has a part in each",
                        entry("2026-01-31T12:00:00Z", "2026-03-01T12:00:00Z", 1)), UTC,
                        List.of(part("2026-01", UTC, 12 * hour), part("2026-02", UTC, 28 * 24 * hour),
                                part("2026-03", UTC, 12 * hour))),
                arguments(named("an entry ending exactly at a month's end has no part in the next month",
                        entry("2026-03-31T23:00:00Z", "2026-04-01T00:00:00Z", 1)), UTC,
                        List.of(part("2026-03", UTC, hour))),
                arguments(named("a zero-length entry at the 1st belongs to the month it starts",
                        entry("2026-04-01T00:00:00Z", "2026-04-01T00:00:00Z", 1)), UTC,
                        List.of(part("2026-04", UTC, 0))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("splits")
    void anEntryIsCutIntoTheMonthsItTouchesAsInvoicesCutIt(LedgerEntry entry, ZoneId zone,
                                                          List<MonthToDate.Part> expected) {
        List<MonthToDate.Part> parts = MonthToDate.split(entry, zone);
        assertThat(parts).containsExactlyElementsOf(expected);
        for (MonthToDate.Part p : parts) {
            assertThat(p.gpuMicros()).isEqualTo(Usage.gpuMicrosIn(entry, p.month().window()));
        }
    }

    @Test
    void totalsCountAnEntryOncePerMonthAndRoundGpuMillisDownOnce() {
        MonthToDate.Totals t = MonthToDate.Totals.NONE.plus(part("2026-03", UTC, 1_500))
                .plus(part("2026-03", UTC, 1_500));
        assertThat(t).isEqualTo(new MonthToDate.Totals(3_000, 2));
        assertThat(new MonthToDate.Totals(2_999, 1).gpuMillis()).isEqualTo(2);
    }

    @Test
    void duplicatesAreRecognisedInTheMonthAnEntryEnds() {
        assertThat(MonthToDate.dedupMonth(entry("2026-03-31T23:00:00Z", "2026-04-01T02:00:00Z", 1), UTC))
                .isEqualTo(YearMonth.of(2026, 4));
        assertThat(MonthToDate.firstOpenMonth(YearMonth.of(2026, 4), 2)).isEqualTo(YearMonth.of(2026, 2));
        assertThat(MonthToDate.firstOpenMonth(YearMonth.of(2026, 1), 0)).isEqualTo(YearMonth.of(2026, 1));
    }

    static Stream<Arguments> currentMonths() {
        Instant now = Instant.parse("2026-03-15T12:00:00Z");
        return Stream.of(
                arguments(named("nothing seen yet: the clock's month", now), null, "2026-03"),
                arguments(named("usage of an earlier month: the clock's month (a new month starts at zero)", now),
                        YearMonth.of(2026, 2), "2026-03"),
                arguments(named("usage ahead of the clock (a fast simulated cluster): the newest month", now),
                        YearMonth.of(2026, 7), "2026-07"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("currentMonths")
    void monthToDateMeansTheLaterOfTheClocksMonthAndTheNewestMonthWithUsage(Instant now, YearMonth newest,
                                                                           String expected) {
        assertThat(MonthToDate.current(now, UTC, newest).month()).isEqualTo(YearMonth.parse(expected));
    }
}
