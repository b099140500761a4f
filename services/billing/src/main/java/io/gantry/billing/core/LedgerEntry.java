package io.gantry.billing.core;

import java.time.Instant;
import java.util.Objects;

/**
 * One node's share of one allocation interval: a row of the usage ledger.
 *
 * @param entryId        {@code <allocationId>/<nodeId>}: stable, so re-rating the same release yields the same id
 * @param gpuModel       {@code null} when the node held only CPU for this allocation
 * @param durationMillis {@code endedAt - startedAt}
 * @param gpuMillis      {@code gpuCount x durationMillis}
 */
public record LedgerEntry(String entryId, String tenant, String jobId, int attempt, String allocationId,
                          String nodeId, String gpuModel, int gpuCount, Instant startedAt, Instant endedAt,
                          long durationMillis, long gpuMillis) {
    public LedgerEntry {
        Objects.requireNonNull(entryId, "entryId");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(endedAt, "endedAt");
        if (durationMillis != endedAt.toEpochMilli() - startedAt.toEpochMilli()) {
            throw new IllegalArgumentException(entryId + ": durationMillis does not match the interval");
        }
        if (gpuCount < 0 || gpuMillis != Math.multiplyExact(gpuCount, durationMillis)) {
            throw new IllegalArgumentException(entryId + ": gpuMillis must be gpuCount x durationMillis");
        }
    }

    public static String entryId(String allocationId, String nodeId) {
        return allocationId + "/" + nodeId;
    }
}
