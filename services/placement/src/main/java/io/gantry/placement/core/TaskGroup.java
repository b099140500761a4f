package io.gantry.placement.core;

import java.util.Objects;

/**
 * One task group of a gang: {@code replicas} identical tasks, each needing {@code gpus} devices of one model
 * ({@code gpuModel}, or any single model when null) plus CPU and memory on the same node.
 */
public record TaskGroup(String name, int replicas, int gpus, String gpuModel, int cpuMillis, long memoryMiB) {
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
        if (gpuModel != null && gpuModel.isBlank()) {
            gpuModel = null;
        }
    }

    public int totalGpus() {
        return replicas * gpus;
    }
}
