package io.gantry.placement.backend;

import java.util.List;
import java.util.Map;

/**
 * What each task of a run executes: its command (local backend) and how long it runs (simulated backend; null
 * means until cancelled). Taken from the dispatched job spec, keyed by task name.
 */
public record RunPlan(Map<String, Task> tasks) {
    public RunPlan {
        tasks = Map.copyOf(tasks);
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
