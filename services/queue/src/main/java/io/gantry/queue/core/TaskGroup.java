package io.gantry.queue.core;

import java.util.List;
import java.util.Objects;

/**
 * One task group of a job spec, as the queue keeps it: the queue only reads {@code replicas * gpus}, but it carries
 * the whole group because {@link QueueFact.JobDispatched} hands the spec on to placement.
 */
public record TaskGroup(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                        long memoryMiB, Long runSeconds, List<String> gpuModels, String gpuTier) {

    public TaskGroup(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                     long memoryMiB, Long runSeconds) {
        this(name, replicas, command, gpus, gpuModel, cpuMillis, memoryMiB, runSeconds, List.of(), null);
    }

    public TaskGroup {
        Objects.requireNonNull(name, "tasks[].name");
        command = List.copyOf(Objects.requireNonNull(command, "tasks[].command"));
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
        if (replicas < 1) {
            throw new IllegalArgumentException("tasks[" + name + "].replicas must be >= 1, was " + replicas);
        }
        if (gpus < 0) {
            throw new IllegalArgumentException("tasks[" + name + "].gpus must be >= 0, was " + gpus);
        }
        if (cpuMillis < 0) {
            throw new IllegalArgumentException("tasks[" + name + "].cpuMillis must be >= 0, was " + cpuMillis);
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("tasks[" + name + "].memoryMiB must be >= 0, was " + memoryMiB);
        }
    }
}
