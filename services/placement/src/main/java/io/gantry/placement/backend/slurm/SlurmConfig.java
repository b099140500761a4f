package io.gantry.placement.backend.slurm;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The {@code gantry.placement.slurm.*} settings (README, "Slurm backend").
 *
 * @param partition         the one entrance: the partition only Gantry submits to; its nodes are Gantry's nodes
 * @param account           {@code --account} for every job, or blank for the submitting user's default
 * @param pollInterval      how often squeue and scontrol are read
 * @param commandTimeout    how long one Slurm command may take before it is killed and counted as failed
 * @param graceSeconds      between the SIGTERM of a cancel and the SIGKILL
 * @param submitAttempts    sbatch attempts per task before the run fails
 * @param submitBackoff     the first wait between sbatch attempts (doubled each time, at most a minute)
 * @param pendingTimeout    how long Slurm may keep a placed job pending before the run fails (zero: forever)
 * @param gresName          the gres name of GPUs ({@code gpu})
 * @param gpuModels         gres type → Gantry GPU model (default: the type upper-cased, {@code h100} → H100)
 * @param workDir           where job logs go ({@code <workDir>/<jobId>/<attempt>/<task>-<replica>.log}); must be
 *                          a path the compute nodes can write, e.g. a shared file system
 * @param exactGpuIndices   export Gantry's GPU indices as CUDA_VISIBLE_DEVICES (else keep what Slurm sets)
 * @param requireRestrictedPartition refuse to start when anyone may submit to the partition
 * @param rackFeaturePrefix a node feature {@code <prefix><rack>} names its rack (e.g. {@code rack_r12})
 * @param spineFeaturePrefix a node feature {@code <prefix><spine>} names its spine
 * @param apiUrl            told to the tasks as GANTRY_API_URL (blank: none)
 * @param startupTimeout    how long the start waits for the controller to list the nodes
 */
public record SlurmConfig(String partition, String account, Duration pollInterval, Duration commandTimeout,
                          long graceSeconds, int submitAttempts, Duration submitBackoff, Duration pendingTimeout,
                          String gresName, Map<String, String> gpuModels, Path workDir, boolean exactGpuIndices,
                          boolean requireRestrictedPartition, String rackFeaturePrefix, String spineFeaturePrefix,
                          String apiUrl, Duration startupTimeout) {
    public SlurmConfig {
        if (partition == null || partition.isBlank()) {
            throw new IllegalArgumentException("partition must be set (the partition only Gantry submits to)");
        }
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("poll-interval must be > 0, was " + pollInterval);
        }
        if (commandTimeout.isNegative() || commandTimeout.isZero()) {
            throw new IllegalArgumentException("command-timeout must be > 0, was " + commandTimeout);
        }
        if (graceSeconds < 0) {
            throw new IllegalArgumentException("grace-seconds must be >= 0, was " + graceSeconds);
        }
        if (submitAttempts < 1) {
            throw new IllegalArgumentException("submit-attempts must be >= 1, was " + submitAttempts);
        }
        if (pendingTimeout.isNegative()) {
            throw new IllegalArgumentException("pending-timeout must be >= 0, was " + pendingTimeout);
        }
        account = account == null ? "" : account.trim();
        gresName = gresName == null || gresName.isBlank() ? "gpu" : gresName.trim();
        gpuModels = Map.copyOf(gpuModels);
        apiUrl = apiUrl == null ? "" : apiUrl.trim();
        rackFeaturePrefix = rackFeaturePrefix == null ? "" : rackFeaturePrefix;
        spineFeaturePrefix = spineFeaturePrefix == null ? "" : spineFeaturePrefix;
    }

    /** Defaults for {@code partition}, as the README lists them. */
    public static SlurmConfig defaults(String partition, Path workDir) {
        return new SlurmConfig(partition, "", Duration.ofSeconds(2), Duration.ofSeconds(15), 10, 4,
                Duration.ofSeconds(1), Duration.ofMinutes(5), "gpu", Map.of(), workDir, true, true, "rack_",
                "spine_", "", Duration.ofSeconds(30));
    }

    public SlurmConfig withPollInterval(Duration d) {
        return new SlurmConfig(partition, account, d, commandTimeout, graceSeconds, submitAttempts, submitBackoff,
                pendingTimeout, gresName, gpuModels, workDir, exactGpuIndices, requireRestrictedPartition,
                rackFeaturePrefix, spineFeaturePrefix, apiUrl, startupTimeout);
    }

    public SlurmConfig withSubmit(int attempts, Duration backoff) {
        return new SlurmConfig(partition, account, pollInterval, commandTimeout, graceSeconds, attempts, backoff,
                pendingTimeout, gresName, gpuModels, workDir, exactGpuIndices, requireRestrictedPartition,
                rackFeaturePrefix, spineFeaturePrefix, apiUrl, startupTimeout);
    }

    public SlurmConfig withGraceSeconds(long grace) {
        return new SlurmConfig(partition, account, pollInterval, commandTimeout, grace, submitAttempts, submitBackoff,
                pendingTimeout, gresName, gpuModels, workDir, exactGpuIndices, requireRestrictedPartition,
                rackFeaturePrefix, spineFeaturePrefix, apiUrl, startupTimeout);
    }

    public SlurmConfig withPendingTimeout(Duration d) {
        return new SlurmConfig(partition, account, pollInterval, commandTimeout, graceSeconds, submitAttempts,
                submitBackoff, d, gresName, gpuModels, workDir, exactGpuIndices, requireRestrictedPartition,
                rackFeaturePrefix, spineFeaturePrefix, apiUrl, startupTimeout);
    }

    /** The Gantry model of gres type {@code type} (null: untyped gres). */
    public String modelOf(String type) {
        if (type == null || type.isBlank()) {
            return gpuModels.getOrDefault("", "generic");
        }
        return gpuModels.getOrDefault(type, type.toUpperCase(java.util.Locale.ROOT));
    }
}
