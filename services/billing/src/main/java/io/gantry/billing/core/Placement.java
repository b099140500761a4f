package io.gantry.billing.core;

/**
 * One task's share of an allocation, as billing needs it.
 *
 * @param gpuModel the GPU model, or {@code null} for a CPU-only task
 * @param gpuCount how many whole GPUs the task held (the length of its GPU index list)
 * @param gpuMilli what the task held in thousandths of a GPU: 1000 per whole GPU plus each fraction or MIG
 *                 instance's {@code milli}
 * @param cpuMillis CPU granted to the task, in millicores
 * @param memoryMiB memory granted to the task, in MiB
 * @param migInstances the MIG instances among its shares, by profile (their {@code milli} is in {@code gpuMilli})
 */
public record Placement(String nodeId, String gpuModel, int gpuCount, long gpuMilli, long cpuMillis,
                        long memoryMiB, java.util.SortedMap<String, Integer> migInstances) {
    public Placement {
        migInstances = MigInstances.of(migInstances);
        if (cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException("placements[].cpuMillis and memoryMiB must be >= 0");
        }
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("placements[].nodeId must not be blank");
        }
        if (gpuCount < 0) {
            throw new IllegalArgumentException("placements[].gpuCount must be >= 0, was " + gpuCount);
        }
        if (gpuMilli < 1000L * gpuCount) {
            throw new IllegalArgumentException("placements[].gpuMilli must be >= 1000 x gpuCount, was " + gpuMilli);
        }
        if (gpuMilli > 0 && (gpuModel == null || gpuModel.isBlank())) {
            throw new IllegalArgumentException("placements[].gpuModel is required when the task holds GPUs");
        }
    }

    /** No MIG instance. */
    public Placement(String nodeId, String gpuModel, int gpuCount, long gpuMilli, long cpuMillis, long memoryMiB) {
        this(nodeId, gpuModel, gpuCount, gpuMilli, cpuMillis, memoryMiB, java.util.Collections.emptySortedMap());
    }

    /** GPUs only, no CPU or memory. */
    public Placement(String nodeId, String gpuModel, int gpuCount, long gpuMilli) {
        this(nodeId, gpuModel, gpuCount, gpuMilli, 0, 0);
    }

    /** Whole GPUs only. */
    public Placement(String nodeId, String gpuModel, int gpuCount) {
        this(nodeId, gpuModel, gpuCount, 1000L * gpuCount);
    }
}
