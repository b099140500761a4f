package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

@Command(name = "queues", mixinStandardHelpOptions = true,
        description = "My queues (an admin: all): quota in use, pending and parked jobs, fair share.")
final class QueuesCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Override
    public Integer call() {
        JsonNode answer = root.client().get(ApiClient.Service.QUEUE, "/v1/queues");
        root.output().show(answer, () -> table(answer, root.output().wide()));
        return ExitCode.OK;
    }

    static String table(JsonNode answer, boolean wide) {
        Table t = wide
                ? new Table("QUEUE", "TENANT", "COHORT", "GPUS USED/QUOTA", "PENDING", "PARKED", "DISPATCHED", "SHARE",
                "FAIR SHARE", "FLAVOURS (used/nominal, borrowed)")
                : new Table("QUEUE", "TENANT", "COHORT", "GPUS USED/QUOTA", "PENDING", "PARKED", "DISPATCHED");
        for (JsonNode q : answer.path("queues")) {
            String gpus = JobText.amount(q, "reservedGpus") + "/" + JobText.amount(q, "quotaGpus");
            if (wide) {
                List<String> flavours = new ArrayList<>();
                for (JsonNode f : q.path("flavours")) {
                    flavours.add(f.path("flavour").asText() + " " + JobText.amount(f, "used") + "/"
                            + JobText.amount(f, "nominal") + (f.path("borrowed").asDouble() > 0
                            ? " +" + JobText.amount(f, "borrowed") : ""));
                }
                t.row(q.path("name").asText(), q.path("tenant").asText(), JobText.text(q, "cohort"), gpus,
                        q.path("pending").asInt(), q.path("parked").asInt(), q.path("dispatched").asInt(),
                        String.format(Locale.ROOT, "%.3f", q.path("weightedShare").asDouble()),
                        String.format(Locale.ROOT, "%.3f", q.path("fairShare").asDouble()), String.join(", ", flavours));
            } else {
                t.row(q.path("name").asText(), q.path("tenant").asText(), JobText.text(q, "cohort"), gpus,
                        q.path("pending").asInt(), q.path("parked").asInt(), q.path("dispatched").asInt());
            }
        }
        return t.size() == 0 ? "no queues\n" : t.render();
    }
}
