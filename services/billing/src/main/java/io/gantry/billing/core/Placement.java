package io.gantry.billing.core;

/**
 * One task's share of an allocation, as billing needs it.
 *
 * @param gpuModel the GPU model, or {@code null} for a CPU-only task
 * @param gpuCount how many GPUs the task held (the length of its GPU index list)
 */
public record Placement(String nodeId, String gpuModel, int gpuCount) {
    public Placement {
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("placements[].nodeId must not be blank");
        }
        if (gpuCount < 0) {
            throw new IllegalArgumentException("placements[].gpuCount must be >= 0, was " + gpuCount);
        }
        if (gpuCount > 0 && (gpuModel == null || gpuModel.isBlank())) {
            throw new IllegalArgumentException("placements[].gpuModel is required when the task holds GPUs");
        }
    }
}
