package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.concurrent.Callable;

@Command(name = "costs", mixinStandardHelpOptions = true,
        description = {"What my jobs cost in money at the prices in force, before any invoice: a calendar month "
                + "(default: this one, to date) or any window, line by line (job, GPU model, credits) with the total.",
                "Runs still going are not in it until they end (the budget counts them: gantry invoices, GET "
                        + "/v1/budgets)."})
final class CostsCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Option(names = "--month", paramLabel = "YYYY-MM",
            description = "a calendar month in billing's time zone (default: the current month)")
    String month;

    @Mixin
    WindowOptions window;

    @Override
    public Integer call() {
        if (month != null && window.bounded()) {
            throw new CliException(ExitCode.INVALID, "give --month, or --from and --to, not both");
        }
        // without a window billing decides where the month starts and ends (its time zone): only the month is named
        String monthParam = window.bounded() ? null : "month=" + ApiClient.encode(month != null ? month
                : YearMonth.now(root.env().clock().withZone(ZoneOffset.UTC)).toString());
        JsonNode answer = root.client().get(ApiClient.Service.BILLING, window.query("/v1/costs", monthParam));
        root.output().show(answer, () -> text(answer));
        return ExitCode.OK;
    }

    /** The lines as a table, then the window and the total in its currency. */
    static String text(JsonNode answer) {
        Table t = new Table("TENANT", "JOB", "WHAT", "QUANTITY", "UNIT PRICE", "AMOUNT");
        for (JsonNode l : answer.path("lines")) {
            String what = l.path("component").asText() + (l.path("gpuModel").isTextual() ? " " + l.path("gpuModel")
                    .asText() : "") + (l.path("migProfile").isTextual() ? " " + l.path("migProfile").asText() : "")
                    + ("USAGE".equals(l.path("kind").asText()) ? "" : " " + l.path("kind").asText().toLowerCase(java.util.Locale.ROOT)
                    + (l.path("reason").isTextual() ? " (" + l.path("reason").asText() + ")" : ""));
            t.row(l.path("tenant").asText(), l.path("jobId").asText(), what,
                    l.path("quantity").asText() + " " + l.path("quantityUnit").asText(),
                    l.path("unitPrice").isTextual() ? l.path("unitPrice").asText() + " / " + l.path("priceUnit")
                            .asText() : "-",
                    l.path("amount").asText());
        }
        String currency = answer.path("currency").asText();
        String window = (answer.path("from").isTextual() ? answer.path("from").asText() : "the beginning") + " to "
                + (answer.path("to").isTextual() ? answer.path("to").asText() : "now");
        return (t.size() == 0 ? "no costs\n" : t.render()) + "total " + answer.path("total").asText() + " "
                + currency + " (" + window + ", price book version " + answer.path("priceBookVersion").asText()
                + ")\n";
    }
}
