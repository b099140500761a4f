package io.gantry.billing.db;

import io.micronaut.core.annotation.Nullable;
import io.micronaut.data.annotation.Query;
import io.micronaut.data.jdbc.annotation.JdbcRepository;
import io.micronaut.data.model.query.builder.sql.Dialect;
import io.micronaut.data.repository.GenericRepository;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The usage ledger table. Rows are only ever inserted; nothing updates or deletes them. */
@JdbcRepository(dialect = Dialect.POSTGRES)
public interface LedgerRepository extends GenericRepository<UsageEntryRow, String> {

    /** Inserts the row unless its entry id exists; answers how many rows were inserted (0 or 1). */
    @Query("""
            INSERT INTO usage_entry (entry_id, tenant, job_id, attempt, allocation_id, node_id, gpu_model, gpu_count,
                                     started_at, ended_at, duration_millis, gpu_millis, gpu_milli, gpu_micros,
                                     recorded_at, cpu_millis, memory_mib, release_reason, mig_instances)
            VALUES (:entryId, :tenant, :jobId, :attempt, :allocationId, :nodeId, :gpuModel, :gpuCount,
                    :startedAt, :endedAt, :durationMillis, :gpuMillis, :gpuMilli, :gpuMicros, :recordedAt, :cpuMillis, :memoryMib,
                    :releaseReason, :migInstances)
            ON CONFLICT (entry_id) DO NOTHING""")
    int insertIfAbsent(String entryId, String tenant, String jobId, int attempt, String allocationId, String nodeId,
                       @Nullable String gpuModel, int gpuCount, Instant startedAt, Instant endedAt,
                       long durationMillis, long gpuMillis, long gpuMilli, long gpuMicros, Instant recordedAt,
                       long cpuMillis, long memoryMib, @Nullable String releaseReason, String migInstances);

    Optional<UsageEntryRow> findById(String entryId);

    /**
     * Candidate rows for a window: every row whose interval reaches into {@code [from, to]} (closed, so that
     * zero-length rows at {@code from} are included); the core computes the exact overlap.
     */
    @Query("""
            SELECT * FROM usage_entry
            WHERE (CAST(:tenant AS TEXT) IS NULL OR tenant = :tenant)
              AND (CAST(:from AS TIMESTAMPTZ) IS NULL OR ended_at >= :from)
              AND (CAST(:to AS TIMESTAMPTZ) IS NULL OR started_at <= :to)
            ORDER BY entry_id""")
    List<UsageEntryRow> findReaching(@Nullable String tenant, @Nullable Instant from, @Nullable Instant to);

    List<UsageEntryRow> findByJobIdOrderByEntryId(String jobId);

    long countByJobId(String jobId);
}
