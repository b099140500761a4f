package io.gantry.placement.backend.slurm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the Slurm tools as processes: the configured paths, a clean environment (only {@code PATH}, {@code HOME}
 * and {@code SLURM_CONF}: placement's own variables must not reach Slurm, which would export them to jobs), a
 * timeout after which the process is killed.
 */
public final class ProcessSlurmCommands implements SlurmCommands {
    private static final int MAX_ERROR_CHARS = 500;
    /** Own threads: the common pool has one thread on a 2-core host, and stdout and stderr must drain together. */
    private static final java.util.concurrent.ExecutorService READERS = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "gantry-slurm-output");
        t.setDaemon(true);
        return t;
    });

    private final Map<Tool, String> paths;
    private final String slurmConf;
    private final Duration timeout;

    /**
     * @param paths     executable per tool (missing: its plain name, looked up on PATH)
     * @param slurmConf the {@code SLURM_CONF} to point the tools at, or blank for their default
     */
    public ProcessSlurmCommands(Map<Tool, String> paths, String slurmConf, Duration timeout) {
        this.paths = Map.copyOf(paths);
        this.slurmConf = slurmConf == null ? "" : slurmConf;
        this.timeout = timeout;
    }

    @Override
    public String run(Tool tool, List<String> args, String stdin) throws SlurmCommandException {
        List<String> command = new ArrayList<>();
        command.add(paths.getOrDefault(tool, tool.command()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        Map<String, String> env = pb.environment();
        String path = env.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        String home = env.getOrDefault("HOME", "/");
        env.clear();
        env.put("PATH", path);
        env.put("HOME", home);
        if (!slurmConf.isBlank()) {
            env.put("SLURM_CONF", slurmConf);
        }
        if (stdin == null) {
            pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new SlurmCommandException(tool.command() + " could not start: " + e.getMessage(), false);
        }
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        try {
            if (stdin != null) {
                try (OutputStream in = p.getOutputStream()) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // the tool exited before reading its input: its exit status says why
                }
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new SlurmCommandException(tool.command() + " did not answer within " + timeout.toMillis()
                        + " ms", true);
            }
            String stdout = out.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (p.exitValue() != 0) {
                String stderr = err.get(timeout.toMillis(), TimeUnit.MILLISECONDS).strip();
                throw new SlurmCommandException(tool.command() + " exited with " + p.exitValue() + ": "
                        + (stderr.length() > MAX_ERROR_CHARS ? stderr.substring(0, MAX_ERROR_CHARS) + "..." : stderr),
                        false);
            }
            return stdout;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new SlurmCommandException(tool.command() + " interrupted", true);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            p.destroyForcibly();
            throw new SlurmCommandException(tool.command() + " output could not be read: " + e, true);
        }
    }

    private static CompletableFuture<String> drain(InputStream stream) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }, READERS);
    }
}
