package io.gantry.admission.db;

import io.gantry.admission.core.JobSpecTree;
import io.gantry.admission.core.JobState;
import io.gantry.admission.core.JobStatus;
import io.gantry.admission.kafka.JobEvent;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.transaction.TransactionOperations;
import jakarta.inject.Singleton;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The job read model in PostgreSQL. {@link #apply(JobEvent)} is idempotent by event id: the history row and the
 * status update commit together, so an event redelivered after a crash changes nothing.
 */
@Singleton
public class JobStore {
    private static final String JOB_COLUMNS =
            "job_id, tenant, name, spec_json, submitted_at, updated_at, status_json";

    private final TransactionOperations<Connection> tx;
    private final JsonMapper json;

    public JobStore(TransactionOperations<Connection> tx, JsonMapper json) {
        this.tx = tx;
        this.json = json;
    }

    /** Records the event in the job's history and folds it into the job's status; false if it was already in. */
    public boolean apply(JobEvent e) {
        return applyThen(e, () -> { });
    }

    /**
     * Applies the event, then runs {@code publish} before the transaction commits: if the row cannot be stored
     * nothing is published, and if publishing fails (throws) the row is rolled back. A crash after the publish but
     * before the commit loses nothing: the read-model consumer inserts the row from the published event.
     */
    public boolean applyThen(JobEvent e, Runnable publish) {
        return tx.executeWrite(status -> {
            boolean applied = applyIn(status.getConnection(), e);
            publish.run();
            return applied;
        });
    }

    private boolean applyIn(Connection c, JobEvent e) throws SQLException {
        List<JobEvent> fresh = newToHistory(c, List.of(e));
        foldIn(c, fresh);
        return !fresh.isEmpty();
    }

    public Optional<JobRecord> find(String jobId) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT " + JOB_COLUMNS + " FROM jobs WHERE job_id = ?")) {
                ps.setString(1, jobId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(record(rs)) : Optional.empty();
                }
            }
        });
    }

    /** How many of {@code tenant}'s jobs have not ended (a partial index holds only those). */
    public long openJobs(String tenant) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT count(*) FROM jobs WHERE tenant = ? AND state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    /** Which of {@code ids} are jobs of tenants other than {@code tenant}. */
    public java.util.Set<String> othersJobs(String tenant, java.util.Set<String> ids) {
        return jobIds("tenant <> ?", tenant, ids);
    }

    /** Which of {@code jobIds} are jobs of {@code tenant} (one query; another tenant's job is simply not among them). */
    public java.util.Set<String> existing(String tenant, java.util.Set<String> jobIds) {
        return jobIds("tenant = ?", tenant, jobIds);
    }

    /** Which of {@code ids} are jobs whose tenant meets {@code tenantCondition} (one parameter: {@code tenant}). */
    private java.util.Set<String> jobIds(String tenantCondition, String tenant, java.util.Set<String> ids) {
        if (ids.isEmpty()) {
            return java.util.Set.of();
        }
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT job_id FROM jobs WHERE " + tenantCondition + " AND job_id = ANY (?)")) {
                ps.setString(1, tenant);
                ps.setArray(2, status.getConnection().createArrayOf("text", ids.toArray()));
                java.util.Set<String> out = new java.util.HashSet<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1));
                    }
                }
                return out;
            }
        });
    }

    /** Where a page of a listing ends: the last job shown, in listing order (newest submission first). */
    public record Cursor(Instant submittedAt, String jobId) {
    }

    /**
     * Jobs newest submission first (not yet known submission times last), at most {@code limit}, after
     * {@code after} (null: from the start); {@code tenant} null means every tenant, {@code state} null every state.
     * Keyset paging: a job submitted while a client pages can neither repeat nor push another off a page.
     */
    public List<JobRecord> list(String tenant, JobState state, int limit, Cursor after) {
        return tx.executeRead(status -> {
            StringBuilder sql = new StringBuilder("SELECT " + JOB_COLUMNS + " FROM jobs WHERE 1 = 1");
            List<Object> args = new ArrayList<>();
            if (after != null && after.submittedAt() != null) {
                sql.append(" AND (submitted_at < ? OR (submitted_at = ? AND job_id < ?) OR submitted_at IS NULL)");
                args.add(time(after.submittedAt()));
                args.add(time(after.submittedAt()));
                args.add(after.jobId());
            } else if (after != null) {
                sql.append(" AND submitted_at IS NULL AND job_id < ?");
                args.add(after.jobId());
            }
            if (tenant != null) {
                sql.append(" AND tenant = ?");
                args.add(tenant);
            }
            if (state != null) {
                sql.append(" AND state = ?");
                args.add(state.name());
            }
            sql.append(" ORDER BY submitted_at DESC NULLS LAST, job_id DESC LIMIT ?");
            args.add(limit);
            try (PreparedStatement ps = status.getConnection().prepareStatement(sql.toString())) {
                for (int i = 0; i < args.size(); i++) {
                    ps.setObject(i + 1, args.get(i));
                }
                List<JobRecord> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(record(rs));
                    }
                }
                return out;
            }
        });
    }

    /** The job's events, in the order they happened (ties in the order they arrived). */
    public List<HistoryEntry> history(String jobId) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement("""
                    SELECT type, occurred_at, attempt, detail FROM job_events
                    WHERE job_id = ? ORDER BY occurred_at, seq""")) {
                ps.setString(1, jobId);
                List<HistoryEntry> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        int attempt = rs.getInt(3);
                        Integer maybeAttempt = rs.wasNull() ? null : attempt;
                        out.add(new HistoryEntry(rs.getString(1), instant(rs, 2), maybeAttempt, rs.getString(4)));
                    }
                }
                return out;
            }
        });
    }

    /** Remembers the hash of a run's token (idempotent). */
    public void recordRunToken(String jobId, int attempt, String sha256) {
        tx.executeWrite(status -> {
            runTokensIn(status.getConnection(), List.of(new RunToken(jobId, attempt, sha256)));
            return null;
        });
    }

    private static void runTokensIn(Connection c, List<RunToken> tokens) throws SQLException {
        if (tokens.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO run_tokens (job_id, attempt, sha256) VALUES (?, ?, ?)
                ON CONFLICT (job_id, attempt) DO NOTHING""")) {
            for (RunToken t : tokens) {
                ps.setString(1, t.jobId());
                ps.setInt(2, t.attempt());
                ps.setString(3, t.sha256());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** One write of the read-model consumer, kept until its batch is written ({@link #writeAll}). */
    public sealed interface Write {
        /** The job whose rows it writes. */
        String jobId();
    }

    /** {@link #apply(JobEvent)}. */
    public record Apply(JobEvent event) implements Write {
        @Override
        public String jobId() {
            return event.jobId();
        }
    }

    /** {@link #recordRunToken}. */
    public record RunToken(String jobId, int attempt, String sha256) implements Write {
    }

    /** {@link #recordCheckpoint}. */
    public record Checkpoint(CheckpointRow row) implements Write {
        @Override
        public String jobId() {
            return row.jobId();
        }
    }

    /**
     * Every write of a batch of input records in one database transaction: one commit per batch instead of one per
     * record, and a few batched statements instead of four per event. Each write is idempotent as on its own: an
     * event whose id is in the history already changes nothing, so a batch redelivered after a crash changes
     * nothing; if any write fails, none is kept. Each job's events fold into its status in the order they came; the
     * jobs' rows are locked in job id order, so two instances' batches cannot deadlock.
     */
    public void writeAll(List<? extends Write> writes) {
        if (writes.isEmpty()) {
            return;
        }
        List<Write> byJob = new ArrayList<>(writes);
        byJob.sort(java.util.Comparator.comparing(Write::jobId));
        tx.executeWrite(status -> {
            Connection c = status.getConnection();
            List<JobEvent> events = new ArrayList<>();
            List<RunToken> tokens = new ArrayList<>();
            List<CheckpointRow> checkpoints = new ArrayList<>();
            for (Write w : byJob) {
                if (w instanceof Apply a) {
                    events.add(a.event());
                } else if (w instanceof RunToken t) {
                    tokens.add(t);
                } else if (w instanceof Checkpoint k) {
                    checkpoints.add(k.row());
                }
            }
            foldIn(c, newToHistory(c, events));
            runTokensIn(c, tokens);
            for (CheckpointRow k : checkpoints) {
                checkpointIn(c, k);
            }
            return null;
        });
    }

    /** Inserts the events into the history (one batch); answers those that were not there yet, in their order. */
    private static List<JobEvent> newToHistory(Connection c, List<JobEvent> events) throws SQLException {
        if (events.isEmpty()) {
            return List.of();
        }
        int[] inserted;
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO job_events (event_id, job_id, type, occurred_at, attempt, detail, source)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING""")) {
            for (JobEvent e : events) {
                ps.setString(1, e.fact().eventId());
                ps.setString(2, e.jobId());
                ps.setString(3, e.fact().kind().eventType());
                ps.setObject(4, time(e.fact().occurredAt()));
                if (e.fact().attempt() == null) {
                    ps.setNull(5, Types.INTEGER);
                } else {
                    ps.setInt(5, e.fact().attempt());
                }
                ps.setString(6, e.fact().detail());
                ps.setString(7, e.source());
                ps.addBatch();
            }
            inserted = ps.executeBatch();
        }
        List<JobEvent> fresh = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            if (inserted[i] != 0) {
                fresh.add(events.get(i));
            }
        }
        return fresh;
    }

    /**
     * Folds new events into their jobs' rows (created when missing): each job's status read once under a row lock,
     * its events applied in order, written once; name, spec and submission time from the first event that carries
     * them, unless the row has them already.
     */
    private void foldIn(Connection c, List<JobEvent> fresh) throws SQLException {
        if (fresh.isEmpty()) {
            return;
        }
        Map<String, List<JobEvent>> byJob = new java.util.TreeMap<>();
        for (JobEvent e : fresh) {
            byJob.computeIfAbsent(e.jobId(), k -> new ArrayList<>()).add(e);
        }
        String initial = write(StatusJson.toTree(JobStatus.submitted()));
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO jobs (job_id, tenant, state, attempt, status_json, updated_at)
                VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING""")) {
            for (List<JobEvent> events : byJob.values()) {
                JobEvent first = events.get(0);
                ps.setString(1, first.jobId());
                ps.setString(2, first.tenant());
                ps.setString(3, JobStatus.submitted().state().name());
                ps.setInt(4, JobStatus.submitted().attempt());
                ps.setString(5, initial);
                ps.setObject(6, time(first.fact().occurredAt()));
                ps.addBatch();
            }
            ps.executeBatch();
        }
        Map<String, JobStatus> current = new java.util.HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT job_id, status_json FROM jobs WHERE job_id = ANY (?) ORDER BY job_id FOR UPDATE")) {
            ps.setArray(1, c.createArrayOf("varchar", byJob.keySet().toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    current.put(rs.getString(1), StatusJson.fromTree(readMap(rs.getString(2))));
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE jobs SET state = ?, attempt = ?, status_json = ?, updated_at = ?,
                    name = COALESCE(name, ?), spec_json = COALESCE(spec_json, ?),
                    submitted_at = COALESCE(submitted_at, ?)
                WHERE job_id = ?""")) {
            for (Map.Entry<String, List<JobEvent>> job : byJob.entrySet()) {
                JobStatus next = current.get(job.getKey());
                io.gantry.admission.core.JobSpec spec = null;
                Instant submittedAt = null;
                for (JobEvent e : job.getValue()) {
                    next = next.apply(e.fact());
                    spec = spec != null ? spec : e.spec();
                    submittedAt = submittedAt != null ? submittedAt : e.submittedAt();
                }
                ps.setString(1, next.state().name());
                ps.setInt(2, next.attempt());
                ps.setString(3, write(StatusJson.toTree(next)));
                ps.setObject(4, time(next.updatedAt()));
                ps.setString(5, spec == null ? null : spec.name());
                ps.setString(6, spec == null ? null : write(JobSpecTree.toTree(spec)));
                ps.setObject(7, submittedAt == null ? null : time(submittedAt));
                ps.setString(8, job.getKey());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** The hash of the token of the job's run {@code attempt}, if its grant carried one. */
    public Optional<String> runToken(String jobId, int attempt) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT sha256 FROM run_tokens WHERE job_id = ? AND attempt = ?")) {
                ps.setString(1, jobId);
                ps.setInt(2, attempt);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
                }
            }
        });
    }

    /** Records a reported checkpoint once (by its event id); false if it was already in. */
    public boolean recordCheckpoint(CheckpointRow c) {
        return tx.executeWrite(status -> checkpointIn(status.getConnection(), c));
    }

    private static boolean checkpointIn(Connection connection, CheckpointRow c) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("""
                INSERT INTO checkpoints (event_id, job_id, attempt, step, path, size_bytes, save_millis,
                    committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING""")) {
            ps.setString(1, c.eventId());
            ps.setString(2, c.jobId());
            ps.setInt(3, c.attempt());
            ps.setLong(4, c.step());
            ps.setString(5, c.path());
            ps.setObject(6, c.sizeBytes());
            ps.setObject(7, c.saveMillis());
            ps.setObject(8, time(c.committedAt()));
            return ps.executeUpdate() == 1;
        }
    }

    /** The job's checkpoints, newest first, at most {@code limit}. */
    public List<CheckpointRow> checkpoints(String jobId, int limit) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement("""
                    SELECT event_id, job_id, attempt, step, path, size_bytes, save_millis, committed_at
                    FROM checkpoints WHERE job_id = ? ORDER BY committed_at DESC, step DESC LIMIT ?""")) {
                ps.setString(1, jobId);
                ps.setInt(2, limit);
                List<CheckpointRow> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long size = rs.getLong(6);
                        Long sizeOrNull = rs.wasNull() ? null : size;
                        long save = rs.getLong(7);
                        Long saveOrNull = rs.wasNull() ? null : save;
                        out.add(new CheckpointRow(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4),
                                rs.getString(5), sizeOrNull, saveOrNull, instant(rs, 8)));
                    }
                }
                return out;
            }
        });
    }

    /** Binds {@code key} to this request unless an earlier request already holds it. */
    public KeyClaim claimKey(String tenant, String key, String requestHash, String jobId, Instant now) {
        return tx.executeWrite(status -> {
            Connection c = status.getConnection();
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO idempotency_keys (tenant, idem_key, request_hash, job_id, created_at)
                    VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, idem_key) DO NOTHING""")) {
                ps.setString(1, tenant);
                ps.setString(2, key);
                ps.setString(3, requestHash);
                ps.setString(4, jobId);
                ps.setObject(5, time(now));
                if (ps.executeUpdate() == 1) {
                    return new KeyClaim(true, requestHash, jobId);
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT request_hash, job_id FROM idempotency_keys WHERE tenant = ? AND idem_key = ?")) {
                ps.setString(1, tenant);
                ps.setString(2, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new KeyClaim(false, rs.getString(1), rs.getString(2));
                }
            }
        });
    }

    /** Gives a key back after its submission could not be published, so that a retry can take it. */
    public void releaseKey(String tenant, String key, String requestHash) {
        tx.executeWrite(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "DELETE FROM idempotency_keys WHERE tenant = ? AND idem_key = ? AND request_hash = ?")) {
                ps.setString(1, tenant);
                ps.setString(2, key);
                ps.setString(3, requestHash);
                return ps.executeUpdate();
            }
        });
    }

    private JobRecord record(ResultSet rs) throws SQLException {
        String spec = rs.getString("spec_json");
        return new JobRecord(rs.getString("job_id"), rs.getString("tenant"), rs.getString("name"),
                spec == null ? null : read(spec), instant(rs, "submitted_at"), instant(rs, "updated_at"),
                StatusJson.fromTree(readMap(rs.getString("status_json"))));
    }

    private String write(Object tree) {
        try {
            return json.writeValueAsString(tree);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Object read(String text) {
        try {
            return json.readValue(text, Argument.OBJECT_ARGUMENT);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Map<?, ?> readMap(String text) {
        return (Map<?, ?>) read(text);
    }

    private static OffsetDateTime time(Instant i) {
        return OffsetDateTime.ofInstant(i, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
