package io.gantry.billing.db;

import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.UsageWindow;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;

/** Writes and reads the usage ledger in {@link LedgerEntry} terms. */
@Singleton
public class Ledger {
    private static final Logger LOG = LoggerFactory.getLogger(Ledger.class);

    private final LedgerRepository rows;

    public Ledger(LedgerRepository rows) {
        this.rows = rows;
    }

    /**
     * Records the entry unless it is already there, and answers the row as stored. A redelivered release finds
     * its rows already written and gets them back unchanged, so what billing republishes is what it first wrote.
     */
    public UsageEntryRow record(LedgerEntry e, Instant now) {
        int inserted = rows.insertIfAbsent(e.entryId(), e.tenant(), e.jobId(), e.attempt(), e.allocationId(),
                e.nodeId(), e.gpuModel(), e.gpuCount(), e.startedAt(), e.endedAt(), e.durationMillis(),
                e.gpuMillis(), e.gpuMilli(), e.gpuMicros(), now, e.cpuMillis(), e.memoryMiB(), e.releaseReason(),
                io.gantry.billing.core.MigInstances.encode(e.migInstances()));
        UsageEntryRow stored = rows.findById(e.entryId())
                .orElseThrow(() -> new IllegalStateException("ledger row " + e.entryId() + " vanished"));
        if (inserted == 0 && !stored.toEntry().equals(e)) {
            // same allocation and node rated differently: the first row stands, the conflict is made visible
            LOG.warn("ledger entry {} already recorded with different values; keeping {} and ignoring {}",
                    e.entryId(), stored.toEntry(), e);
        }
        return stored;
    }

    /** Rows that may overlap the window, optionally of one tenant. */
    public List<LedgerEntry> reaching(String tenant, UsageWindow window) {
        return rows.findReaching(tenant, window.from(), window.to()).stream().map(UsageEntryRow::toEntry).toList();
    }

    /** A job's rows in the order its runs held the GPUs: by attempt, then start, node and entry. */
    public List<UsageEntryRow> ofJob(String jobId) {
        return rows.findByJobIdOrderByEntryId(jobId).stream()
                .sorted(java.util.Comparator.comparingInt(UsageEntryRow::attempt)
                        .thenComparing(UsageEntryRow::startedAt).thenComparing(UsageEntryRow::nodeId)
                        .thenComparing(UsageEntryRow::entryId))
                .toList();
    }
}
