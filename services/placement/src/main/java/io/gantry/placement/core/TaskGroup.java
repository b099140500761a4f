package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/**
 * One task group of a gang: {@code replicas} identical tasks, each needing {@code gpus} devices of one model plus
 * CPU (on one NUMA socket, the one of its GPUs) and memory on the same node.
 *
 * <p>Which models are acceptable: {@code gpuModel} when set (required); otherwise {@code gpuModels} in order of
 * preference; otherwise the models of {@code gpuTier} (from the placer's configuration); otherwise any single
 * model. {@code runSeconds} is carried through to the granted placements for the simulated backend.
 */
public record TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB,
                        List<String> gpuModels, String gpuTier, Long runSeconds) {
    public TaskGroup {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("task name must not be blank");
        }
        if (replicas < 1) {
            throw new IllegalArgumentException("task " + name + ": replicas must be >= 1, was " + replicas);
        }
        if (gpus < 0 || cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("task " + name + ": gpus, cpuMillis and memoryMiB must be >= 0");
        }
        if (gpus > NodeSpec.MAX_GPUS) {
            throw new IllegalArgumentException("task " + name + ": at most " + NodeSpec.MAX_GPUS + " GPUs per task");
        }
        if (gpuModel != null && gpuModel.isBlank()) {
            gpuModel = null;
        }
        if (gpuTier != null && gpuTier.isBlank()) {
            gpuTier = null;
        }
        gpuModels = gpuModels == null ? List.of()
                : gpuModels.stream().filter(m -> m != null && !m.isBlank()).distinct().toList();
    }

    public TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB) {
        this(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, List.of(), null, null);
    }

    public int totalGpus() {
        return replicas * gpus;
    }

    public TaskGroup withModels(List<String> models) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, models, gpuTier, runSeconds);
    }

    public TaskGroup withTier(String tier) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, gpuModels, tier, runSeconds);
    }

    public TaskGroup withRunSeconds(Long seconds) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, gpuModels, gpuTier, seconds);
    }
}
