package io.gantry.billing.http;

import io.gantry.billing.core.Money;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.InvoiceLine;
import io.gantry.billing.core.RatedLine;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;

/** JSON shapes of documents and rated lines. Money and quantities are exact decimal strings, never JSON numbers. */
final class InvoiceViews {
    private InvoiceViews() {
    }

    @Serdeable
    public record LineView(String jobId, @Nullable String gpuModel, String component, String kind,
                           @Nullable String reason, String description, String quantity, String quantityUnit,
                           long quantityExact, @Nullable String unitPrice, String priceUnit, String amount,
                           @Nullable String migProfile) {
        static LineView of(InvoiceLine l, int digits) {
            return new LineView(l.jobId(), l.gpuModel(), l.component().name(), l.kind().name(), l.reason(),
                    l.description(), l.displayQuantity().toPlainString(), l.component().quantityUnit(), l.quantity(),
                    l.unitPrice() == null ? null : Money.text(l.unitPrice(), digits), l.component().priceUnit(),
                    l.amount().toPlainString(), l.migProfile());
        }
    }

    @Serdeable
    public record DocumentView(String documentId, String kind, String tenant, String month, String timeZone,
                               String periodFrom, String periodTo, String currency, String issuedAt,
                               long priceBookVersion, @Nullable String corrects, List<LineView> lines,
                               String subtotal, String credits, String total) {
        static DocumentView of(Invoice d) {
            return new DocumentView(d.documentId(), d.kind().name(), d.tenant(), d.month().toString(),
                    d.month().zone().getId(), d.month().from().toString(), d.month().to().toString(), d.currency(),
                    d.issuedAt().toString(), d.priceBookVersion(), d.corrects(),
                    d.lines().stream().map(l -> LineView.of(l, d.minorDigits())).toList(), d.subtotal().toPlainString(),
                    d.credits().toPlainString(), d.total().toPlainString());
        }
    }

    @Serdeable
    public record SummaryView(String documentId, String kind, String tenant, String month, String currency,
                              String issuedAt, @Nullable String corrects, int lines, String total) {
        static SummaryView of(Invoice d) {
            return new SummaryView(d.documentId(), d.kind().name(), d.tenant(), d.month().toString(), d.currency(),
                    d.issuedAt().toString(), d.corrects(), d.lines().size(), d.total().toPlainString());
        }
    }

    @Serdeable
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.ALWAYS)
    public record CostLineView(String tenant, String jobId, @Nullable String gpuModel, String component, String kind,
                               @Nullable String reason, String quantity, String quantityUnit, long quantityExact,
                               @Nullable String unitPrice, String priceUnit, String amount,
                               @Nullable String migProfile) {
        static CostLineView of(RatedLine l, int digits) {
            return new CostLineView(l.tenant(), l.jobId(), l.gpuModel(), l.component().name(), l.kind().name(),
                    l.reason(), l.component().display(l.quantity()).toPlainString(), l.component().quantityUnit(),
                    l.quantity(), l.unitPrice() == null ? null : Money.text(l.unitPrice(), digits),
                    l.component().priceUnit(), l.amount(digits).toPlainString(), l.migProfile());
        }
    }
}
