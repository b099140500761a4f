package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A MIG profile the price book prices on its own is billed per instance-hour, on a line of its own. */
class MigPricingTest {
    static final Instant T0 = PricingTest.T0;
    static final long HOUR = PricingTest.HOUR;

    /** A100 1.40/GPU-hour; its 1g.10gb instance 0.30/instance-hour from T0 and 0.25 from T0+10h. */
    static PriceBook book() {
        return new PriceBook(1, "EUR", List.of(new PriceBook.GpuPrice("A100", null, new BigDecimal("1.40"), T0)),
                List.of(), List.of(), List.of(new PriceBook.Multiplier(null, "preemptible", new BigDecimal("0.5"), T0)),
                List.of(new PriceBook.MigPrice("A100", "1g.10gb", new BigDecimal("0.30"), T0),
                        new PriceBook.MigPrice("A100", "1g.10gb", new BigDecimal("0.25"), T0.plusMillis(10 * HOUR))));
    }

    static SortedMap<String, Integer> mig(Object... profileCount) {
        TreeMap<String, Integer> m = new TreeMap<>();
        for (int i = 0; i < profileCount.length; i += 2) {
            m.put((String) profileCount[i], (Integer) profileCount[i + 1]);
        }
        return m;
    }

    /** One node of A100 holding {@code whole} GPUs plus the instances, from {@code from} to {@code to} (ms). */
    static LedgerEntry entry(int whole, SortedMap<String, Integer> instances, long from, long to, String reason) {
        long milli = 1000L * whole + MigInstances.milli(instances);
        long d = to - from;
        return new LedgerEntry("a/n1", "vision", "job-1", 1, "a", "n1", "A100", whole, T0.plusMillis(from),
                T0.plusMillis(to), d, milli * d / 1000, milli, milli * d, 0, 0, reason, instances);
    }

    static List<RatedLine> rate(LedgerEntry e, Map<String, JobTerms> terms, Checkpoints cps, boolean credits) {
        return Pricing.rate(List.of(e), UsageWindow.all(), book(), terms, cps, CreditPolicy.of(credits));
    }

    static Stream<Arguments> ratings() {
        return Stream.of(
                Arguments.of("a priced 1g.10gb instance for an hour costs its own price, not 142/1000 of the GPU",
                        entry(0, mig("1g.10gb", 1), 0, HOUR, "RUN_SUCCEEDED"), "0.30"),
                Arguments.of("two instances for 90 minutes", entry(0, mig("1g.10gb", 2), 0, 90 * 60_000,
                        "RUN_SUCCEEDED"), "0.90"),
                Arguments.of("an unpriced profile pays its share of the model (3g: 428 thousandths)",
                        entry(0, mig("3g.40gb", 1), 0, HOUR, "RUN_SUCCEEDED"), "0.60"),
                Arguments.of("a whole GPU and a priced instance on one node: both prices",
                        entry(1, mig("1g.10gb", 1), 0, HOUR, "RUN_SUCCEEDED"), "1.70"),
                Arguments.of("after the MIG price change the new price",
                        entry(0, mig("1g.10gb", 1), 10 * HOUR, 11 * HOUR, "RUN_SUCCEEDED"), "0.25"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ratings")
    void migInstancesAreRatedAtTheirOwnPriceWhereTheBookHasOne(String name, LedgerEntry e, String amount) {
        assertThat(Invoicing.freshTotal(rate(e, Map.of(), Checkpoints.none(), false), 2)).isEqualByComparingTo(amount);
    }

    @Test
    void aPricedProfileIsItsOwnInvoiceLineInInstanceHoursBesideTheGpuLine() {
        List<RatedLine> lines = rate(entry(1, mig("1g.10gb", 2, "3g.40gb", 1), 0, HOUR, "RUN_SUCCEEDED"), Map.of(),
                Checkpoints.none(), false);

        assertThat(lines).extracting(RatedLine::component, RatedLine::migProfile, RatedLine::quantity)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Component.GPU, null, (1000L + 428) * HOUR),
                        org.assertj.core.groups.Tuple.tuple(Component.MIG, "1g.10gb", 2 * HOUR));
        Invoice inv = Invoicing.next("vision", new BillingMonth(java.time.YearMonth.of(2026, 3),
                java.time.ZoneOffset.UTC), lines, List.of(), book(), T0).orElseThrow();
        InvoiceLine migLine = inv.lines().get(1);
        assertThat(migLine.description()).isEqualTo("A100 MIG 1g.10gb instance time");
        assertThat(migLine.displayQuantity()).isEqualByComparingTo("7200");
        assertThat(migLine.component().priceUnit()).isEqualTo("instance-hour");
        assertThat(migLine.amount()).isEqualByComparingTo("0.60");
        assertThat(InvoiceRendering.csv(inv)).contains(",instance-seconds,0.30,instance-hour,0.60,1g.10gb\r\n");
    }

    @Test
    void anIntervalAcrossTheMigPriceChangeIsSplitExactly() {
        List<RatedLine> lines = rate(entry(0, mig("1g.10gb", 1), 9 * HOUR, 11 * HOUR, "RUN_SUCCEEDED"), Map.of(),
                Checkpoints.none(), false);
        assertThat(lines).extracting(RatedLine::unitPrice, RatedLine::quantity).containsExactly(
                org.assertj.core.groups.Tuple.tuple(new BigDecimal("0.25"), HOUR),
                org.assertj.core.groups.Tuple.tuple(new BigDecimal("0.3"), HOUR));
    }

    @Test
    void multipliersApplyAndAFaultCreditGivesTheInstanceTimeBackAtTheSamePrice() {
        Map<String, JobTerms> terms = Map.of("job-1", new JobTerms("job-1", null, "preemptible", null));
        List<RatedLine> lines = rate(entry(0, mig("1g.10gb", 1), 0, HOUR, "NODE_FAILED"), terms, Checkpoints.none(),
                true);
        assertThat(lines).extracting(RatedLine::kind, RatedLine::unitPrice, RatedLine::quantity).containsExactly(
                org.assertj.core.groups.Tuple.tuple(LineKind.USAGE, new BigDecimal("0.15"), HOUR),
                org.assertj.core.groups.Tuple.tuple(LineKind.CREDIT, new BigDecimal("0.15"), -HOUR));
        assertThat(Invoicing.freshTotal(lines, 2)).isEqualByComparingTo("0.00");
    }

    @Test
    void ratingAReleaseKeepsItsMigInstancesPerNodeInTheLedger() {
        Release r = new Release("vision", "job-1", 1, "a", T0, T0.plusMillis(HOUR), List.of(
                new Placement("n1", "A100", 0, 142, 0, 0, mig("1g.10gb", 1)),
                new Placement("n1", "A100", 0, 142, 0, 0, mig("1g.10gb", 1)),
                new Placement("n1", "A100", 0, 428, 0, 0, mig("3g.40gb", 1))), "RUN_SUCCEEDED");
        LedgerEntry e = Rating.rate(r).get(0);
        assertThat(e.migInstances()).isEqualTo(mig("1g.10gb", 2, "3g.40gb", 1));
        assertThat(e.gpuMilli()).isEqualTo(712);
        assertThat(MigInstances.decode(MigInstances.encode(e.migInstances()))).isEqualTo(e.migInstances());
        assertThat(MigInstances.encode(e.migInstances())).isEqualTo("1g.10gb=2;3g.40gb=1");
    }

    @Test
    void instancesHoldingMoreThanTheSharesAreRefused() {
        assertThatThrownBy(() -> new LedgerEntry("a/n1", "vision", "job-1", 1, "a", "n1", "A100", 0, T0,
                T0.plusMillis(1), 1, 0, 100, 100, 0, 0, null, mig("1g.10gb", 1)))
                .hasMessageContaining("migInstances");
    }

    static Map<String, Object> migEntry(String model, String profile, Object price) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", model);
        m.put("profile", profile);
        m.put("perInstanceHour", price);
        m.put("effectiveFrom", "2026-01-01T00:00:00Z");
        return m;
    }

