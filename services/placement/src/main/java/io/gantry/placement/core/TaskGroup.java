package io.gantry.placement.core;

import io.gantry.model.GpuShares;

import java.util.List;
import java.util.Objects;

/**
 * One task group of a gang: {@code replicas} identical tasks, each needing {@code gpus} devices of one model plus
 * CPU (on one NUMA socket, the one of its GPUs) and memory on the same node.
 *
 * <p>Which models are acceptable: {@code gpuModel} when set (required); otherwise {@code gpuModels} in order of
 * preference; otherwise the models of {@code gpuTier} (from the placer's configuration); otherwise any single
 * model. {@code runSeconds} is carried through to the granted placements for the simulated backend.
 *
 * <p>Instead of whole GPUs ({@code gpus = 0}), a task may ask for part of one GPU: {@code gpuMilli} thousandths
 * of its compute (1-999) with {@code gpuMemoryMiB} of its memory (null: the same fraction of the device's
 * memory), or a MIG instance of {@code migProfile} (e.g. {@code 1g.10gb}) on a MIG-capable GPU.
 */
public record TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB,
                        List<String> gpuModels, String gpuTier, Long runSeconds, Integer gpuMilli,
                        Long gpuMemoryMiB, String migProfile) {
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
        if (migProfile != null && migProfile.isBlank()) {
            migProfile = null;
        }
        if (gpuMilli != null && !GpuShares.isFraction(gpuMilli)) {
            throw new IllegalArgumentException("task " + name + ": gpuMilli must be 1..999, was " + gpuMilli);
        }
        if ((gpuMilli != null || migProfile != null) && gpus != 0) {
            throw new IllegalArgumentException("task " + name + ": gpuMilli and migProfile need gpus = 0");
        }
        if (gpuMilli != null && migProfile != null) {
            throw new IllegalArgumentException("task " + name + ": give gpuMilli or migProfile, not both");
        }
        if (gpuMemoryMiB != null && (gpuMilli == null || gpuMemoryMiB < 1)) {
            throw new IllegalArgumentException("task " + name + ": gpuMemoryMiB must be >= 1 and needs gpuMilli");
        }
    }

    public TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB,
                     List<String> gpuModels, String gpuTier, Long runSeconds) {
        this(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, gpuModels, gpuTier, runSeconds, null, null, null);
    }

    public TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB) {
        this(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, List.of(), null, null);
    }

    /** Whether the task asks for part of one GPU (a fraction or a MIG instance) rather than whole GPUs. */
    public boolean shared() {
        return gpuMilli != null || migProfile != null;
    }

    /** Asks for {@code milli} thousandths of one GPU (and {@code memoryMiB} of it, null: the same fraction). */
    public TaskGroup withFraction(int milli, Long memoryMiB) {
        return new TaskGroup(name, replicas, 0, gpuModel, cpuMillis, this.memoryMiB, gpuModels, gpuTier, runSeconds,
                milli, memoryMiB, null);
    }

    public TaskGroup withMig(String profile) {
        return new TaskGroup(name, replicas, 0, gpuModel, cpuMillis, memoryMiB, gpuModels, gpuTier, runSeconds,
                null, null, profile);
    }

    public int totalGpus() {
        return replicas * gpus;
    }

    public TaskGroup withModels(List<String> models) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, models, gpuTier, runSeconds,
                gpuMilli, gpuMemoryMiB, migProfile);
    }

    public TaskGroup withTier(String tier) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, gpuModels, tier, runSeconds,
                gpuMilli, gpuMemoryMiB, migProfile);
    }

    public TaskGroup withRunSeconds(Long seconds) {
        return new TaskGroup(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, gpuModels, gpuTier, seconds,
                gpuMilli, gpuMemoryMiB, migProfile);
    }
}
