package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gantry.billing.core.PricingTest.HOUR;
import static io.gantry.billing.core.PricingTest.T0;
import static io.gantry.billing.core.PricingTest.book;
import static io.gantry.billing.core.PricingTest.entry;
import static org.assertj.core.api.Assertions.assertThat;

class InvoicingTest {
    static final BillingMonth MARCH = new BillingMonth(YearMonth.of(2026, 3), ZoneId.of("UTC"));
    static final Instant ISSUED = Instant.parse("2026-04-02T00:00:00Z");

    static List<RatedLine> rate(List<LedgerEntry> entries, Checkpoints cps) {
        return Pricing.rate(entries, MARCH.window(), book(), Map.of(), cps, CreditPolicy.of(false));
    }

    @Test
    void theFirstIssueIsTheInvoiceWithALinePerJobModelAndPriceAndCreditsAsNegativeLines() {
        List<LedgerEntry> ledger = List.of(
                entry("a/n1", "job-1", "H100", 1000, 0, 2 * HOUR, 0, 0, "RUN_SUCCEEDED"),
                entry("b/n1", "job-2", "H100", 2000, 0, HOUR, 0, 0, "NODE_FAILED"));
        Invoice inv = Invoicing.next("vision", MARCH, rate(ledger, Checkpoints.none()), List.of(), book(), ISSUED)
                .orElseThrow();

        assertThat(inv.documentId()).isEqualTo("INV-2026-03-vision");
        assertThat(inv.kind()).isEqualTo(Invoice.DocumentKind.INVOICE);
        assertThat(inv.lines()).extracting(InvoiceLine::jobId, InvoiceLine::kind, InvoiceLine::amount).containsExactly(
                org.assertj.core.groups.Tuple.tuple("job-1", LineKind.USAGE, new BigDecimal("5.00")),
                org.assertj.core.groups.Tuple.tuple("job-2", LineKind.USAGE, new BigDecimal("5.00")),
                org.assertj.core.groups.Tuple.tuple("job-2", LineKind.CREDIT, new BigDecimal("-5.00")));
        assertThat(inv.subtotal()).isEqualByComparingTo("10.00");
        assertThat(inv.credits()).isEqualByComparingTo("-5.00");
        assertThat(inv.total()).isEqualByComparingTo("5.00");
    }

