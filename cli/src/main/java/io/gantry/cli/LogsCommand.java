package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.api.ApiError;
import io.gantry.cli.output.Output;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * A job's output, from placement's {@code GET /v1/jobs/{id}/logs} (the local backend keeps it; the simulated one runs
 * no processes), or, with {@code --runs-dir}, straight from the local backend's files
 * ({@code <runs-dir>/<job>/<attempt>/<task>-<replica>.log}) on the machine placement runs on.
 */
@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"A job's task output (from placement's API; --runs-dir reads the local backend's files "
        + "directly).", "Several tasks: each line starts with [task-replica]."})
final class LogsCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(index = "0", paramLabel = "JOB")
    String jobId;

    @Option(names = "--task", paramLabel = "TASK", description = "only this task group")
    String task;

    @Option(names = "--replica", paramLabel = "N", description = "only this replica (with --task: one log)")
    Integer replica;

    @Option(names = "--attempt", paramLabel = "N", description = "this run (default: the current one)")
    Integer attempt;

    @Option(names = {"-f", "--follow"}, description = "keep printing new output until the job ends")
    boolean follow;

    @Option(names = "--runs-dir", paramLabel = "DIR", arity = "0..1", fallbackValue = "",
            description = "read the local backend's files under DIR (alone: the config's runs-dir) instead of "
                    + "asking the API; on the machine placement runs on")
    Path runsDir;

    private final Map<String, StringBuilder> partial = new LinkedHashMap<>();
    /** The run whose logs are read. */
    private int run;

    /** Where the output comes from: placement's API, or the local backend's files. */
    private interface Source {
        /** The labels ({@code task-replica}) of the logs wanted, sorted; empty when the run has none (yet). */
        List<String> labels();

        /** What log {@code label} gained since the last read. */
        byte[] read(String label);
    }

    @Override
    public Integer call() {
        JsonNode job = root.job(jobId);
        while (follow && !JobText.terminal(job) && job.path("placements").isEmpty()
                && !"RUNNING".equals(JobText.state(job))) {
            // not started yet: wait for its run
            Watcher.pause(Duration.ofMillis(500));
            job = root.job(jobId);
        }
        run = attempt != null ? attempt : Math.max(1, job.path("attempt").asInt());
        Path runs = runsDir == null || !runsDir.toString().isEmpty() ? runsDir : root.config().runsDir();
        Source source = runs != null ? files(runs.resolve(job.path("jobId").asText())
                .resolve(Integer.toString(run))) : api(job, run);
        List<String> labels = source.labels();
        if (labels.isEmpty()) {
            throw new CliException(ExitCode.NOT_FOUND, "no log of " + (task == null ? "any task" : "task " + task
                    + (replica == null ? "" : " replica " + replica)) + " in run " + run + " of job " + jobId);
        }
        boolean prefix = labels.size() > 1;
        drain(source, labels, prefix, false);
        while (follow) {
            boolean ended = JobText.terminal(root.job(jobId));
            // after the end, one last read takes what the tasks wrote last
            drain(source, prefix ? source.labels() : labels, prefix, ended);
            if (ended) {
                break;
            }
            Watcher.pause(Duration.ofMillis(500));
        }
        root.env().out().flush();
        return ExitCode.OK;
    }

    /** Placement's API: the run's logs, then each one from the offset it was read to. */
    private Source api(JsonNode job, int run) {
        String base = "/v1/jobs/" + job.path("jobId").asText() + "/logs?attempt=" + run;
        try {
            root.client().get(ApiClient.Service.PLACEMENT, base);
        } catch (ApiError e) {
            if (e.status() == 404) {
                throw new CliException(ExitCode.NOT_FOUND, noLogs(job, e.lines().get(0)));
            }
            throw e;
        }
        Map<String, Long> at = new LinkedHashMap<>();
        return new Source() {
            @Override
            public List<String> labels() {
                List<String> out = new ArrayList<>();
                for (JsonNode l : root.client().get(ApiClient.Service.PLACEMENT, base).path("logs")) {
                    String t = l.path("task").asText();
                    int r = l.path("replica").asInt();
                    if ((task == null || task.equals(t)) && (replica == null || replica == r)) {
                        out.add(t + "-" + r);
                    }
                }
                return out.stream().sorted().toList();
            }

            @Override
            public byte[] read(String label) {
                int dash = label.lastIndexOf('-');
                java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
                while (true) {
                    long from = at.getOrDefault(label, 0L);
                    JsonNode piece = root.client().get(ApiClient.Service.PLACEMENT, base + "&task="
                            + java.net.URLEncoder.encode(label.substring(0, dash), StandardCharsets.UTF_8)
                            + "&replica=" + label.substring(dash + 1) + "&offset=" + from);
                    long next = piece.path("nextOffset").asLong(from);
                    got.writeBytes(piece.path("text").asText("").getBytes(StandardCharsets.UTF_8));
                    at.put(label, next);
                    if (next <= from || next >= piece.path("sizeBytes").asLong(next)) {
                        return got.toByteArray();
                    }
                }
            }
        };
    }

    /** The local backend's files of one run. */
    private Source files(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new CliException(ExitCode.NOT_FOUND, "no run directory " + dir);
        }
        Map<String, Long> at = new LinkedHashMap<>();
        return new Source() {
            @Override
            public List<String> labels() {
                return LogsCommand.labels(files(dir, false));
            }

            @Override
            public byte[] read(String label) {
                Path f = dir.resolve(label + ".log");
                long from = at.getOrDefault(label, 0L);
                try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "r")) {
                    long len = raf.length();
                    byte[] bytes = len <= from ? new byte[0] : new byte[(int) Math.min(len - from, 8L << 20)];
                    raf.seek(from);
                    raf.readFully(bytes);
                    at.put(label, from + bytes.length);
                    return bytes;
                } catch (IOException e) {
                    throw new CliException(ExitCode.ERROR, "cannot read " + f + ": " + e.getMessage());
                }
            }
        };
    }

    private String noLogs(JsonNode job, String apiSentence) {
        Set<String> nodes = new TreeSet<>();
        job.path("placements").forEach(p -> nodes.add(p.path("node").asText()));
        try {
            for (JsonNode n : root.client().get(ApiClient.Service.PLACEMENT, "/v1/nodes")) {
                if (nodes.contains(n.path("nodeId").asText()) && "simulated".equals(n.path("backend").asText())) {
                    return "job " + jobId + " runs on the simulated backend, which runs no processes and keeps no "
                            + "output (`./gantry dev --backend local` runs commands on this machine)";
                }
            }
        } catch (ApiError e) {
            // the backend is only a better explanation
        }
        if (!JobText.terminal(job) && job.path("placements").isEmpty()) {
            return "job " + jobId + " has not started yet (" + JobText.state(job) + "); `gantry logs -f` waits for it";
        }
        return apiSentence;
    }

    private List<Path> files(Path dir, boolean all) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".log"))
                    .filter(p -> all || wanted(p.getFileName().toString()))
                    .sorted().toList();
        } catch (IOException e) {
            throw new CliException(ExitCode.ERROR, "cannot list " + dir + ": " + e.getMessage());
        }
    }

    /** {@code <task>-<replica>.log}; task names may contain '-', the replica is the digits after the last one. */
    private boolean wanted(String file) {
        String label = file.substring(0, file.length() - ".log".length());
        int dash = label.lastIndexOf('-');
        if (dash < 0) {
            return task == null && replica == null;
        }
        String t = label.substring(0, dash);
        String r = label.substring(dash + 1);
        return (task == null || task.equals(t)) && (replica == null || r.equals(Integer.toString(replica)));
    }

    private static List<String> labels(List<Path> files) {
        List<String> out = new ArrayList<>();
        files.forEach(f -> out.add(f.getFileName().toString().replaceFirst("\\.log$", "")));
        return out;
    }

    /**
     * Prints what each log gained since the last read, whole lines only until the end; with {@code -o json} (or
     * yaml) one object per log and read instead: {@code {jobId, attempt, task, replica, text}}.
     */
    private void drain(Source source, List<String> labels, boolean prefix, boolean last) {
        for (String label : labels) {
            byte[] bytes = source.read(label);
            if (root.output().format().machine()) {
                if (bytes.length > 0) {
                    int dash = label.lastIndexOf('-');
                    com.fasterxml.jackson.databind.node.ObjectNode piece = ApiClient.JSON.createObjectNode()
                            .put("jobId", jobId).put("attempt", run)
                            .put("task", dash < 0 ? label : label.substring(0, dash))
                            .put("replica", dash < 0 ? 0 : Integer.parseInt(label.substring(dash + 1)))
                            .put("text", new String(bytes, StandardCharsets.UTF_8));
                    root.env().out().print(root.output().format() == Output.Format.JSON
                            ? Output.jsonLine(piece) + "\n" : "---\n" + Output.yaml(piece));
                }
                continue;
            }
            StringBuilder buf = partial.computeIfAbsent(label, k -> new StringBuilder());
            buf.append(new String(bytes, StandardCharsets.UTF_8));
            int nl;
            while ((nl = buf.indexOf("\n")) >= 0) {
                root.env().out().println((prefix ? "[" + label + "] " : "") + buf.substring(0, nl));
                buf.delete(0, nl + 1);
            }
            if ((last || !follow) && buf.length() > 0) {
                root.env().out().println((prefix ? "[" + label + "] " : "") + buf);
                buf.setLength(0);
            }
        }
        root.env().out().flush();
    }
}
