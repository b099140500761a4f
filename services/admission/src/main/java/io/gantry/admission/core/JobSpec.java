package io.gantry.admission.core;

import java.util.List;

/** A validated job spec: a gang of task groups that is placed whole or not at all. */
public record JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks) {
    public JobSpec {
        tasks = List.copyOf(tasks);
    }

    /** GPUs the whole gang holds while it runs. */
    public int totalGpus() {
        return tasks.stream().mapToInt(t -> t.gpus() * t.replicas()).sum();
    }
}
