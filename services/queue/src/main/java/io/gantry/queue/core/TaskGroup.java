package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.util.List;
import java.util.Objects;

/**
 * One task group of a job spec, as the queue decides on it: how many tasks, the GPUs (or part of one) each takes, the
 * models it accepts, its CPU and memory. The rest of the group travels in the spec the adapter forwards.
 *
 * @param gpuModel   the one model the group must run on (chosen by the queue when it named none), or null
 * @param gpuModels  the models it accepts (empty: any)
 * @param gpuMilli   a fraction of one GPU in thousandths (with {@code gpus} = 0), or null
 * @param migProfile a MIG profile (with {@code gpus} = 0), or null
 */
public record TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB,
                        List<String> gpuModels, String gpuTier, Integer gpuMilli, String migProfile) {

    /** Whole GPUs of any model. */
    public TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB) {
        this(name, replicas, gpus, gpuModel, cpuMillis, memoryMiB, List.of(), null, null, null);
    }

    /** Whether each task takes part of one GPU (a fraction or a MIG instance) rather than whole GPUs. */
    public boolean shared() {
        return gpuMilli != null || migProfile != null;
    }

    /**
     * What each task counts against quota, in thousandths of a GPU, by the shared rule ({@link GpuShares}): 1000 per
     * whole GPU, a fraction its {@code gpuMilli}, a MIG instance its compute slices over 7. The same amount
     * placement holds and billing charges.
     */
    public long quotaMilli() {
        return GpuShares.perTask(gpus, gpuMilli, migProfile);
    }


    /** The same group placed on {@code model} (the flavour its quota was reserved on). */
    TaskGroup onModel(String model) {
        return new TaskGroup(name, replicas, gpus, model, cpuMillis, memoryMiB, List.of(), gpuTier, gpuMilli,
                migProfile);
    }

    public TaskGroup {
        Objects.requireNonNull(name, "tasks[].name");
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
        if (gpuMilli != null && (!GpuShares.isFraction(gpuMilli) || gpus != 0)) {
            throw new IllegalArgumentException("tasks[" + name + "].gpuMilli must be 1-999 with gpus = 0, was "
                    + gpuMilli);
        }
        if (migProfile != null && (gpus != 0 || gpuMilli != null)) {
            throw new IllegalArgumentException("tasks[" + name + "].migProfile needs gpus = 0 and no gpuMilli");
        }
        if (migProfile != null && !GpuShares.isMigProfile(migProfile)) {
            throw new IllegalArgumentException("tasks[" + name + "].migProfile must be named <slices>g.<memory>gb, was "
                    + migProfile);
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("tasks[" + name + "].memoryMiB must be >= 0, was " + memoryMiB);
        }
    }
}
