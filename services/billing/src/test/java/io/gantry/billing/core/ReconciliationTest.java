package io.gantry.billing.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gantry.billing.core.InvoicingTest.ISSUED;
import static io.gantry.billing.core.InvoicingTest.MARCH;
import static io.gantry.billing.core.PricingTest.HOUR;
import static io.gantry.billing.core.PricingTest.book;
import static io.gantry.billing.core.PricingTest.entry;
import static org.assertj.core.api.Assertions.assertThat;

class ReconciliationTest {
    static final LedgerEntry A = entry("a/n1", "job-1", "H100", 1000, 0, HOUR, 0, 0, "RUN_SUCCEEDED");
    static final LedgerEntry B = entry("b/n1", "job-2", "H100", 500, HOUR, 3 * HOUR, 0, 0, "RUN_FAILED");

    static Reconciliation.Report reconcile(List<LedgerEntry> events, List<LedgerEntry> ledger, List<Invoice> docs) {
        return Reconciliation.reconcile(MARCH, events, ledger, docs.isEmpty() ? Map.of() : Map.of("vision", docs),
                book(), Map.of(), Checkpoints.none(), CreditPolicy.of(false));
    }

    @Test
    void aLedgerAndInvoiceThatMatchTheEventsBalanceEvenWhenTheLogHoldsARedelivery() {
        Invoice inv = Invoicing.next("vision", MARCH, Pricing.rate(List.of(A, B), MARCH.window(), book(), Map.of(),
                Checkpoints.none(), CreditPolicy.of(false)), List.of(), book(), ISSUED).orElseThrow();
        Reconciliation.Report r = reconcile(List.of(A, B, A), List.of(A, B), List.of(inv));

        assertThat(r.balanced()).isTrue();
        assertThat(r.tenants()).singleElement().satisfies(t -> {
            assertThat(t.eventGpuMicros()).isEqualTo(2000 * HOUR);
            assertThat(t.invoiced()).isEqualByComparingTo("5.00");
        });
    }

    @Test
    void aMissingLedgerRowAndAWrongInvoiceAreReported() {
        Invoice inv = Invoicing.next("vision", MARCH, Pricing.rate(List.of(A), MARCH.window(), book(), Map.of(),
                Checkpoints.none(), CreditPolicy.of(false)), List.of(), book(), ISSUED).orElseThrow();
        Reconciliation.Report r = reconcile(List.of(A, B), List.of(A), List.of(inv));

        assertThat(r.balanced()).isFalse();
        assertThat(r.tenants()).singleElement().satisfies(t -> {
            assertThat(t.missingFromLedger()).containsExactly("b/n1");
            assertThat(t.eventAmount()).isEqualByComparingTo("5.00");
            assertThat(t.invoiced()).isEqualByComparingTo("2.50");
        });
    }
}
