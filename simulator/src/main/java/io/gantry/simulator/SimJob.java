package io.gantry.simulator;

import io.gantry.model.GpuShares;

import java.util.List;

/**
 * One job of a workload: who submits it, how many GPUs its gang needs, when it arrives and how long it runs once
 * placed (virtual milliseconds from the start of the replay).
 *
 * <p>{@code gpuMilli} (1-999, null: whole GPUs) asks for that many thousandths of one GPU instead ({@code gpus} is
 * then 1: the job touches one device); {@code cpuMillis} and {@code memoryMiB} are asked per task;
 * {@code gpuModels} (empty: any) are the acceptable GPU models; {@code topology} (null: anywhere) is the gang's
 * preferred topology level (a placement {@code TopologyLevel} name such as {@code RACK}); {@code timeLimitSeconds}
 * (null: none) is the spec's time limit, after which placement stops the run as the production system does.
 */
public record SimJob(String id, String tenant, int gpus, long submitMillis, long durationMillis, Integer gpuMilli,
                     int cpuMillis, long memoryMiB, List<String> gpuModels, String topology, Long timeLimitSeconds) {
    public SimJob {
        if (gpus < 1) {
            throw new IllegalArgumentException("job " + id + ": gpus must be >= 1, was " + gpus);
        }
        if (submitMillis < 0 || durationMillis < 1) {
            throw new IllegalArgumentException("job " + id + ": submit must be >= 0 and duration >= 1 ms");
        }
        if (gpuMilli != null && (!GpuShares.isFraction(gpuMilli) || gpus != 1)) {
            throw new IllegalArgumentException("job " + id + ": gpuMilli must be 1..999 with gpus = 1");
        }
        if (timeLimitSeconds != null && timeLimitSeconds < 1) {
            throw new IllegalArgumentException("job " + id + ": time limit must be >= 1 s");
        }
        if (cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("job " + id + ": cpuMillis and memoryMiB must be >= 0");
        }
        gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    }

    public SimJob(String id, String tenant, int gpus, long submitMillis, long durationMillis, Integer gpuMilli,
                  int cpuMillis, long memoryMiB, List<String> gpuModels, String topology) {
        this(id, tenant, gpus, submitMillis, durationMillis, gpuMilli, cpuMillis, memoryMiB, gpuModels, topology, null);
    }

    /** Whole GPUs, anywhere, no CPU or memory asked. */
    public SimJob(String id, String tenant, int gpus, long submitMillis, long durationMillis) {
        this(id, tenant, gpus, submitMillis, durationMillis, null, 0, 0, List.of(), null);
    }

    /** Thousandths of a GPU the job holds while it runs (the shared rule): 1000 per whole GPU, or its share. */
    public long milliGpus() {
        return gpuMilli != null ? GpuShares.perTask(0, gpuMilli, null) : GpuShares.perTask(gpus, null, null);
    }

    public boolean fractional() {
        return gpuMilli != null;
    }
}
