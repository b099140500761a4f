package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = "Cancel jobs (queued or running); their GPUs come back.")
final class CancelCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(arity = "1..*", paramLabel = "JOB")
    List<String> jobs;

    @Override
    public Integer call() {
        int code = ExitCode.OK;
        for (String id : jobs) {
            try {
                JsonNode answer = root.client().delete(ApiClient.Service.ADMISSION, "/v1/jobs/" + ApiClient.encode(id));
                if (root.output().format().machine()) {
                    root.output().show(answer, () -> "");
                } else {
                    root.env().out().println(id + ": cancellation requested (was " + answer.path("state").asText() + ")");
                }
            } catch (CliException e) {
                // the other jobs are still cancelled; the first failure decides the exit code
                // with several jobs, say which one; the API's sentence already names a single one
                e.lines().forEach(l -> root.env().err().println("gantry: " + (jobs.size() > 1 ? id + ": " : "") + l));
                if (code == ExitCode.OK) {
                    code = e.exitCode();
                }
            }
        }
        return code;
    }
}
