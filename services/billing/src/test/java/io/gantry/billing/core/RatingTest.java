package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static io.gantry.billing.core.Fixtures.aRelease;
import static io.gantry.billing.core.Fixtures.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class RatingTest {

    /** A share entry in short: entryId, gpuCount, gpuMilli, gpuMicros, gpuMillis, exact GPU-seconds. */
    record RatedShare(String entryId, int gpuCount, long gpuMilli, long gpuMicros, long gpuMillis, String seconds) {
        static RatedShare of(LedgerEntry e) {
            return new RatedShare(e.entryId(), e.gpuCount(), e.gpuMilli(), e.gpuMicros(), e.gpuMillis(),
                    Usage.secondsOfMicros(e.gpuMicros()).toPlainString());
        }
    }

    static Stream<Arguments> shares() {
        return Stream.of(
                arguments(named("half a GPU for a minute is 30 GPU-seconds",
                                aRelease("s1").heldMillis(0, 60_000).share("n1", "H100", 500).build()),
                        new RatedShare("s1/n1", 0, 500, 30_000_000, 30_000, "30.000")),
                arguments(named("a third of a GPU for 1 ms is billed exactly, not rounded",
                                aRelease("s2").heldMillis(0, 1).share("n1", "H100", 333).build()),
                        new RatedShare("s2/n1", 0, 333, 333, 0, "0.000333")),
                arguments(named("a 1g MIG instance is rated at its 142 thousandths",
                                aRelease("s3").heldMillis(0, 10_000).share("n1", "A100", 142).build()),
                        new RatedShare("s3/n1", 0, 142, 1_420_000, 1_420, "1.420")),
                arguments(named("whole GPUs and shares on one node add up in thousandths",
                                aRelease("s4").heldMillis(0, 1_001).task("n1", "H100", 2).share("n1", "H100", 250)
                                        .share("n1", "H100", 250).build()),
                        new RatedShare("s4/n1", 2, 2_500, 2_502_500, 2_502, "2.5025")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shares")
    void aShareIsRatedAsItsThousandthsOfAGpuExactly(Release release, RatedShare expected) {
        assertThat(Rating.rate(release).stream().map(RatedShare::of).toList()).containsExactly(expected);
    }

    @Test
    void usageOfSharesInAWindowSumsExactlyAndRoundsOnlyTheLegacyMillis() {
        List<LedgerEntry> entries = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            entries.addAll(Rating.rate(aRelease("t" + i).heldMillis(0, 1).share("n1", "H100", 333).build()));
        }

        UsageReport report = Usage.summarize(entries, UsageWindow.all());

        assertThat(report.totalGpuMicros()).isEqualTo(999);
        assertThat(report.totalGpuSeconds().toPlainString()).isEqualTo("0.000999");
        assertThat(report.rows()).singleElement().satisfies(r -> assertThat(r.gpuMicros()).isEqualTo(999));
    }

    /** An entry in short: entryId, gpuModel, gpuCount, durationMillis, gpuMillis. */
    record Rated(String entryId, String gpuModel, int gpuCount, long durationMillis, long gpuMillis) {
        static Rated of(LedgerEntry e) {
            return new Rated(e.entryId(), e.gpuModel(), e.gpuCount(), e.durationMillis(), e.gpuMillis());
        }
    }

    static Stream<Arguments> releases() {
        return Stream.of(
                arguments(named("a single task is billed its GPUs times the held interval",
                                aRelease("a1").heldMillis(0, 60_000).task("n1", "H100", 2).build()),
                        List.of(new Rated("a1/n1", "H100", 2, 60_000, 120_000))),
                arguments(named("a multi-node gang gets one entry per node, in order of appearance",
                                aRelease("a2").heldMillis(0, 1_000).task("n2", "A100", 8).task("n1", "A100", 8)
                                        .task("n2", "A100", 0).build()),
                        List.of(new Rated("a2/n2", "A100", 8, 1_000, 8_000),
                                new Rated("a2/n1", "A100", 8, 1_000, 8_000))),
                arguments(named("tasks sharing a node add up on that node's entry",
                                aRelease("a3").heldMillis(0, 10).task("n1", "V100", 1).task("n1", "V100", 3).build()),
                        List.of(new Rated("a3/n1", "V100", 4, 10, 40))),
                arguments(named("a CPU-only task has no GPU model and bills no GPU time",
                                aRelease("a4").heldMillis(0, 5_000).cpuTask("n1").build()),
                        List.of(new Rated("a4/n1", null, 0, 5_000, 0))),
                arguments(named("a CPU task next to a GPU task on the same node takes the GPU model",
                                aRelease("a5").heldMillis(0, 5_000).cpuTask("n1").task("n1", "H100", 1).build()),
                        List.of(new Rated("a5/n1", "H100", 1, 5_000, 5_000))),
                arguments(named("odd milliseconds are billed exactly",
                                aRelease("a6").heldMillis(1, 1_234_568).task("n1", "H100", 3).build()),
                        List.of(new Rated("a6/n1", "H100", 3, 1_234_567, 3_703_701))),
                arguments(named("a zero-length allocation bills nothing but is still recorded",
                                aRelease("a7").heldMillis(7, 7).task("n1", "H100", 8).build()),
                        List.of(new Rated("a7/n1", "H100", 8, 0, 0))),
                arguments(named("a year on 8 GPUs does not overflow",
                                aRelease("a8").heldMillis(0, 31_536_000_000L).task("n1", "H100", 8).build()),
                        List.of(new Rated("a8/n1", "H100", 8, 31_536_000_000L, 252_288_000_000L))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void rating(Release release, List<Rated> expected) {
        assertThat(Rating.rate(release).stream().map(Rated::of).toList()).containsExactlyElementsOf(expected);
    }

    @Test
    void entriesCarryTheRunAndTheWholeInterval() {
        LedgerEntry e = Rating.rate(aRelease("alloc-9").tenant("nlp").job("job-7", 2).heldMillis(100, 900)
                .task("n1", "H100", 1).build()).get(0);
        assertThat(e.tenant()).isEqualTo("nlp");
        assertThat(e.jobId()).isEqualTo("job-7");
        assertThat(e.attempt()).isEqualTo(2);
        assertThat(e.allocationId()).isEqualTo("alloc-9");
        assertThat(e.startedAt()).isEqualTo(at(100));
        assertThat(e.endedAt()).isEqualTo(at(900));
    }

    @Test
    void ratingTheSameReleaseTwiceGivesTheSameEntries() {
        Release r = aRelease("a1").task("n1", "H100", 2).task("n2", "H100", 2).build();
        assertThat(Rating.rate(r)).isEqualTo(Rating.rate(r));
    }

    @Test
    void aReleaseEndingBeforeItStartedIsRejected() {
        assertThatThrownBy(() -> aRelease("a1").heldMillis(10, 5).task("n1", "H100", 1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("releasedAt");
    }

    @Test
    void twoGpuModelsOnOneNodeAreRejectedRatherThanMisbilled() {
        Release r = aRelease("a1").task("n1", "H100", 1).task("n1", "A100", 1).build();
        assertThatThrownBy(() -> Rating.rate(r)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("two GPU models");
    }

    @Test
    void gpusWithoutAModelAreRejected() {
        assertThatThrownBy(() -> aRelease("a1").task("n1", null, 2).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpuModel");
    }
}
