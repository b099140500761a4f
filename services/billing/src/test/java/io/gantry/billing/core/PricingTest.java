package io.gantry.billing.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class PricingTest {
    static final Instant T0 = Instant.parse("2026-03-01T00:00:00Z");
    static final long HOUR = 3_600_000L;

    /**
     * {@code EUR, H100 2.50/GPU-hour from T0, 3.00 from T0+10h; A100 1.20; premium tier of H100 4.00}; an H100
     * 1g.10gb MIG instance 0.40/instance-hour from T0+5h (entries without MIG instances never meet it).
     */
    static PriceBook book() {
        return new PriceBook(1, "EUR", List.of(
                new PriceBook.GpuPrice("H100", null, new BigDecimal("2.50"), T0),
                new PriceBook.GpuPrice("H100", null, new BigDecimal("3.00"), T0.plusMillis(10 * HOUR)),
                new PriceBook.GpuPrice("A100", null, new BigDecimal("1.20"), T0),
                new PriceBook.GpuPrice("H100", "premium", new BigDecimal("4.00"), T0)),
                List.of(new PriceBook.ResourcePrice(new BigDecimal("0.04"), T0)),
                List.of(new PriceBook.ResourcePrice(new BigDecimal("0.01"), T0)),
                List.of(new PriceBook.Multiplier(null, "preemptible", new BigDecimal("0.6"), T0),
                        new PriceBook.Multiplier("research", null, new BigDecimal("0.5"), T0)),
                List.of(new PriceBook.MigPrice("H100", "1g.10gb", new BigDecimal("0.40"), T0.plusMillis(5 * HOUR))));
    }

    static LedgerEntry entry(String id, String job, String model, long gpuMilli, long fromMillis, long toMillis,
                             long cpuMillis, long memMiB, String reason) {
        long d = toMillis - fromMillis;
        return new LedgerEntry(id, "vision", job, 1, id, "n1", model, (int) (gpuMilli / 1000), T0.plusMillis(fromMillis),
                T0.plusMillis(toMillis), d, gpuMilli * d / 1000, gpuMilli, gpuMilli * d, cpuMillis, memMiB, reason);
    }

    /** The same with MIG instances among the shares. */
    static LedgerEntry entry(String id, String job, String model, long gpuMilli, long fromMillis, long toMillis,
                             long cpuMillis, long memMiB, String reason, java.util.SortedMap<String, Integer> mig) {
        LedgerEntry e = entry(id, job, model, gpuMilli, fromMillis, toMillis, cpuMillis, memMiB, reason);
        return new LedgerEntry(e.entryId(), e.tenant(), e.jobId(), e.attempt(), e.allocationId(), e.nodeId(),
                e.gpuModel(), e.gpuCount(), e.startedAt(), e.endedAt(), e.durationMillis(), e.gpuMillis(),
                e.gpuMilli(), e.gpuMicros(), e.cpuMillis(), e.memoryMiB(), e.releaseReason(), mig);
    }

    static LedgerEntry gpus(String model, long gpuMilli, long fromMillis, long toMillis) {
        return entry("a/n1", "job-1", model, gpuMilli, fromMillis, toMillis, 0, 0, "RUN_SUCCEEDED");
    }

    static List<RatedLine> rate(List<LedgerEntry> entries, Map<String, JobTerms> terms) {
        return Pricing.rate(entries, UsageWindow.all(), book(), terms, Checkpoints.none(), CreditPolicy.of(false));
    }

    static Stream<Arguments> gpuRatings() {
        return Stream.of(
                Arguments.of("one H100 for an hour costs its hourly price", gpus("H100", 1000, 0, HOUR), "2.50"),
                Arguments.of("eight H100s for an hour cost eight times it", gpus("H100", 8000, 0, HOUR), "20.00"),
                Arguments.of("half an H100 for an hour costs half", gpus("H100", 500, 0, HOUR), "1.25"),
                Arguments.of("a 1g MIG instance (142 thousandths) for an hour", gpus("H100", 142, 0, HOUR), "0.36"),
                Arguments.of("an A100 for 90 minutes", gpus("A100", 1000, 0, 90 * 60_000), "1.80"),
                Arguments.of("one millisecond rounds to zero cents", gpus("H100", 1000, 0, 1), "0.00"),
                Arguments.of("an hour after the price change costs the new price",
                        gpus("H100", 1000, 10 * HOUR, 11 * HOUR), "3.00"),
                Arguments.of("a model without a price is shown at zero", gpus("V100", 1000, 0, HOUR), "0.00"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("gpuRatings")
    void gpuTimeIsRatedAtThePriceInForce(String name, LedgerEntry e, String amount) {
        List<RatedLine> lines = rate(List.of(e), Map.of());
        assertThat(Invoicing.freshTotal(lines, 2)).isEqualByComparingTo(amount);
    }

    @Test
    void anIntervalSpanningAPriceChangeIsSplitIntoTwoLinesAtTheTwoPrices() {
        List<RatedLine> lines = rate(List.of(gpus("H100", 2000, 9 * HOUR, 11 * HOUR)), Map.of());

        assertThat(lines).extracting(RatedLine::unitPrice, RatedLine::quantity).containsExactly(
                org.assertj.core.groups.Tuple.tuple(new BigDecimal("2.5"), 2000 * HOUR),
                org.assertj.core.groups.Tuple.tuple(new BigDecimal("3"), 2000 * HOUR));
        assertThat(lines).extracting(l -> l.amount(2)).containsExactly(new BigDecimal("5.00"), new BigDecimal("6.00"));
    }

    @Test
    void aTierPriceAppliesToJobsThatAskedForTheTierAndOthersPayTheModelPrice() {
        LedgerEntry e = gpus("H100", 1000, 0, HOUR);
        assertThat(Invoicing.freshTotal(rate(List.of(e), Map.of("job-1",
                new JobTerms("job-1", null, null, "premium"))), 2)).isEqualByComparingTo("4.00");
        assertThat(Invoicing.freshTotal(rate(List.of(e), Map.of("job-1",
                new JobTerms("job-1", null, null, "economy"))), 2)).isEqualByComparingTo("2.50");
    }

    @Test
    void queueAndPriorityClassMultipliersMultiply() {
        LedgerEntry e = gpus("H100", 1000, 0, HOUR);
        List<RatedLine> lines = rate(List.of(e), Map.of("job-1",
                new JobTerms("job-1", "research", "preemptible", null)));
        assertThat(lines).singleElement().satisfies(l -> {
            assertThat(l.unitPrice()).isEqualByComparingTo("0.75");
            assertThat(l.amount(2)).isEqualByComparingTo("0.75");
        });
    }

    @Test
    void cpuAndMemoryArePricedPerCoreHourAndGiBHourWhenTheBookHasRates() {
        LedgerEntry e = entry("a/n1", "job-1", null, 0, 0, HOUR, 4000, 8192, "RUN_SUCCEEDED");
        List<RatedLine> lines = rate(List.of(e), Map.of());
        assertThat(lines).extracting(RatedLine::component, l -> l.amount(2)).containsExactly(
                org.assertj.core.groups.Tuple.tuple(Component.CPU, new BigDecimal("0.16")),
                org.assertj.core.groups.Tuple.tuple(Component.MEMORY, new BigDecimal("0.08")));
    }

    @Test
    void onlyThePartInsideTheWindowIsRated() {
        LedgerEntry e = gpus("H100", 1000, 0, 4 * HOUR);
        List<RatedLine> lines = Pricing.rate(List.of(e), new UsageWindow(T0.plusMillis(HOUR), T0.plusMillis(2 * HOUR)),
                book(), Map.of(), Checkpoints.none(), CreditPolicy.of(false));
        assertThat(Invoicing.freshTotal(lines, 2)).isEqualByComparingTo("2.50");
    }

    static Stream<Arguments> credits() {
        return Stream.of(
                Arguments.of("a node failure credits the time since the last checkpoint", "NODE_FAILED", false,
                        List.of(HOUR, 3 * HOUR), "-2.50"),
                Arguments.of("a node failure without checkpoints credits the whole run", "NODE_FAILED", false,
                        List.of(), "-10.00"),
                Arguments.of("a checkpoint reported after the release says nothing", "NODE_FAILED", false,
                        List.of(5 * HOUR), "-10.00"),
                Arguments.of("a GPU fault under the run is credited like a node failure", "DEVICE_FAULT", false,
                        List.of(2 * HOUR), "-5.00"),
                Arguments.of("a preemption is not credited by default", "PREEMPTED", false, List.of(), "0.00"),
                Arguments.of("a preemption is credited when the policy says so", "PREEMPTED", true, List.of(2 * HOUR),
                        "-5.00"),
                Arguments.of("a successful run is never credited", "RUN_SUCCEEDED", true, List.of(), "0.00"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("credits")
    void gpuTimeLostToAFaultIsCreditedAsANegativeLine(String name, String reason, boolean preemptions,
                                                      List<Long> checkpointsAt, String credit) {
        LedgerEntry e = entry("a/n1", "job-1", "H100", 1000, 0, 4 * HOUR, 1000, 0, reason);
        Checkpoints cps = Checkpoints.none();
        checkpointsAt.forEach(t -> cps.add("job-1", 1, T0.plusMillis(t)));
        cps.add("job-1", 2, T0.plusMillis(3 * HOUR + HOUR / 2)); // another run's checkpoint does not count
        List<RatedLine> lines = Pricing.rate(List.of(e), UsageWindow.all(), book(), Map.of(), cps,
                CreditPolicy.of(preemptions));

        BigDecimal credits = lines.stream().filter(l -> l.kind() == LineKind.CREDIT).map(l -> l.amount(2))
                .reduce(new BigDecimal("0.00"), BigDecimal::add);
        assertThat(credits).isEqualByComparingTo(credit);
        assertThat(lines.stream().filter(l -> l.kind() == LineKind.CREDIT)).allSatisfy(l -> {
            assertThat(l.component()).isEqualTo(Component.GPU);
            assertThat(l.reason()).isEqualTo(reason);
        });
    }

    @Test
    void roundingHappensOncePerLineHalfEven() {
        // 0.5 cent exactly: 1 GPU at 0.018 per hour for 1000 seconds = 0.005 -> half-even to 0.00; 3000 s -> 0.015 -> 0.02
        PriceBook cheap = new PriceBook(1, "EUR", List.of(new PriceBook.GpuPrice("H100", null,
                new BigDecimal("0.018"), T0)), List.of(), List.of(), List.of());
        RatedLine a = Pricing.rate(List.of(gpus("H100", 1000, 0, 1_000_000)), UsageWindow.all(), cheap, Map.of(),
                Checkpoints.none(), CreditPolicy.of(false)).get(0);
        RatedLine b = Pricing.rate(List.of(gpus("H100", 1000, 0, 3_000_000)), UsageWindow.all(), cheap, Map.of(),
                Checkpoints.none(), CreditPolicy.of(false)).get(0);
        assertThat(a.amount(2)).isEqualByComparingTo("0.00");
        assertThat(b.amount(2)).isEqualByComparingTo("0.02");
    }

    @Test
    void twoEntriesOfOneJobAtOnePriceAreOneLine() {
        List<RatedLine> lines = rate(List.of(
                entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, null),
                entry("a/n2", "job-1", "H100", 3000, 0, HOUR, 0, 0, null)), Map.of());
        assertThat(lines).singleElement().satisfies(l -> assertThat(l.quantity()).isEqualTo(4000 * HOUR));
    }
}
