package io.gantry.billing.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

class MoneyProperties {
    static final Instant T0 = PricingTest.T0;

    @Provide
    Arbitrary<List<LedgerEntry>> ledgers() {
        Arbitrary<LedgerEntry> entry = Combinators.combine(
                Arbitraries.of("job-1", "job-2", "job-3"),
                Arbitraries.of("H100", "A100", "V100"),
                Arbitraries.of(0L, 142L, 500L, 1000L, 1642L, 8000L),
                Arbitraries.longs().between(0, 20 * PricingTest.HOUR),
                Arbitraries.longs().between(0, 6 * PricingTest.HOUR),
                Arbitraries.longs().between(0, 64_000),
                Arbitraries.of("RUN_SUCCEEDED", "NODE_FAILED", "PREEMPTED"),
                Arbitraries.integers().between(0, 1_000_000))
                // 142 and 1642 thousandths are a 1g.10gb MIG instance (H100 prices it per instance from T0+5h)
                .as((job, model, milli, start, length, cpu, reason, id) -> PricingTest.entry("a" + id + "/n1", job,
                        milli == 0 ? null : model, milli, start, start + length, cpu, cpu * 16, reason,
                        milli % 1000 == 142 ? new java.util.TreeMap<>(Map.of("1g.10gb", 1))
                                : new java.util.TreeMap<>()));
        return entry.list().ofMaxSize(20);
    }

    @Provide
    Arbitrary<List<Long>> cuts() {
        return Arbitraries.longs().between(-PricingTest.HOUR, 27 * PricingTest.HOUR).list().ofMinSize(2).ofMaxSize(10);
    }

    static Checkpoints checkpoints() {
        return Checkpoints.none().add("job-1", 1, T0.plusMillis(3 * PricingTest.HOUR))
                .add("job-2", 1, T0.plusMillis(11 * PricingTest.HOUR + 17));
    }

    static List<RatedLine> rate(List<LedgerEntry> ledger, long from, long to) {
        return Pricing.rate(ledger, new UsageWindow(T0.plusMillis(from), T0.plusMillis(to)), PricingTest.book(),
                Map.of("job-2", new JobTerms("job-2", "research", "preemptible", null)), checkpoints(),
                CreditPolicy.of(true));
    }

    /** Per line: the quantity and the exact (unrounded) amount times the units per priced unit. */
    static Map<RatedLine.Key, BigDecimal[]> exact(List<RatedLine> lines) {
        Map<RatedLine.Key, BigDecimal[]> m = new HashMap<>();
        for (RatedLine l : lines) {
            BigDecimal[] acc = m.computeIfAbsent(l.key(), k -> new BigDecimal[]{BigDecimal.ZERO, BigDecimal.ZERO});
            acc[0] = acc[0].add(BigDecimal.valueOf(l.quantity()));
            acc[1] = acc[1].add(l.exactNumerator());
        }
        m.values().removeIf(a -> a[0].signum() == 0);
        return m;
    }

    @Property
    void theRatingOfAWindowIsTheSumOverAnyPartitionOfItExactly(@ForAll("ledgers") List<LedgerEntry> ledger,
                                                              @ForAll("cuts") List<Long> cuts) {
        TreeSet<Long> points = new TreeSet<>(cuts);
        if (points.first().equals(points.last())) {
            return;
        }
        Map<RatedLine.Key, BigDecimal[]> whole = exact(rate(ledger, points.first(), points.last()));
        List<RatedLine> parts = new ArrayList<>();
        Long previous = null;
        for (long p : points) {
            if (previous != null) {
                parts.addAll(rate(ledger, previous, p));
            }
            previous = p;
        }
        Map<RatedLine.Key, BigDecimal[]> summed = exact(parts);
        assertThat(summed.keySet()).isEqualTo(whole.keySet());
        whole.forEach((k, v) -> {
            assertThat(summed.get(k)[0]).isEqualByComparingTo(v[0]);
            assertThat(summed.get(k)[1]).isEqualByComparingTo(v[1]);
        });
    }

    @Property
    void roundingEachLineOnceIsWithinHalfACentPerLineOfTheExactTotal(@ForAll("ledgers") List<LedgerEntry> ledger) {
        List<RatedLine> lines = rate(ledger, 0, 27 * PricingTest.HOUR);
        BigDecimal rounded = Invoicing.freshTotal(lines, 2);
        BigDecimal exact = BigDecimal.ZERO;
        for (RatedLine l : lines) {
            exact = exact.add(l.exactNumerator().divide(BigDecimal.valueOf(l.component().perPricedUnit()), 20,
                    java.math.RoundingMode.HALF_EVEN));
        }
        assertThat(rounded.subtract(exact).abs())
                .isLessThanOrEqualTo(new BigDecimal("0.005").multiply(BigDecimal.valueOf(Math.max(1, lines.size()))));
    }

    @Property
    void anInvoiceAndItsNotesAlwaysAddUpToAFreshInvoiceOfTheMonth(@ForAll("ledgers") List<LedgerEntry> ledger,
                                                                @ForAll("ledgers") List<LedgerEntry> late) {
        BillingMonth month = new BillingMonth(java.time.YearMonth.of(2026, 3), java.time.ZoneId.of("UTC"));
        List<Invoice> issued = new ArrayList<>();
        List<LedgerEntry> known = new ArrayList<>();
        Instant now = Instant.parse("2026-04-05T00:00:00Z");
        for (List<LedgerEntry> batch : List.of(ledger, late)) {
            for (LedgerEntry e : batch) {
                if (known.stream().noneMatch(k -> k.entryId().equals(e.entryId()))) {
                    known.add(e);
                }
            }
            List<RatedLine> rated = Pricing.rate(known, month.window(), PricingTest.book(), Map.of(), checkpoints(),
                    CreditPolicy.of(true));
            Invoicing.next("vision", month, rated, issued, PricingTest.book(), now).ifPresent(issued::add);
        }
        List<RatedLine> fresh = Pricing.rate(known, month.window(), PricingTest.book(), Map.of(), checkpoints(),
                CreditPolicy.of(true));
        assertThat(Invoicing.balance(issued)).isEqualByComparingTo(Invoicing.freshTotal(fresh, 2));
        assertThat(Invoicing.next("vision", month, fresh, issued, PricingTest.book(), now)).isEmpty();
    }
}
