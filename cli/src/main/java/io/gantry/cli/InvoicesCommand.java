package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

@Command(name = "invoices", mixinStandardHelpOptions = true,
        description = {"My issued invoices and credit/debit notes (an admin: everyone's), or one of them line by line.",
                "Invoices are issued once per tenant and calendar month; corrections are separate notes."})
final class InvoicesCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(arity = "0..1", paramLabel = "ID", description = "an invoice or note to show line by line")
    String id;

    @Option(names = "--month", paramLabel = "YYYY-MM", description = "only this month's documents")
    String month;

    @Option(names = {"-t", "--tenant"}, description = "an admin: only this tenant's documents")
    String tenant;

    @Override
    public Integer call() {
        if (id != null) {
            JsonNode doc = root.client().get(ApiClient.Service.BILLING, "/v1/invoices/" + ApiClient.encode(id));
            root.output().show(doc, () -> document(doc));
            return ExitCode.OK;
        }
        StringBuilder path = new StringBuilder("/v1/invoices");
        String sep = "?";
        if (month != null) {
            path.append(sep).append("month=").append(ApiClient.encode(month));
            sep = "&";
        }
        if (tenant != null) {
            path.append(sep).append("tenant=").append(ApiClient.encode(tenant));
        }
        JsonNode answer = root.client().get(ApiClient.Service.BILLING, path.toString());
        root.output().show(answer, () -> list(answer));
        return ExitCode.OK;
    }

    static String list(JsonNode answer) {
        Table t = new Table("DOCUMENT", "KIND", "TENANT", "MONTH", "ISSUED", "LINES", "TOTAL", "CORRECTS");
        for (JsonNode d : answer.path("invoices")) {
            t.row(d.path("documentId").asText(), d.path("kind").asText(), d.path("tenant").asText(),
                    d.path("month").asText(), d.path("issuedAt").asText(), d.path("lines").asInt(),
                    d.path("total").asText() + " " + d.path("currency").asText(), JobText.text(d, "corrects"));
        }
        return t.size() == 0 ? "no invoices issued\n" : t.render();
    }

    static String document(JsonNode doc) {
        StringBuilder out = new StringBuilder();
        out.append(doc.path("kind").asText()).append(' ').append(doc.path("documentId").asText()).append(" for ")
                .append(doc.path("tenant").asText()).append(", ").append(doc.path("month").asText()).append(" (")
                .append(doc.path("timeZone").asText()).append("), issued ").append(doc.path("issuedAt").asText())
                .append('\n');
        Table t = new Table("JOB", "WHAT", "QUANTITY", "UNIT PRICE", "AMOUNT");
        for (JsonNode l : doc.path("lines")) {
            t.row(l.path("jobId").asText(), l.path("description").asText(),
                    l.path("quantity").asText() + " " + l.path("quantityUnit").asText(),
                    l.path("unitPrice").isNull() || l.path("unitPrice").isMissingNode() ? "-"
                            : l.path("unitPrice").asText() + " / " + l.path("priceUnit").asText(),
                    l.path("amount").asText());
        }
        out.append(t.size() == 0 ? "no lines\n" : t.render());
        String currency = doc.path("currency").asText();
        out.append("subtotal ").append(doc.path("subtotal").asText()).append(' ').append(currency)
                .append(", credits ").append(doc.path("credits").asText()).append(' ').append(currency)
                .append(", total ").append(doc.path("total").asText()).append(' ').append(currency).append('\n');
        return out.toString();
    }
}