    @Test
    void issuingAgainWithNothingNewIssuesNothing() {
        List<RatedLine> rated = rate(List.of(entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, null)),
                Checkpoints.none());
        Invoice inv = Invoicing.next("vision", MARCH, rated, List.of(), book(), ISSUED).orElseThrow();
        assertThat(Invoicing.next("vision", MARCH, rated, List.of(inv), book(), ISSUED.plusSeconds(60))).isEmpty();
    }

    @Test
    void aLateReleaseIsADebitNoteAndALateCheckpointACreditNoteAndTogetherTheyEqualAFreshInvoice() {
        List<LedgerEntry> ledger = new ArrayList<>(List.of(
                entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, null),
                entry("b/n1", "job-2", "H100", 1000, 0, 4 * HOUR, 0, 0, "NODE_FAILED")));
        List<Invoice> issued = new ArrayList<>();
        issued.add(Invoicing.next("vision", MARCH, rate(ledger, Checkpoints.none()), issued, book(), ISSUED)
                .orElseThrow());

        ledger.add(entry("c/n1", "job-3", "A100", 1000, 0, HOUR, 0, 0, null));
        Invoice debit = Invoicing.next("vision", MARCH, rate(ledger, Checkpoints.none()), issued, book(), ISSUED)
                .orElseThrow();
        issued.add(debit);
        assertThat(debit.documentId()).isEqualTo("DN-2026-03-vision-1");
        assertThat(debit.corrects()).isEqualTo("INV-2026-03-vision");
        assertThat(debit.lines()).singleElement().satisfies(l -> assertThat(l.amount()).isEqualByComparingTo("1.20"));

        // job-2's checkpoint arrives after the invoice: only the last hour was lost, so the credit shrinks from
        // 4 hours (10.00) to 1 hour (2.50) and the tenant owes the difference
        Checkpoints cps = Checkpoints.none().add("job-2", 1, T0.plusMillis(3 * HOUR));
        Invoice note = Invoicing.next("vision", MARCH, rate(ledger, cps), issued, book(), ISSUED).orElseThrow();
        issued.add(note);
        assertThat(note.kind()).isEqualTo(Invoice.DocumentKind.DEBIT_NOTE);
        assertThat(note.total()).isEqualByComparingTo("7.50");

        BigDecimal fresh = Invoicing.freshTotal(rate(ledger, cps), 2);
        assertThat(Invoicing.balance(issued)).isEqualByComparingTo(fresh);
    }

    @Test
    void aLateNodeFailureCreditIsACreditNote() {
        List<LedgerEntry> before = List.of(entry("b/n1", "job-2", "H100", 1000, 0, 4 * HOUR, 0, 0, "RUN_SUCCEEDED"));
        List<Invoice> issued = new ArrayList<>();
        issued.add(Invoicing.next("vision", MARCH, rate(before, Checkpoints.none()), issued, book(), ISSUED)
                .orElseThrow());
        List<LedgerEntry> after = List.of(entry("b/n1", "job-2", "H100", 1000, 0, 4 * HOUR, 0, 0, "NODE_FAILED"));
        Invoice note = Invoicing.next("vision", MARCH, rate(after, Checkpoints.none()), issued, book(), ISSUED)
                .orElseThrow();
        assertThat(note.kind()).isEqualTo(Invoice.DocumentKind.CREDIT_NOTE);
        assertThat(note.documentId()).isEqualTo("CN-2026-03-vision-1");
        assertThat(note.total()).isEqualByComparingTo("-10.00");
    }

    @Test
    void aMonthInAnotherTimeZoneStartsAtLocalMidnight() {
        BillingMonth berlin = new BillingMonth(YearMonth.of(2026, 3), ZoneId.of("Europe/Berlin"));
        assertThat(berlin.from()).isEqualTo(Instant.parse("2026-02-28T23:00:00Z"));
        // the clocks go forward on 29 March: April starts at 22:00 UTC
        assertThat(berlin.to()).isEqualTo(Instant.parse("2026-03-31T22:00:00Z"));
    }

    @Test
    void aRunGrantedInJuneAndReleasedInAugustReachesJuneJulyAndAugustOfTheInvoicingTimeZone() {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        assertThat(BillingMonth.reached(Instant.parse("2025-06-29T00:00:00Z"), Instant.parse("2025-08-02T10:00:00Z"),
                berlin)).extracting(BillingMonth::toString).containsExactly("2025-06", "2025-07", "2025-08");
        // 22:30 UTC on 31 May is already June in Berlin
        assertThat(BillingMonth.reached(Instant.parse("2025-05-31T22:30:00Z"), Instant.parse("2025-05-31T22:30:00Z"),
                berlin)).extracting(BillingMonth::toString).containsExactly("2025-06");
    }

    @Test
    void theCsvHasAHeaderAndALinePerInvoiceLineAndTheMarkdownShowsTheTotal() {
        Invoice inv = Invoicing.next("vision", MARCH, rate(List.of(
                entry("a/n1", "=job,1", "H100", 500, 0, HOUR, 0, 0, null)), Checkpoints.none()), List.of(), book(),
                ISSUED).orElseThrow();
        String csv = InvoiceRendering.csv(inv);
        assertThat(csv.split("\r\n")).hasSize(2);
        assertThat(csv).as("prices with the currency's minor digits, as in JSON")
                .contains("\"'=job,1\",H100,GPU,USAGE,,1800.000,GPU-seconds,2.50,GPU-hour,1.25");
        String md = InvoiceRendering.markdown(inv);
        assertThat(md).startsWith("# Invoice INV-2026-03-vision").contains("| **Total** | **1.25 EUR** |")
                .contains("2.50 / GPU-hour");
    }
}
