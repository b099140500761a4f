package io.gantry.admission.core;

import java.util.List;

/**
 * One task group of a job: {@code replicas} identical tasks, each needing {@code gpus} GPUs (of
 * {@code gpuModel}, one of {@code gpuModels} in that order of preference, or of tier {@code gpuTier}; at most one
 * of the three), {@code cpuMillis} millicores and {@code memoryMiB}.
 *
 * <p>Instead of whole GPUs ({@code gpus = 0}) a task may ask for part of one: {@code gpuMilli} thousandths of a
 * GPU (1-999) with {@code gpuMemoryMiB} of its memory (null: the same fraction), or a MIG instance
 * {@code migProfile} (e.g. {@code 1g.10gb}).
 *
 * @param runSeconds how long a task runs on the simulated backend; null lets the backend choose
 */
public record TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                       long memoryMiB, Long runSeconds, List<String> gpuModels, String gpuTier, Integer gpuMilli,
                       Long gpuMemoryMiB, String migProfile) {

    public TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                    long memoryMiB, Long runSeconds, List<String> gpuModels, String gpuTier) {
        this(name, replicas, command, gpus, gpuModel, cpuMillis, memoryMiB, runSeconds, gpuModels, gpuTier, null,
                null, null);
    }

    public TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                    long memoryMiB, Long runSeconds) {
        this(name, replicas, command, gpus, gpuModel, cpuMillis, memoryMiB, runSeconds, List.of(), null);
    }

    public TaskSpec {
        command = List.copyOf(command);
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    }
}
