package io.gantry.admission.core;

import java.util.List;

/**
 * One task group of a job: {@code replicas} identical tasks, each needing {@code gpus} GPUs (of
 * {@code gpuModel}, if given), {@code cpuMillis} millicores and {@code memoryMiB}.
 *
 * @param runSeconds how long a task runs on the simulated backend; null lets the backend choose
 */
public record TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                       long memoryMiB, Long runSeconds) {
    public TaskSpec {
        command = List.copyOf(command);
    }
}
