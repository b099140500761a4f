package io.gantry.billing.core;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * An issued document, immutable: the month's invoice of one tenant, or a later credit/debit note correcting it.
 *
 * @param documentId        {@code INV-<yyyy-MM>-<tenant>}, or {@code CN-/DN-<yyyy-MM>-<tenant>-<n>} for the n-th note
 * @param corrects          for a note, the invoice it corrects
 * @param priceBookVersion  the price book version the amounts were computed with
 */
public record Invoice(String documentId, DocumentKind kind, String tenant, BillingMonth month, String currency,
                      List<InvoiceLine> lines, Instant issuedAt, long priceBookVersion, String corrects, int sequence) {
    public enum DocumentKind {
        INVOICE,
        CREDIT_NOTE,
        DEBIT_NOTE
    }

    public Invoice {
        Objects.requireNonNull(documentId, "documentId");
        lines = List.copyOf(lines);
    }

    public static String invoiceId(String tenant, BillingMonth month) {
        return "INV-" + month + "-" + tenant;
    }

    public static String noteId(DocumentKind kind, String tenant, BillingMonth month, int sequence) {
        return (kind == DocumentKind.CREDIT_NOTE ? "CN-" : "DN-") + month + "-" + tenant + "-" + sequence;
    }

    public int minorDigits() {
        return java.util.Currency.getInstance(currency).getDefaultFractionDigits();
    }

    /** Sum of the positive usage lines. */
    public BigDecimal subtotal() {
        return sum(LineKind.USAGE);
    }

    /** Sum of the credit lines (zero or negative). */
    public BigDecimal credits() {
        return sum(LineKind.CREDIT);
    }

    /** Sum of every rounded line: what the tenant owes for this document. */
    public BigDecimal total() {
        BigDecimal t = BigDecimal.ZERO.setScale(minorDigits());
        for (InvoiceLine l : lines) {
            t = t.add(l.amount());
        }
        return t;
    }

    private BigDecimal sum(LineKind kind) {
        BigDecimal t = BigDecimal.ZERO.setScale(minorDigits());
        for (InvoiceLine l : lines) {
            if (l.kind() == kind) {
                t = t.add(l.amount());
            }
        }
        return t;
    }
}
