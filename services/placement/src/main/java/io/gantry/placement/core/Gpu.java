package io.gantry.placement.core;

import java.util.Objects;

/** One GPU of a node, by its node-local index (what {@code CUDA_VISIBLE_DEVICES} names). */
public record Gpu(int index, String model, long memoryMiB) {
    public Gpu {
        Objects.requireNonNull(model, "model");
        if (index < 0) {
            throw new IllegalArgumentException("gpu index must be >= 0, was " + index);
        }
        if (model.isBlank()) {
            throw new IllegalArgumentException("gpu model must not be blank");
        }
        if (memoryMiB < 0) {
            throw new IllegalArgumentException("gpu memoryMiB must be >= 0, was " + memoryMiB);
        }
    }
}
