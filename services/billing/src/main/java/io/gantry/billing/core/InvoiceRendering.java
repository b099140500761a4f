package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.List;

/** Plain-text renderings of an issued document: CSV (one row per line) and Markdown (for people). */
public final class InvoiceRendering {
    public static final List<String> CSV_HEADER = List.of("documentId", "kind", "tenant", "month", "currency",
            "jobId", "gpuModel", "component", "lineKind", "reason", "quantity", "quantityUnit", "unitPrice",
            "priceUnit", "amount", "migProfile");

    private InvoiceRendering() {
    }

    public static String csv(Invoice inv) {
        StringBuilder b = new StringBuilder(String.join(",", CSV_HEADER)).append("\r\n");
        for (InvoiceLine l : inv.lines()) {
            b.append(String.join(",", cell(inv.documentId()), inv.kind().name(), cell(inv.tenant()),
                    inv.month().toString(), inv.currency(), cell(l.jobId()), cell(l.gpuModel()), l.component().name(),
                    l.kind().name(), cell(l.reason()), l.displayQuantity().toPlainString(),
                    l.component().quantityUnit(), l.unitPrice() == null ? "" : Money.text(l.unitPrice(),
                            inv.minorDigits()),
                    l.component().priceUnit(), l.amount().toPlainString(), cell(l.migProfile()))).append("\r\n");
        }
        return b.toString();
    }

    public static String markdown(Invoice inv) {
        StringBuilder b = new StringBuilder();
        String title = switch (inv.kind()) {
            case INVOICE -> "Invoice";
            case CREDIT_NOTE -> "Credit note";
            case DEBIT_NOTE -> "Debit note";
        };
        b.append("# ").append(title).append(' ').append(inv.documentId()).append("\n\n");
        b.append("- Tenant: ").append(md(inv.tenant())).append('\n');
        b.append("- Period: ").append(inv.month()).append(" (").append(inv.month().from()).append(" to ")
                .append(inv.month().to()).append(", ").append(inv.month().zone()).append(")\n");
        b.append("- Issued: ").append(inv.issuedAt()).append('\n');
        b.append("- Currency: ").append(inv.currency()).append('\n');
        b.append("- Price book version: ").append(inv.priceBookVersion()).append('\n');
        if (inv.corrects() != null) {
            b.append("- Corrects: ").append(inv.corrects()).append('\n');
        }
        b.append("\n| job | item | quantity | unit price | amount |\n| --- | --- | ---: | ---: | ---: |\n");
        for (InvoiceLine l : inv.lines()) {
            b.append("| ").append(md(l.jobId())).append(" | ").append(md(l.description())).append(" | ")
                    .append(l.displayQuantity().toPlainString()).append(' ').append(l.component().quantityUnit())
                    .append(" | ").append(l.unitPrice() == null ? "no price" : Money.text(l.unitPrice(),
                            inv.minorDigits()) + " / "
                            + l.component().priceUnit())
                    .append(" | ").append(l.amount().toPlainString()).append(" |\n");
        }
        b.append("\n| | |\n| --- | ---: |\n");
        b.append("| Usage | ").append(money(inv.subtotal())).append(" |\n");
        b.append("| Credits | ").append(money(inv.credits())).append(" |\n");
        b.append("| **Total** | **").append(money(inv.total())).append(' ').append(inv.currency()).append("** |\n");
        b.append("\nAmounts: quantity x unit price, rounded once per line, half-even, to the currency's minor unit.\n");
        return b.toString();
    }

    private static String money(BigDecimal d) {
        return d.toPlainString();
    }

    /** CSV cell: quoted when it holds a comma, quote or line break; a leading =+-@ is neutralised for spreadsheets. */
    static String cell(String s) {
        if (s == null) {
            return "";
        }
        String v = !s.isEmpty() && "=+-@".indexOf(s.charAt(0)) >= 0 ? "'" + s : s;
        if (v.contains(",") || v.contains("\"") || v.contains("\n") || v.contains("\r")) {
            return "\"" + v.replace("\"", "\"\"") + "\"";
        }
        return v;
    }

    private static String md(String s) {
        return s == null ? "" : s.replace("|", "\\|").replace("\n", " ");
    }
}
