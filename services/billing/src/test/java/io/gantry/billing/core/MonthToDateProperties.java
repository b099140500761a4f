package io.gantry.billing.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

import java.time.Instant;
import java.time.ZoneId;

import static org.assertj.core.api.Assertions.assertThat;

class MonthToDateProperties {

    @Property
    void theHeldThousandthsOfAnEntryOfASecondOrMoreAreRecoveredExactly(
            @ForAll @IntRange(min = 0, max = 16) int gpus, @ForAll @IntRange(min = 0, max = 7_000) int shares,
            @ForAll @LongRange(min = 1_000, max = 400L * 24 * 3_600_000) long durationMillis) {
        long held = 1000L * gpus + shares;
        long gpuMillis = held * durationMillis / 1000;
        assertThat(MonthToDate.heldMilli(gpus, gpuMillis, durationMillis)).isEqualTo(held);
    }

    @Property
    void aShortFractionalEntryIsRecoveredToWithinOneGpuMillisecond(
            @ForAll @IntRange(min = 0, max = 16) int gpus, @ForAll @IntRange(min = 0, max = 7_000) int shares,
            @ForAll @LongRange(min = 0, max = 999) long durationMillis) {
        long held = 1000L * gpus + shares;
        long gpuMillis = held * durationMillis / 1000;
        long recovered = MonthToDate.heldMilli(gpus, gpuMillis, durationMillis);
        assertThat(recovered * durationMillis / 1000).isEqualTo(gpuMillis);
        assertThat(Math.abs(recovered * durationMillis - held * durationMillis)).isLessThan(1000);
    }

    @Property
    void theMonthPartsOfAnEntryAddUpToTheEntry(
            @ForAll @LongRange(min = 1_700_000_000_000L, max = 1_900_000_000_000L) long start,
            @ForAll @LongRange(min = 0, max = 200L * 24 * 3_600_000) long length,
            @ForAll @IntRange(min = 0, max = 8) int gpus, @ForAll @IntRange(min = 0, max = 999) int share,
            @ForAll("zones") String zone) {
        long held = 1000L * gpus + share;
        LedgerEntry entry = MonthToDate.announced("a/n1", "vision", "job", 1, "a", "n1", "H100", gpus,
                Instant.ofEpochMilli(start), Instant.ofEpochMilli(start + length), length, held * length / 1000);
        long sum = MonthToDate.split(entry, ZoneId.of(zone)).stream().mapToLong(MonthToDate.Part::gpuMicros).sum();
        assertThat(sum).isEqualTo(entry.gpuMicros());
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> zones() {
        return net.jqwik.api.Arbitraries.of("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata",
                "Pacific/Chatham");
    }
}
