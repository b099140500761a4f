package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Billing's invoice views as a person reads them. */
class InvoicesCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theListShowsEachDocumentWithItsTotalInItsCurrency() throws Exception {
        JsonNode answer = JSON.readTree("""
                {"invoices":[{"documentId":"inv-1","kind":"INVOICE","tenant":"vision","month":"2026-06","currency":"EUR",
                  "issuedAt":"2026-07-01T06:00:00Z","corrects":null,"lines":3,"total":"123.45"},
                 {"documentId":"cn-2","kind":"CREDIT_NOTE","tenant":"vision","month":"2026-06","currency":"EUR",
                  "issuedAt":"2026-07-03T06:00:00Z","corrects":"inv-1","lines":1,"total":"-4.00"}]}""");

        String out = InvoicesCommand.list(answer);

        assertThat(out).contains("DOCUMENT", "inv-1", "INVOICE", "123.45 EUR", "cn-2", "CREDIT_NOTE", "-4.00 EUR");
        assertThat(out.lines().filter(l -> l.contains("cn-2")).findFirst().orElseThrow()).contains("inv-1");
        assertThat(InvoicesCommand.list(JSON.readTree("{\"invoices\":[]}"))).isEqualTo("no invoices issued\n");
    }

    @Test
    void aDocumentShowsItsLinesCreditsAndTotals() throws Exception {
        JsonNode doc = JSON.readTree("""
                {"documentId":"inv-1","kind":"INVOICE","tenant":"vision","month":"2026-06","timeZone":"UTC",
                 "currency":"EUR","issuedAt":"2026-07-01T06:00:00Z","lines":[
                   {"jobId":"j1","description":"H100 GPU time","quantity":"10.000","quantityUnit":"GPU-hours",
                    "unitPrice":"2.50","priceUnit":"GPU-hour","amount":"25.00"},
                   {"jobId":"j2","description":"credit: NODE_FAILED","quantity":"-1.000","quantityUnit":"GPU-hours",
                    "unitPrice":null,"priceUnit":"GPU-hour","amount":"-2.50"}],
                 "subtotal":"25.00","credits":"-2.50","total":"22.50"}""");

        String out = InvoicesCommand.document(doc);

        assertThat(out).startsWith("INVOICE inv-1 for vision, 2026-06 (UTC)");
        assertThat(out).contains("H100 GPU time", "10.000 GPU-hours", "2.50 / GPU-hour", "25.00", "credit: NODE_FAILED",
                "-2.50", "total 22.50 EUR");
    }
}
