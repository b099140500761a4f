package io.gantry.billing.core;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What to issue for a tenant's month. The first time: the invoice, one line per rated line. After that the invoice
 * stands; when a recomputation of the month differs from everything issued so far (a release, a checkpoint or a
 * job's terms arrived late), the difference is issued as a note: a credit note when it lowers the total, a debit
 * note otherwise. Each line's amount is rounded once on the recomputed line; a note's line is that amount minus the
 * amounts already issued for the same key, so invoice + notes always equal a fresh invoice of the month, to the cent.
 */
public final class Invoicing {
    private Invoicing() {
    }

    /**
     * The next document for {@code tenant}'s {@code month}, or empty when nothing needs issuing.
     *
     * @param rated  the month's rated lines of this tenant (from {@link Pricing#rate})
     * @param issued the documents already issued for this tenant and month, invoice first
     */
    public static Optional<Invoice> next(String tenant, BillingMonth month, List<RatedLine> rated,
                                         List<Invoice> issued, PriceBook book, Instant now) {
        String currency = issued.isEmpty() ? book.currency() : issued.get(0).currency();
        int digits = java.util.Currency.getInstance(currency).getDefaultFractionDigits();
        Map<RatedLine.Key, InvoiceLine> fresh = new LinkedHashMap<>();
        for (RatedLine r : rated) {
            if (!r.tenant().equals(tenant)) {
                continue;
            }
            fresh.put(r.key(), new InvoiceLine(r.jobId(), r.gpuModel(), r.component(), r.kind(), r.reason(),
                    r.unitPrice(), r.quantity(), r.amount(digits), r.migProfile()));
        }
        if (issued.isEmpty()) {
            if (fresh.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(new Invoice(Invoice.invoiceId(tenant, month), Invoice.DocumentKind.INVOICE, tenant,
                    month, currency, List.copyOf(fresh.values()), now, book.version(), null, 0));
        }
        Map<RatedLine.Key, long[]> issuedQty = new LinkedHashMap<>();
        Map<RatedLine.Key, BigDecimal> issuedAmount = new LinkedHashMap<>();
        Map<RatedLine.Key, InvoiceLine> sample = new LinkedHashMap<>();
        for (Invoice doc : issued) {
            for (InvoiceLine l : doc.lines()) {
                RatedLine.Key k = l.key(tenant);
                issuedQty.computeIfAbsent(k, x -> new long[1])[0] += l.quantity();
                issuedAmount.merge(k, l.amount(), BigDecimal::add);
                sample.putIfAbsent(k, l);
            }
        }
        List<InvoiceLine> diff = new ArrayList<>();
        BigDecimal zero = BigDecimal.ZERO.setScale(digits);
        for (InvoiceLine l : fresh.values()) {
            RatedLine.Key k = l.key(tenant);
            long q = l.quantity() - issuedQty.getOrDefault(k, new long[1])[0];
            BigDecimal a = l.amount().subtract(issuedAmount.getOrDefault(k, zero));
            if (q != 0 || a.signum() != 0) {
                diff.add(l.with(q, a));
            }
        }
        for (Map.Entry<RatedLine.Key, InvoiceLine> e : sample.entrySet()) {
            if (fresh.containsKey(e.getKey())) {
                continue;
            }
            long q = issuedQty.get(e.getKey())[0];
            BigDecimal a = issuedAmount.get(e.getKey());
            if (q != 0 || a.signum() != 0) {
                InvoiceLine l = e.getValue();
                diff.add(l.with(-q, a.negate()));
            }
        }
        if (diff.isEmpty()) {
            return Optional.empty();
        }
        BigDecimal total = diff.stream().map(InvoiceLine::amount).reduce(zero, BigDecimal::add);
        Invoice.DocumentKind kind = total.signum() < 0 ? Invoice.DocumentKind.CREDIT_NOTE
                : Invoice.DocumentKind.DEBIT_NOTE;
        int seq = issued.size();
        return Optional.of(new Invoice(Invoice.noteId(kind, tenant, month, seq), kind, tenant, month, currency, diff,
                now, book.version(), issued.get(0).documentId(), seq));
    }

    /** The sum of every document's total: what the tenant owes for the month after all corrections. */
    public static BigDecimal balance(List<Invoice> issued) {
        BigDecimal t = BigDecimal.ZERO;
        for (Invoice d : issued) {
            t = t.add(d.total());
        }
        return t;
    }

    /** The month's amount if it were invoiced afresh now: the sum of the rated lines, each rounded once. */
    public static BigDecimal freshTotal(List<RatedLine> rated, int minorDigits) {
        BigDecimal t = BigDecimal.ZERO.setScale(minorDigits);
        for (RatedLine r : rated) {
            t = t.add(r.amount(minorDigits));
        }
        return t;
    }
}
