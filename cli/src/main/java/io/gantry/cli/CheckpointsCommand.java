package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.time.Instant;
import java.util.concurrent.Callable;

@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = "The checkpoints a job's runs reported, newest first.")
final class CheckpointsCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(index = "0", paramLabel = "JOB")
    String jobId;

    @Override
    public Integer call() {
        JsonNode answer = root.client().get(ApiClient.Service.ADMISSION,
                "/v1/jobs/" + ApiClient.encode(jobId) + "/checkpoints");
        root.output().show(answer, () -> table(answer, root.env().clock().instant()));
        return ExitCode.OK;
    }

    static String table(JsonNode answer, Instant now) {
        Table t = new Table("ATTEMPT", "STEP", "PATH", "SIZE", "SAVE", "COMMITTED");
        for (JsonNode c : answer.path("checkpoints")) {
            t.row(c.path("attempt").asInt(), c.path("step").asText(), c.path("path").asText(),
                    c.path("sizeBytes").isNumber() ? Output.bytes(c.path("sizeBytes").asLong()) : null,
                    c.path("saveSeconds").isNumber() ? c.path("saveSeconds").asText() + "s" : null,
                    Output.age(JobText.text(c, "committedAt"), now) + " ago");
        }
        return t.size() == 0 ? "no checkpoints reported\n" : t.render();
    }
}
