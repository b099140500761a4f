package io.gantry.placement.backend;

import java.util.List;
import java.util.Map;

/**
 * What each task of a run executes: its command (local backend) and how long it runs (simulated backend; null
 * means until cancelled). Taken from the dispatched job spec, keyed by task name. A run started for a dispatch also
 * carries its run token (the tasks prove with it that they belong to this run, e.g. when they report a checkpoint)
 * and the job's checkpoint directory; a run adopted after a restart knows neither (its tasks already have them).
 */
public record RunPlan(Map<String, Task> tasks, String runToken, String checkpointDir) {
    public RunPlan {
        tasks = Map.copyOf(tasks);
    }

    public RunPlan(Map<String, Task> tasks) {
        this(tasks, null, null);
    }

    public RunPlan withRunToken(String token) {
        return new RunPlan(tasks, token, checkpointDir);
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
