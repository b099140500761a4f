package io.gantry.billing.core;

import java.time.Instant;
import java.util.Objects;

/**
 * One node's share of one allocation interval: a row of the usage ledger.
 *
 * <p>The exact quantity is {@code gpuMicros}: thousandths of a GPU held times milliseconds, i.e.
 * GPU-microseconds, so a half-GPU share for 1 ms is exactly 500. {@code gpuMillis} is the same in
 * GPU-milliseconds, rounded down (exact whenever only whole GPUs are held).
 *
 * @param entryId        {@code <allocationId>/<nodeId>}: stable, so re-rating the same release yields the same id
 * @param gpuModel       {@code null} when the node held only CPU for this allocation
 * @param gpuCount       whole GPUs held on the node
 * @param durationMillis {@code endedAt - startedAt}
 * @param gpuMillis      {@code gpuMicros / 1000}, rounded down; {@code gpuCount x durationMillis} for whole GPUs
 * @param gpuMilli       thousandths of a GPU held on the node (1000 per whole GPU plus fractions and MIG shares)
 * @param gpuMicros      {@code gpuMilli x durationMillis}: exact GPU-microseconds
 * @param cpuMillis      CPU the node's tasks held, in millicores (what a CPU price applies to)
 * @param memoryMiB      memory the node's tasks held, in MiB (what a memory price applies to)
 * @param releaseReason  why the allocation was released ({@code NODE_FAILED}, {@code PREEMPTED}, ...), or
 *                       {@code null} for rows recorded before the reason was kept (never credited)
 * @param migInstances   the MIG instances among the node's shares, by profile (their thousandths are part of
 *                       {@code gpuMilli}); empty for rows recorded before profiles were kept
 */
public record LedgerEntry(String entryId, String tenant, String jobId, int attempt, String allocationId,
                          String nodeId, String gpuModel, int gpuCount, Instant startedAt, Instant endedAt,
                          long durationMillis, long gpuMillis, long gpuMilli, long gpuMicros, long cpuMillis,
                          long memoryMiB, String releaseReason, java.util.SortedMap<String, Integer> migInstances) {
    public LedgerEntry {
        migInstances = MigInstances.of(migInstances);
        if (MigInstances.milli(migInstances) > gpuMilli - 1000L * gpuCount) {
            throw new IllegalArgumentException(entryId + ": migInstances hold more than the shares in gpuMilli");
        }
        if (cpuMillis < 0 || memoryMiB < 0) {
            throw new IllegalArgumentException(entryId + ": cpuMillis and memoryMiB must be >= 0");
        }
        Objects.requireNonNull(entryId, "entryId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(endedAt, "endedAt");
        if (durationMillis != endedAt.toEpochMilli() - startedAt.toEpochMilli()) {
            throw new IllegalArgumentException(entryId + ": durationMillis does not match the interval");
        }
        if (gpuCount < 0 || gpuMilli < 1000L * gpuCount) {
            throw new IllegalArgumentException(entryId + ": gpuMilli must be >= 1000 x gpuCount");
        }
        if (gpuMicros != Math.multiplyExact(gpuMilli, durationMillis)) {
            throw new IllegalArgumentException(entryId + ": gpuMicros must be gpuMilli x durationMillis");
        }
        if (gpuMillis != gpuMicros / 1000) {
            throw new IllegalArgumentException(entryId + ": gpuMillis must be gpuMicros / 1000");
        }
    }

    /** Without MIG profiles (every share priced by its thousandths). */
    public LedgerEntry(String entryId, String tenant, String jobId, int attempt, String allocationId,
                       String nodeId, String gpuModel, int gpuCount, Instant startedAt, Instant endedAt,
                       long durationMillis, long gpuMillis, long gpuMilli, long gpuMicros, long cpuMillis,
                       long memoryMiB, String releaseReason) {
        this(entryId, tenant, jobId, attempt, allocationId, nodeId, gpuModel, gpuCount, startedAt, endedAt,
                durationMillis, gpuMillis, gpuMilli, gpuMicros, cpuMillis, memoryMiB, releaseReason,
                java.util.Collections.emptySortedMap());
    }

    /** Without CPU, memory or release reason (GPU time only). */
    public LedgerEntry(String entryId, String tenant, String jobId, int attempt, String allocationId,
                       String nodeId, String gpuModel, int gpuCount, Instant startedAt, Instant endedAt,
                       long durationMillis, long gpuMillis, long gpuMilli, long gpuMicros) {
        this(entryId, tenant, jobId, attempt, allocationId, nodeId, gpuModel, gpuCount, startedAt, endedAt,
                durationMillis, gpuMillis, gpuMilli, gpuMicros, 0, 0, null);
    }

    /** Whole GPUs only: {@code gpuMillis = gpuCount x durationMillis}. */
    public LedgerEntry(String entryId, String tenant, String jobId, int attempt, String allocationId, String nodeId,
                       String gpuModel, int gpuCount, Instant startedAt, Instant endedAt, long durationMillis,
                       long gpuMillis) {
        this(entryId, tenant, jobId, attempt, allocationId, nodeId, gpuModel, gpuCount, startedAt, endedAt,
                durationMillis, gpuMillis, 1000L * gpuCount, Math.multiplyExact(1000L * gpuCount, durationMillis));
    }

    public static String entryId(String allocationId, String nodeId) {
        return allocationId + "/" + nodeId;
    }
}
