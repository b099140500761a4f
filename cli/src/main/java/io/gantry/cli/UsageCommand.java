package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.concurrent.Callable;

@Command(name = "usage", mixinStandardHelpOptions = true,
        description = {"GPU time billed: per tenant and GPU model, or per run of one job (--job).",
        "GPU-seconds are exact (the billing ledger's decimals)."})
final class UsageCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Mixin
    WindowOptions window;

    @Option(names = {"-j", "--job"}, paramLabel = "JOB", description = "the ledger entries of one job")
    String job;

    @Override
    public Integer call() {
        if (job != null) {
            JsonNode entries = root.client().get(ApiClient.Service.BILLING,
                    "/v1/usage/entries?jobId=" + ApiClient.encode(job));
            root.output().show(entries, () -> entries(entries));
            return ExitCode.OK;
        }
        JsonNode answer = root.client().get(ApiClient.Service.BILLING, window.query("/v1/usage", null));
        root.output().show(answer, () -> summary(answer));
        return ExitCode.OK;
    }

    static String summary(JsonNode answer) {
        Table t = new Table("TENANT", "GPU MODEL", "GPU-SECONDS", "GPU-HOURS", "ENTRIES");
        for (JsonNode r : answer.path("rows")) {
            t.row(r.path("tenant").asText(), JobText.text(r, "gpuModel") == null ? "(CPU only)" : r.path("gpuModel").asText(),
                    r.path("gpuSeconds").asText(), hours(r.path("gpuSeconds").asText()), r.path("entries").asLong());
        }
        t.row("TOTAL", "", answer.path("totalGpuSeconds").asText(), hours(answer.path("totalGpuSeconds").asText()), "");
        return t.render();
    }

    static String entries(JsonNode entries) {
        Table t = new Table("ATTEMPT", "NODE", "GPU MODEL", "GPUS", "STARTED", "ENDED", "GPU-SECONDS");
        BigDecimal total = BigDecimal.ZERO;
        for (JsonNode e : entries) {
            // thousandths of GPUs held: 16000 is 16 GPUs, 500 half of one
            String gpus = e.path("gpuMilli").isNumber() && e.path("gpuMilli").asLong() > 0
                    ? BigDecimal.valueOf(e.path("gpuMilli").asLong()).movePointLeft(3).stripTrailingZeros().toPlainString()
                    : e.path("gpuCount").asText();
            t.row(e.path("attempt").asInt(), e.path("nodeId").asText(), JobText.text(e, "gpuModel"), gpus,
                    JobText.text(e, "startedAt"), JobText.text(e, "endedAt"), e.path("gpuSeconds").asText());
            total = total.add(decimal(e.path("gpuSeconds").asText()));
        }
        t.row("TOTAL", "", "", "", "", "", total.toPlainString());
        return t.render();
    }

    private static String hours(String seconds) {
        return decimal(seconds).divide(BigDecimal.valueOf(3600), 3, RoundingMode.HALF_UP).toPlainString();
    }

    private static BigDecimal decimal(String s) {
        try {
            return new BigDecimal(s);
        } catch (RuntimeException e) {
            return BigDecimal.ZERO;
        }
    }
}
