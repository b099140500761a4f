package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code gantry suspend} and {@code gantry resume}: one request per job, like {@code cancel}. */
abstract class SuspendCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(arity = "1..*", paramLabel = "JOB")
    List<String> jobs;

    /** {@code suspend} or {@code resume}: the API's path segment. */
    abstract String action();

    abstract String done(JsonNode answer);

    @Override
    public Integer call() {
        int code = ExitCode.OK;
        for (String id : jobs) {
            try {
                JsonNode answer = root.client().post(ApiClient.Service.ADMISSION, "/v1/jobs/" + ApiClient.encode(id)
                        + "/" + action(), "{}", Map.of());
                if (root.output().format().machine()) {
                    root.output().show(answer, () -> "");
                } else {
                    root.env().out().println(id + ": " + done(answer) + " (" + answer.path("state").asText() + ")");
                }
            } catch (CliException e) {
                e.lines().forEach(l -> root.env().err().println("gantry: " + (jobs.size() > 1 ? id + ": " : "") + l));
                if (code == ExitCode.OK) {
                    code = e.exitCode();
                }
            }
        }
        return code;
    }

    @Command(name = "suspend", mixinStandardHelpOptions = true,
            description = {"Suspend jobs: a queued job stays queued and is not started; a running one is stopped "
                    + "like a preemption (grace period, then requeued from its newest checkpoint, not a failure) and "
                    + "stays suspended. `gantry resume` lets it run again."})
    static final class Suspend extends SuspendCommand {
        @Override
        String action() {
            return "suspend";
        }

        @Override
        String done(JsonNode answer) {
            return "suspended";
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true,
            description = "Resume suspended jobs: each gets its place back in its queue (its submit time is kept).")
    static final class Resume extends SuspendCommand {
        @Override
        String action() {
            return "resume";
        }

        @Override
        String done(JsonNode answer) {
            return "resumed";
        }
    }
}
