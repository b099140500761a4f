package io.gantry.placement.core;

import java.util.Objects;

/**
 * Free whole GPUs of one model on eligible nodes, and the most free on any one of them: a necessary condition
 * for a parked gang to fit (a task of {@code g} GPUs of this model needs {@code largestFreeOnNode >= g}).
 */
public record FreeCapacity(String gpuModel, int freeGpus, int largestFreeOnNode) {
    public FreeCapacity {
        Objects.requireNonNull(gpuModel, "gpuModel");
    }
}
