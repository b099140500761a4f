package io.gantry.admission.core;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One task group of a job: {@code replicas} identical tasks, each needing {@code gpus} GPUs (of
 * {@code gpuModel}, one of {@code gpuModels} in that order of preference, or of tier {@code gpuTier}; at most one
 * of the three), {@code cpuMillis} millicores and {@code memoryMiB}.
 *
 * <p>Instead of whole GPUs ({@code gpus = 0}) a task may ask for part of one: {@code gpuMilli} thousandths of a
 * GPU (1-999) with {@code gpuMemoryMiB} of its memory (null: the same fraction), or a MIG instance
 * {@code migProfile} (e.g. {@code 1g.10gb}).
 *
 * <p>What each replica runs with: {@code env} (the tenant's variables; Gantry's own come on top),
 * {@code workingDir} (absolute; null: the backend's default), {@code image} (container backends; null: the
 * configured image) and {@code mounts} (container backends).
 *
 * @param runSeconds how long a task runs on the simulated backend; null lets the backend choose
 */
public record TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                       long memoryMiB, Long runSeconds, List<String> gpuModels, String gpuTier, Integer gpuMilli,
                       Long gpuMemoryMiB, String migProfile, Map<String, String> env, String workingDir,
                       String image, List<Mount> mounts) {

    /**
     * A volume in the task's container at {@code mountPath}: the node's directory {@code hostPath} or the persistent
     * volume claim {@code claim} (exactly one of the two).
     */
    public record Mount(String mountPath, String hostPath, String claim, boolean readOnly) {
    }

    /** Without runtime fields (environment, working directory, image, mounts). */
    public TaskSpec(String name, int replicas, List<String> command, int gpus, String gpuModel, int cpuMillis,
                    long memoryMiB, Long runSeconds, List<String> gpuModels, String gpuTier, Integer gpuMilli,
                    Long gpuMemoryMiB, String migProfile) {
        this(name, replicas, command, gpus, gpuModel, cpuMillis, memoryMiB, runSeconds, gpuModels, gpuTier, gpuMilli,
                gpuMemoryMiB, migProfile, Map.of(), null, null, List.of());
    }

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
        // sorted: one spec, one JSON form (an idempotent resubmission is compared on it)
        env = env == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(env));
        mounts = mounts == null ? List.of() : List.copyOf(mounts);
    }

    /** The same task group with these runtime fields. */
    public TaskSpec withRuntime(Map<String, String> env, String workingDir, String image, List<Mount> mounts) {
        return new TaskSpec(name, replicas, command, gpus, gpuModel, cpuMillis, memoryMiB, runSeconds, gpuModels,
                gpuTier, gpuMilli, gpuMemoryMiB, migProfile, env, workingDir, image, mounts);
    }
}
