package io.gantry.placement.backend;

import java.util.List;
import java.util.Map;

/**
 * What each task of a run executes: its command (local backend) and how long it runs (simulated backend; null
 * means until cancelled). Taken from the dispatched job spec, keyed by task name. A run started for a dispatch also
 * carries its run token (the tasks prove with it that they belong to this run, e.g. when they report a checkpoint)
 * the job's checkpoint directory and the checkpoint it resumes from; a run adopted after a restart knows none of them
 * (its tasks already have them).
 */
public record RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir, String resumeFrom) {
    public RunPlan {
        tasks = Map.copyOf(tasks);
    }

    public RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir) {
        this(tasks, runToken, checkpointDir, null);
    }

    public RunPlan(Map<String, Task> tasks) {
        this(tasks, null, null);
    }

    public RunPlan withRunToken(String token) {
        return new RunPlan(tasks, token, checkpointDir, resumeFrom);
    }

    /** The checkpoint this run resumes from (recovery's choice after an interruption), or null. */
    public RunPlan resumingFrom(String checkpoint) {
        return new RunPlan(tasks, runToken, checkpointDir, checkpoint);
    }

    public record Task(List<String> command, Long runSeconds) {
        public Task {
            command = command == null ? List.of() : List.copyOf(command);
        }
    }

    public Task task(String name) {
        Task t = tasks.get(name);
        return t != null ? t : new Task(List.of(), null);
    }
}
