package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Recomputes a month independently and compares. The recomputation starts from the allocation events alone (each
 * release rated again by {@link Rating}), so it does not trust the ledger; it is then priced the same way, so the
 * invoices can be checked to the cent and the ledger to the GPU-microsecond.
 */
public final class Reconciliation {
    private Reconciliation() {
    }

    /** One tenant's month, three ways. {@code invoiced} is null when nothing was issued for it yet. */
    public record TenantResult(String tenant, long eventGpuMicros, long ledgerGpuMicros, BigDecimal eventAmount,
                               BigDecimal ledgerAmount, BigDecimal invoiced, List<String> missingFromLedger,
                               List<String> notInEvents, List<String> differing) {
        public boolean balanced() {
            return eventGpuMicros == ledgerGpuMicros && eventAmount.compareTo(ledgerAmount) == 0
                    && (invoiced == null || invoiced.compareTo(eventAmount) == 0)
                    && missingFromLedger.isEmpty() && notInEvents.isEmpty() && differing.isEmpty();
        }
    }

    public record Report(BillingMonth month, String currency, List<TenantResult> tenants) {
        public boolean balanced() {
            return tenants.stream().allMatch(TenantResult::balanced);
        }
    }

    public static Report reconcile(BillingMonth month, List<LedgerEntry> fromEvents, List<LedgerEntry> ledger,
                                   Map<String, List<Invoice>> issuedByTenant, PriceBook book,
                                   Map<String, JobTerms> terms, Checkpoints checkpoints, CreditPolicy policy) {
        UsageWindow window = month.window();
        Map<String, LedgerEntry> events = byId(fromEvents);
        Map<String, LedgerEntry> rows = byId(ledger);
        TreeSet<String> tenants = new TreeSet<>();
        fromEvents.stream().filter(e -> Usage.touches(e, window)).forEach(e -> tenants.add(e.tenant()));
        ledger.stream().filter(e -> Usage.touches(e, window)).forEach(e -> tenants.add(e.tenant()));
        tenants.addAll(issuedByTenant.keySet());
        int digits = book.minorDigits();
        List<TenantResult> out = new ArrayList<>();
        for (String tenant : tenants) {
            List<LedgerEntry> ev = ofTenant(fromEvents, tenant, window);
            List<LedgerEntry> le = ofTenant(ledger, tenant, window);
            List<String> missing = new ArrayList<>();
            List<String> extra = new ArrayList<>();
            List<String> differing = new ArrayList<>();
            for (LedgerEntry e : ev) {
                LedgerEntry r = rows.get(e.entryId());
                if (r == null) {
                    missing.add(e.entryId());
                } else if (!r.equals(e)) {
                    differing.add(e.entryId());
                }
            }
            for (LedgerEntry r : le) {
                if (!events.containsKey(r.entryId())) {
                    extra.add(r.entryId());
                }
            }
            BigDecimal eventAmount = Invoicing.freshTotal(
                    Pricing.rate(ev, window, book, terms, checkpoints, policy), digits);
            BigDecimal ledgerAmount = Invoicing.freshTotal(
                    Pricing.rate(le, window, book, terms, checkpoints, policy), digits);
            List<Invoice> docs = issuedByTenant.getOrDefault(tenant, List.of());
            out.add(new TenantResult(tenant, micros(ev, window), micros(le, window), eventAmount, ledgerAmount,
                    docs.isEmpty() ? null : Invoicing.balance(docs), missing, extra, differing));
        }
        return new Report(month, book.currency(), out);
    }

    private static long micros(List<LedgerEntry> entries, UsageWindow window) {
        long t = 0;
        for (LedgerEntry e : entries) {
            t = Math.addExact(t, Usage.gpuMicrosIn(e, window));
        }
        return t;
    }

    private static List<LedgerEntry> ofTenant(List<LedgerEntry> all, String tenant, UsageWindow window) {
        // the same entry delivered twice in the event log is one interval, not two
        Map<String, LedgerEntry> unique = new TreeMap<>();
        for (LedgerEntry e : all) {
            if (e.tenant().equals(tenant) && Usage.touches(e, window)) {
                unique.putIfAbsent(e.entryId(), e);
            }
        }
        return new ArrayList<>(unique.values());
    }

    private static Map<String, LedgerEntry> byId(List<LedgerEntry> entries) {
        Map<String, LedgerEntry> m = new HashMap<>();
        for (LedgerEntry e : entries) {
            m.putIfAbsent(e.entryId(), e);
        }
        return m;
    }
}
