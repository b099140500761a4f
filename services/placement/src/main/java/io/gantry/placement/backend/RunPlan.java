package io.gantry.placement.backend;

import java.util.List;
import java.util.Map;

/**
 * What each task of a run executes: its command, environment, working directory, image and mounts (real backends)
 * and how long it runs (simulated backend; null means until cancelled). Taken from the dispatched job spec, keyed by
 * task name. A run started for a dispatch also carries its run token (the tasks prove with it that they belong to
 * this run, e.g. when they report a checkpoint), the job's checkpoint directory, the checkpoint it resumes from and
 * its success policy; a run adopted after a restart knows only what placement recovered of its spec.
 *
 * @param successLeader the task group whose replicas decide the run's success ({@link SuccessRule}), or null: every
 *                      task must exit 0
 */
public record RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir, String resumeFrom,
                      String successLeader) {
    public RunPlan {
        tasks = Map.copyOf(tasks);
    }

    public RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir, String resumeFrom) {
        this(tasks, runToken, checkpointDir, resumeFrom, null);
    }

    public RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir) {
        this(tasks, runToken, checkpointDir, null);
    }

    public RunPlan(Map<String, Task> tasks) {
        this(tasks, null, null);
    }

    public RunPlan withRunToken(String token) {
        return new RunPlan(tasks, token, checkpointDir, resumeFrom, successLeader);
    }

    /** The checkpoint this run resumes from (recovery's choice after an interruption), or null. */
    public RunPlan resumingFrom(String checkpoint) {
        return new RunPlan(tasks, runToken, checkpointDir, checkpoint, successLeader);
    }

    /** The run succeeds once every replica of {@code leader} exited 0 (null: once every task did). */
    public RunPlan withSuccessLeader(String leader) {
        return new RunPlan(tasks, runToken, checkpointDir, resumeFrom, leader);
    }

    /**
     * One task group's part of the plan.
     *
     * @param env        the tenant's environment variables (Gantry's own are added by the backend and win)
     * @param workingDir where the command starts (absolute), or null for the backend's default
     * @param image      the container image (container backends), or null for the configured one
     * @param mounts     volumes in the container (container backends)
     */
    public record Task(List<String> command, Long runSeconds, Map<String, String> env, String workingDir,
                       String image, List<Mount> mounts) {
        public Task {
            command = command == null ? List.of() : List.copyOf(command);
            env = env == null ? Map.of() : Map.copyOf(env);
            mounts = mounts == null ? List.of() : List.copyOf(mounts);
        }

        public Task(List<String> command, Long runSeconds) {
            this(command, runSeconds, Map.of(), null, null, List.of());
        }
    }

    /** A volume at {@code mountPath}: the node's directory {@code hostPath} or the claim {@code claim}. */
    public record Mount(String mountPath, String hostPath, String claim, boolean readOnly) {
    }

    public Task task(String name) {
        Task t = tasks.get(name);
        return t != null ? t : new Task(List.of(), null);
    }
}
