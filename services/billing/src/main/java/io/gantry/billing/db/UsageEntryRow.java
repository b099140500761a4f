package io.gantry.billing.db;

import io.gantry.billing.core.LedgerEntry;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Id;
import io.micronaut.data.annotation.MappedEntity;

import java.time.Instant;

/** A row of {@code usage_entry}; {@code recordedAt} is when billing first wrote it. */
@MappedEntity("usage_entry")
public record UsageEntryRow(@Id String entryId, String tenant, String jobId, int attempt, String allocationId,
                            String nodeId, @Nullable String gpuModel, int gpuCount, Instant startedAt,
                            Instant endedAt, long durationMillis, long gpuMillis, long gpuMilli, long gpuMicros,
                            Instant recordedAt, long cpuMillis, long memoryMib, @Nullable String releaseReason,
                            @Nullable String migInstances) {

    public LedgerEntry toEntry() {
        return new LedgerEntry(entryId, tenant, jobId, attempt, allocationId, nodeId, gpuModel, gpuCount, startedAt,
                endedAt, durationMillis, gpuMillis, gpuMilli, gpuMicros, cpuMillis, memoryMib, releaseReason,
                io.gantry.billing.core.MigInstances.decode(migInstances));
    }
}
