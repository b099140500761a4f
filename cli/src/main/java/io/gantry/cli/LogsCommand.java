package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.api.ApiError;
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
 * A job's output. No API serves task output yet, so this reads the files the local backend writes
 * ({@code <runs-dir>/<job>/<attempt>/<task>-<replica>.log}); it works where placement runs (the dev machine). The
 * simulated backend runs no processes and has no output.
 */
@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"A job's task output (local backend: read from its run directory, so on the "
        + "machine placement runs on).", "Several tasks: each line starts with [task-replica]."})
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

    @Option(names = "--runs-dir", paramLabel = "DIR",
            description = "where the local backend keeps runs (default: runs-dir of the config, else the dev "
                    + "installation's .gantry/runs)")
    Path runsDir;

    private final Map<Path, Long> offsets = new LinkedHashMap<>();
    private final Map<Path, StringBuilder> partial = new LinkedHashMap<>();

    @Override
    public Integer call() {
        JsonNode job = root.job(jobId);
        Path runs = runsDir != null ? runsDir : root.config().runsDir();
        int run = attempt != null ? attempt : Math.max(1, job.path("attempt").asInt());
        Path dir = runs.resolve(job.path("jobId").asText()).resolve(Integer.toString(run));
        while (follow && !Files.isDirectory(dir) && !JobText.terminal(job) && !"RUNNING".equals(JobText.state(job))) {
            // not started yet: wait for its run
            Watcher.pause(Duration.ofMillis(500));
            job = root.job(jobId);
        }
        if (!Files.isDirectory(dir)) {
            throw new CliException(ExitCode.NOT_FOUND, noLogs(job, dir));
        }
        List<Path> files = files(dir);
        if (files.isEmpty()) {
            throw new CliException(ExitCode.NOT_FOUND, "no log of " + (task == null ? "any task" : "task " + task
                    + (replica == null ? "" : " replica " + replica)) + " in " + dir + " (there are: "
                    + String.join(", ", labels(files(dir, true))) + ")");
        }
        boolean prefix = files.size() > 1;
        drain(files, prefix, false);
        while (follow) {
            boolean ended = JobText.terminal(root.job(jobId));
            // after the end, one last read takes what the tasks wrote last
            drain(prefix ? files(dir) : files, prefix, ended);
            if (ended) {
                break;
            }
            Watcher.pause(Duration.ofMillis(500));
        }
        root.env().out().flush();
        return ExitCode.OK;
    }

    private String noLogs(JsonNode job, Path dir) {
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
        return "no output of job " + jobId + " under " + dir + ": the local backend writes it on the machine "
                + "placement runs on; run the CLI there, or set runs-dir in the config (no API serves logs yet)";
    }

    private List<Path> files(Path dir) {
        return files(dir, false);
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

    /** Prints what each file gained since the last read, whole lines only until the end. */
    private void drain(List<Path> files, boolean prefix, boolean last) {
        for (Path f : files) {
            String label = f.getFileName().toString().replaceFirst("\\.log$", "");
            long from = offsets.getOrDefault(f, 0L);
            byte[] bytes;
            try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "r")) {
                long len = raf.length();
                if (len <= from) {
                    bytes = new byte[0];
                } else {
                    bytes = new byte[(int) Math.min(len - from, 8L << 20)];
                    raf.seek(from);
                    raf.readFully(bytes);
                }
            } catch (IOException e) {
                throw new CliException(ExitCode.ERROR, "cannot read " + f + ": " + e.getMessage());
            }
            offsets.put(f, from + bytes.length);
            StringBuilder buf = partial.computeIfAbsent(f, k -> new StringBuilder());
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
