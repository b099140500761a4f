package io.gantry.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.api.ApiError;
import io.gantry.cli.jobfile.JobFile;
import io.gantry.cli.output.Output;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

@Command(name = "submit", mixinStandardHelpOptions = true,
        description = {"Submit a job file (YAML, the fields of POST /v1/jobs); prints the job id.",
        "A problem in the file, found here or by the API, is shown with its line (job.yaml:7: tasks[0].gpus: ...)."})
final class SubmitCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(index = "0", paramLabel = "JOB_FILE", description = "the job file; - reads standard input")
    String file;

    @Option(names = {"-w", "--watch"}, description = "then follow the job until it ends (exit code: its outcome)")
    boolean watch;

    @Option(names = "--idempotency-key", paramLabel = "KEY",
            description = "submitting again with the same key gives the same job instead of a second one")
    String idempotencyKey;

    @Option(names = "--after", paramLabel = "JOB", split = ",",
            description = "start only after JOB succeeded (afterok; repeatable, or a,b): added to the file's "
                    + "dependencies, e.g. gantry submit train.yaml --after $(gantry submit prep.yaml)")
    List<String> after;

    @Option(names = "--dry-run", description = "check the file and print the JSON body; submit nothing. With a "
            + "token the API checks it too, as a submission (GPU models, what the cluster holds, queues, budget), "
            + "and stores nothing")
    boolean dryRun;

    @Option(names = "--local", description = "with --dry-run: check the file here only, do not ask the API")
    boolean local;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "with --watch: how often to look (default 2s)")
    Duration interval;

    @Override
    public Integer call() {
        String name = file.equals("-") ? "<stdin>" : file;
        String text = read();
        JobFile job;
        try {
            job = JobFile.parse(name, text);
        } catch (JobFile.Invalid e) {
            throw new CliException(ExitCode.INVALID, e.lines());
        }
        Map<String, Object> body = withAfter(job.body());
        String json;
        try {
            json = ApiClient.JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new CliException(ExitCode.ERROR, "cannot write the job as JSON: " + e.getMessage());
        }
        Output out = root.output();
        if (dryRun) {
            String checked;
            if (local) {
                checked = "checked here only (--local)";
            } else if (root.config().token() == null) {
                checked = "checked here only: without an API token the API's checks (GPU models, what the cluster "
                        + "holds, queues, budget) did not run (`gantry login`, or --local to say so)";
            } else {
                send(name, job, json, "/v1/jobs?dryRun=true");
                checked = "the API checked it: it would be accepted";
            }
            JsonNode tree = ApiClient.JSON.valueToTree(body);
            out.show(tree, () -> Output.json(tree) + "\n");
            root.env().err().println("gantry: dry run, nothing submitted; " + checked);
            return ExitCode.OK;
        }
        JsonNode answer = send(name, job, json, "/v1/jobs");
        String jobId = answer.path("jobId").asText();
        out.show(answer, () -> jobId + "\n");
        if (watch) {
            return new Watcher(root).watch(jobId, interval, null, Watcher.GIVE_UP_AFTER, true);
        }
        return ExitCode.OK;
    }

    /**
     * Posts the job (or its dry run) to admission: the answer; the budget headers on stderr; a refusal of fields
     * pointed at the lines of the file.
     */
    private JsonNode send(String name, JobFile job, String json, String path) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (idempotencyKey != null) {
            headers.put("Idempotency-Key", idempotencyKey);
        }
        try {
            ApiClient.Answer a = root.client().postForAnswer(ApiClient.Service.ADMISSION, path, json, headers);
            // on stderr, so JOB=$(gantry submit ...) still captures only the id
            for (String budget : List.of(BUDGET_HOLD, BUDGET_WARNING)) {
                a.headers().firstValue(budget).ifPresent(m -> root.env().err().println("gantry: budget: " + m));
            }
            return a.body();
        } catch (ApiError e) {
            if (e.status() == 400 && !e.fieldErrors().isEmpty()) {
                // the API's own checks (GPU models, queues, cluster fit) pointed at the lines of the file
                List<String> lines = new ArrayList<>();
                lines.add(name + ": the API refused the job:");
                e.fieldErrors().forEach(f -> lines.add(job.locate(f[0], f[1])));
                throw new CliException(ExitCode.INVALID, lines);
            }
            throw e;
        }
    }

    /** Admission's response headers for a job accepted while its tenant's or queue's money budget is low or out. */
    static final String BUDGET_HOLD = "Gantry-Budget-Hold";
    static final String BUDGET_WARNING = "Gantry-Budget-Warning";

    /** The file's body with {@code --after} jobs appended to its dependencies (afterok). */
    private Map<String, Object> withAfter(Map<String, Object> body) {
        if (after == null || after.isEmpty()) {
            return body;
        }
        Map<String, Object> out = new LinkedHashMap<>(body);
        List<Object> deps = new ArrayList<>(body.get("dependencies") instanceof List<?> l ? l : List.of());
        after.forEach(id -> deps.add(Map.of("jobId", id.trim(), "condition", "afterok")));
        out.put("dependencies", deps);
        return out;
    }

    private String read() {
        try {
            if (file.equals("-")) {
                return new String(root.env().in().readAllBytes(), StandardCharsets.UTF_8);
            }
            return Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new CliException(ExitCode.INVALID, file + ": no such file");
        } catch (java.nio.charset.MalformedInputException e) {
            throw new CliException(ExitCode.INVALID, file + ": is not UTF-8 text");
        } catch (IOException e) {
            throw new CliException(ExitCode.INVALID, file + ": cannot be read: " + e.getMessage());
        }
    }
}
