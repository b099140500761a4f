package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.GangEnvironment;
import io.gantry.placement.backend.LocalBackend;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How one task replica of an allocation becomes one Slurm batch job: its name carries the allocation id and the
 * replica's position (so a restarted placement finds it), its options pin it to Gantry's node with the GPU count
 * of Gantry's model, and its script sets Gantry's exact GPU indices and run identity before it {@code exec}s the
 * task's command (no shell interpretation of the command's words). The script goes to sbatch on stdin, so the run
 * token is never on a command line.
 */
public final class SlurmSubmission {
    /** Every job Gantry submits is named {@code gantry-<allocationId>-<placement index>}. */
    public static final String JOB_PREFIX = "gantry-";
    /** A time limit longer than this is none (the core's "no limit in practice"). */
    private static final long MAX_TIME_LIMIT_SECONDS = 365L * 24 * 3600 * 100;

    private SlurmSubmission() {
    }

    /** The allocation id and placement index a Gantry job name carries, or null for any other name. */
    public record Identity(String allocationId, int index) {
    }

    public static String jobName(String allocationId, int index) {
        return JOB_PREFIX + allocationId + "-" + index;
    }

    public static Identity identity(String jobName) {
        if (jobName == null || !jobName.startsWith(JOB_PREFIX)) {
            return null;
        }
        int dash = jobName.lastIndexOf('-');
        if (dash <= JOB_PREFIX.length()) {
            return null;
        }
        try {
            return new Identity(jobName.substring(JOB_PREFIX.length(), dash), Integer.parseInt(jobName.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Where a replica's job log goes. */
    public static Path logFile(Path workDir, Allocation a, PlacedTask p) {
        return runDir(workDir, a).resolve(safe(p.task()) + "-" + p.replica() + ".log");
    }

    public static Path runDir(Path workDir, Allocation a) {
        return workDir.resolve(safe(a.jobId())).resolve(Integer.toString(a.attempt()));
    }

    /**
     * The sbatch options for placement {@code index} of {@code a}; {@code gresType} is the node's gres type of the
     * task's model (null: untyped gres).
     */
    public static List<String> options(Allocation a, int index, String gresType, SlurmConfig config) {
        PlacedTask p = a.placements().get(index);
        List<String> o = new ArrayList<>();
        o.add("--parsable");
        o.add("--job-name=" + jobName(a.allocationId(), index));
        o.add("--comment=gantry job=" + enc(a.jobId()) + " attempt=" + a.attempt() + " task=" + enc(p.task())
                + " replica=" + p.replica());
        o.add("--partition=" + config.partition());
        if (!config.account().isEmpty()) {
            o.add("--account=" + config.account());
        }
        o.add("--nodelist=" + p.nodeId());
        o.add("--nodes=1");
        o.add("--ntasks=1");
        o.add("--cpus-per-task=" + Math.max(1, (p.cpuMillis() + 999) / 1000));
        // always explicit: without it Slurm may charge the whole node's memory and hold back Gantry's next task
        o.add("--mem=" + Math.max(1, p.memoryMiB()) + "M");
        if (!p.gpuIndices().isEmpty()) {
            o.add("--gres=" + config.gresName() + (gresType == null ? "" : ":" + gresType) + ":" + p.gpuIndices().size());
        }
        // Gantry decides what happens after a node failure (recovery), not Slurm's requeue
        o.add("--no-requeue");
        // placement's own environment (and anything secret in it) must not reach the job
        o.add("--export=NONE");
        o.add("--output=" + logFile(config.workDir(), a, p));
        o.add("--open-mode=append");
        o.add("--chdir=" + runDir(config.workDir(), a));
        Long limit = a.timeLimitSeconds();
        if (limit != null && limit < MAX_TIME_LIMIT_SECONDS) {
            // a backstop for when placement is down at the limit: Gantry itself stops the run at the limit
            o.add("--time=" + ((limit + 59) / 60 + 1));
        }
        return o;
    }

    /**
     * The batch script: the tenant's variables, Gantry's identity, devices and the gang's rendezvous
     * ({@link GangEnvironment}: rank 0's node as {@code MASTER_ADDR}, a port derived from the allocation id), then
     * into the spec's working directory (a missing one fails the task with a line in its log, rather than Slurm's
     * silent fallback to /tmp), then {@code exec} of the command. An image or mounts in the spec are not used (the
     * command runs on the node itself): the log's first lines say so.
     */
    public static String script(Allocation a, int index, List<String> command, RunPlan plan, SlurmConfig config) {
        PlacedTask p = a.placements().get(index);
        RunPlan.Task task = plan.task(p.task());
        Map<String, String> gantry = new java.util.LinkedHashMap<>(LocalBackend.environment(a, p,
                runDir(config.workDir(), a), ""));
        // the job keeps the PATH and HOME its user gets from Slurm
        gantry.remove("PATH");
        gantry.remove("HOME");
        if (!config.exactGpuIndices() && p.gpuShares().isEmpty()) {
            gantry.remove("CUDA_VISIBLE_DEVICES");
        }
        gantry.putAll(GangEnvironment.rendezvous(a, p, GangEnvironment.nodeHosts(a),
                GangEnvironment.derivedPort(a.allocationId())));
        gantry.putAll(LocalBackend.runIdentity(plan, config.apiUrl()));
        Map<String, String> env = GangEnvironment.merge(task.env(), gantry);
        StringBuilder s = new StringBuilder("#!/bin/sh\n");
        s.append("# Gantry: job ").append(enc(a.jobId())).append(" attempt ").append(a.attempt()).append(", task ")
                .append(enc(p.task())).append(" replica ").append(p.replica()).append('\n');
        String note = LocalBackend.hostNote(SlurmBackend.NAME, task);
        if (!note.isEmpty()) {
            note.lines().forEach(line -> s.append("echo ").append(quote(line)).append('\n'));
        }
        env.forEach((k, v) -> s.append("export ").append(k).append('=').append(quote(v)).append('\n'));
        if (task.workingDir() != null) {
            s.append("cd ").append(quote(task.workingDir())).append(" || { echo ")
                    .append(quote("gantry: cannot enter the working directory " + task.workingDir()))
                    .append(" >&2; exit 1; }\n");
        }
        s.append("exec");
        for (String word : command) {
            s.append(' ').append(quote(word));
        }
        s.append('\n');
        return s.toString();
    }

    /** A word for sh, taken literally: single-quoted, a quote inside as {@code '\''}. */
    static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    private static String enc(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** A path segment from a tenant's name: no separators, no dot-dot. */
    private static String safe(String value) {
        String s = value.replaceAll("[^A-Za-z0-9._-]", "_");
        return s.isEmpty() || s.startsWith(".") ? "_" + s : s;
    }
}