    static Map<String, Object> doc(Object... mig) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("currency", "EUR");
        m.put("gpu", List.of());
        m.put("mig", List.of(mig));
        return m;
    }

    static Stream<Arguments> badMigPrices() {
        return Stream.of(
                Arguments.of("a profile that is no MIG profile", doc(migEntry("A100", "1g.10", "0.3")),
                        "mig[0].profile"),
                Arguments.of("eight slices", doc(migEntry("A100", "8g.80gb", "0.3")), "mig[0].profile"),
                Arguments.of("a model no node has", doc(migEntry("V100", "1g.10gb", "0.3")), "mig[0].model"),
                Arguments.of("a negative price", doc(migEntry("A100", "1g.10gb", "-0.3")), "mig[0].perInstanceHour"),
                Arguments.of("two entries for one profile from the same instant",
                        doc(migEntry("A100", "1g.10gb", "0.3"), migEntry("A100", "1g.10gb", "0.4")),
                        "mig[1].effectiveFrom"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badMigPrices")
    void badMigPricesAreRefusedNamingTheField(String name, Object tree, String field) {
        assertThatThrownBy(() -> PriceBookParser.parse(tree, Set.of("A100", "H100")))
                .isInstanceOfSatisfying(InvalidInput.class, e ->
                        assertThat(e.fields()).extracting(InvalidInput.Field::field).contains(field));
    }

    @Test
    void aBookWithMigPricesIsReadExactlyAndWrittenBackTheSame() {
        PriceBook b = PriceBookParser.parse(doc(migEntry("A100", "1g.10gb", "0.30")), Set.of("A100"));
        assertThat(b.mig()).containsExactly(new PriceBook.MigPrice("A100", "1g.10gb", new BigDecimal("0.3"),
                Instant.parse("2026-01-01T00:00:00Z")));
        assertThat(PriceBookParser.parse(PriceBookParser.toTree(b), Set.of("A100"))).isEqualTo(b);
    }

    @Test
    void aMigPriceInForceCannotBeChangedRetroactively() {
        PriceBook v1 = PriceBookParser.parse(doc(migEntry("A100", "1g.10gb", "0.30")), Set.of()).withVersion(1);
        PriceBook changed = PriceBookParser.parse(doc(migEntry("A100", "1g.10gb", "0.20")), Set.of());
        assertThatThrownBy(() -> PriceBook.requireNoRetroactiveChange(v1, changed,
                Instant.parse("2026-06-01T00:00:00Z")))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .extracting(InvalidInput.Field::field).contains("mig[0].effectiveFrom"));
    }
}
