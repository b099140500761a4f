package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;
import io.gantry.cli.output.Table;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "ps", mixinStandardHelpOptions = true,
        description = "List my jobs, newest first (an admin: everyone's, or one tenant's).")
final class PsCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Option(names = {"-s", "--state"}, paramLabel = "STATE",
            description = "only jobs in this state: SUBMITTED, QUEUED, DISPATCHED, RUNNING, INTERRUPTED, "
                    + "SUCCEEDED, FAILED, CANCELLED")
    String state;

    @Option(names = {"-t", "--tenant"}, paramLabel = "TENANT", description = "admins: only this tenant's jobs")
    String tenant;

    @Option(names = {"-n", "--limit"}, paramLabel = "N", defaultValue = "50",
            description = "at most this many jobs (default 50; pages are followed)")
    int limit;

    @Override
    public Integer call() {
        if (limit < 1) {
            throw new CliException(ExitCode.INVALID, "--limit must be at least 1");
        }
        List<JsonNode> jobs = new ArrayList<>();
        String cursor = null;
        do {
            StringBuilder q = new StringBuilder("/v1/jobs?limit=").append(Math.min(1000, limit - jobs.size()));
            if (state != null) {
                q.append("&state=").append(ApiClient.encode(state));
            }
            if (tenant != null) {
                q.append("&tenant=").append(ApiClient.encode(tenant));
            }
            if (cursor != null) {
                q.append("&cursor=").append(ApiClient.encode(cursor));
            }
            JsonNode page = root.client().get(ApiClient.Service.ADMISSION, q.toString());
            page.path("jobs").forEach(jobs::add);
            cursor = JobText.text(page, "nextCursor");
        } while (cursor != null && jobs.size() < limit);
        Output out = root.output();
        out.show(ApiClient.JSON.createObjectNode().set("jobs", ApiClient.JSON.valueToTree(jobs)),
                () -> table(jobs, out.wide(), root.env().clock().instant()));
        return ExitCode.OK;
    }

    static String table(List<JsonNode> jobs, boolean wide, Instant now) {
        Table t = wide
                ? new Table("JOB ID", "NAME", "TENANT", "STATE", "ATTEMPT", "SUBMITTED", "UPDATED", "WAIT", "WAIT MESSAGE")
                : new Table("JOB ID", "NAME", "STATE", "ATTEMPT", "AGE", "WAIT");
        for (JsonNode j : jobs) {
            if (wide) {
                t.row(j.path("jobId").asText(), j.path("name").asText(), j.path("tenant").asText(),
                        j.path("state").asText(), j.path("attempt").asText(), JobText.text(j, "submittedAt"),
                        Output.age(JobText.text(j, "updatedAt"), now) + " ago", JobText.text(j, "waitReason"),
                        JobText.text(j, "waitMessage"));
            } else {
                t.row(j.path("jobId").asText(), j.path("name").asText(), j.path("state").asText(),
                        j.path("attempt").asText(), Output.age(JobText.text(j, "submittedAt"), now),
                        JobText.text(j, "waitReason"));
            }
        }
        return t.size() == 0 ? "no jobs\n" : t.render();
    }
}
