package io.gantry.billing.db;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Budget;
import io.gantry.billing.core.Checkpoints;
import io.gantry.billing.core.Component;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.InvoiceLine;
import io.gantry.billing.core.JobTerms;
import io.gantry.billing.core.LineKind;
import io.micronaut.transaction.TransactionOperations;
import jakarta.inject.Singleton;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Billing's tables besides the ledger: job terms, run checkpoints, price book versions and issued documents. Every
 * write is an insert that a repeat leaves unchanged (by primary key), and a document is written with its lines in
 * one transaction, so a crash at any instant leaves either the whole document or none of it.
 */
@Singleton
public class BillingStore {
    private final TransactionOperations<Connection> tx;

    public BillingStore(TransactionOperations<Connection> tx) {
        this.tx = tx;
    }

    /** A stored price book version: its number, document (canonical JSON) and when and by whom it was applied. */
    public record PriceBookRow(long version, String currency, String document, Instant appliedAt, String appliedBy) {
    }

    public void recordTerms(JobTerms t, String tenant, Instant now) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO job_terms (job_id, tenant, queue, priority_class, gpu_tier, recorded_at)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING""")) {
                ps.setString(1, t.jobId());
                ps.setString(2, tenant);
                ps.setString(3, t.queue());
                ps.setString(4, t.priorityClass());
                ps.setString(5, t.gpuTier());
                ps.setObject(6, time(now));
                return ps.executeUpdate();
            }
        });
    }

    public void recordCheckpoint(String eventId, String jobId, int attempt, Instant committedAt, Instant now) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO run_checkpoint (event_id, job_id, attempt, committed_at, recorded_at)
                    VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING""")) {
                ps.setString(1, eventId);
                ps.setString(2, jobId);
                ps.setInt(3, attempt);
                ps.setObject(4, time(committedAt));
                ps.setObject(5, time(now));
                return ps.executeUpdate();
            }
        });
    }

    /** Terms of the given jobs (absent ones are simply missing from the map). */
    public Map<String, JobTerms> terms(Collection<String> jobIds) {
        Map<String, JobTerms> out = new HashMap<>();
        if (jobIds.isEmpty()) {
            return out;
        }
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement(
                    "SELECT job_id, queue, priority_class, gpu_tier FROM job_terms WHERE job_id = ANY (?)")) {
                ps.setArray(1, s.getConnection().createArrayOf("text", jobIds.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.put(rs.getString(1), new JobTerms(rs.getString(1), rs.getString(2), rs.getString(3),
                                rs.getString(4)));
                    }
                }
            }
            return out;
        });
    }

    public Checkpoints checkpoints(Collection<String> jobIds) {
        Checkpoints out = Checkpoints.none();
        if (jobIds.isEmpty()) {
            return out;
        }
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement(
                    "SELECT job_id, attempt, committed_at FROM run_checkpoint WHERE job_id = ANY (?)")) {
                ps.setArray(1, s.getConnection().createArrayOf("text", jobIds.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(rs.getString(1), rs.getInt(2), instant(rs, 3));
                    }
                }
            }
            return out;
        });
    }

    public Optional<PriceBookRow> latestPriceBook() {
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT version, currency, document, applied_at, applied_by FROM price_book
                    ORDER BY version DESC LIMIT 1""");
                 ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(priceRow(rs)) : Optional.<PriceBookRow>empty();
            }
        });
    }

    /** The newest version stored, 0 when none is. */
    public long latestPriceBookVersion() {
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement(
                    "SELECT COALESCE(MAX(version), 0) FROM price_book");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        });
    }

    public List<PriceBookRow> priceBooks() {
        return tx.executeRead(s -> {
            List<PriceBookRow> out = new ArrayList<>();
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT version, currency, document, applied_at, applied_by FROM price_book ORDER BY version""");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(priceRow(rs));
                }
            }
            return out;
        });
    }

    /** Inserts the version; false when that version number exists already (someone applied one concurrently). */
    public boolean insertPriceBook(PriceBookRow row) {
        return tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO price_book (version, currency, document, applied_at, applied_by)
                    VALUES (?, ?, ?, ?, ?) ON CONFLICT (version) DO NOTHING""")) {
                ps.setLong(1, row.version());
                ps.setString(2, row.currency());
                ps.setString(3, row.document());
                ps.setObject(4, time(row.appliedAt()));
                ps.setString(5, row.appliedBy());
                return ps.executeUpdate() == 1;
            }
        });
    }

    /**
     * Writes the document and its lines in one transaction; false (and nothing written) when a document with its id
     * or its (tenant, month, sequence) exists already, i.e. it was issued before, or another instance issued another
     * document under that sequence number since the caller read the month's documents (its document, computed from
     * an older view, must then be dropped: {@code ON CONFLICT DO NOTHING} without a target covers both constraints).
     */
    public boolean insertDocument(Invoice inv) {
        return tx.executeWrite(s -> {
            Connection c = s.getConnection();
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO invoice_document (document_id, kind, tenant, month, time_zone, currency, sequence,
                                                  corrects, price_book_version, total, issued_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""")) {
                ps.setString(1, inv.documentId());
                ps.setString(2, inv.kind().name());
                ps.setString(3, inv.tenant());
                ps.setString(4, inv.month().toString());
                ps.setString(5, inv.month().zone().getId());
                ps.setString(6, inv.currency());
                ps.setInt(7, inv.sequence());
                ps.setString(8, inv.corrects());
                ps.setLong(9, inv.priceBookVersion());
                ps.setBigDecimal(10, inv.total());
                ps.setObject(11, time(inv.issuedAt()));
                if (ps.executeUpdate() == 0) {
                    return false;
                }
            }
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO invoice_line (document_id, line_no, job_id, gpu_model, component, kind, reason,
                                              unit_price, quantity, amount, mig_profile)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""")) {
                int n = 0;
                for (InvoiceLine l : inv.lines()) {
                    ps.setString(1, inv.documentId());
                    ps.setInt(2, n++);
                    ps.setString(3, l.jobId());
                    ps.setString(4, l.gpuModel());
                    ps.setString(5, l.component().name());
                    ps.setString(6, l.kind().name());
                    ps.setString(7, l.reason());
                    if (l.unitPrice() == null) {
                        ps.setNull(8, Types.NUMERIC);
                    } else {
                        ps.setBigDecimal(8, l.unitPrice());
                    }
                    ps.setLong(9, l.quantity());
                    ps.setBigDecimal(10, l.amount());
                    ps.setString(11, l.migProfile());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return true;
        });
    }

    /** The interval of a ledger row: the months it reaches. */
    public record Span(Instant from, Instant to) {
    }

    /**
     * The intervals of ledger rows starting before {@code before} that an input recorded at or after {@code since}
     * changes: the row itself, or the job's terms, or a checkpoint of its run. What the automatic issuing needs to
     * know which months older than the last one may have to be issued again; rows starting that early are rare among
     * the recent ones (long runs, late releases), so the answer is short.
     */
    public List<Span> spansChangedSince(Instant since, Instant before) {
        return tx.executeRead(s -> {
            List<Span> out = new ArrayList<>();
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT started_at, ended_at FROM usage_entry WHERE recorded_at >= ? AND started_at < ?
                    UNION
                    SELECT u.started_at, u.ended_at FROM job_terms t JOIN usage_entry u ON u.job_id = t.job_id
                    WHERE t.recorded_at >= ? AND u.started_at < ?
                    UNION
                    SELECT u.started_at, u.ended_at FROM run_checkpoint c
                    JOIN usage_entry u ON u.job_id = c.job_id AND u.attempt = c.attempt
                    WHERE c.recorded_at >= ? AND u.started_at < ?""")) {
                for (int i = 0; i < 3; i++) {
                    ps.setObject(2 * i + 1, time(since));
                    ps.setObject(2 * i + 2, time(before));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new Span(instant(rs, 1), instant(rs, 2)));
                    }
                }
            }
            return out;
        });
    }

    /**
     * Up to when the automatic issuing has looked at recorded inputs; before its first look, when the newest
     * document was issued (empty: nothing was ever issued).
     */
    public Optional<Instant> invoiceWatermark() {
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT COALESCE((SELECT looked_before FROM invoice_watermark WHERE id = 1),
                                    (SELECT MAX(issued_at) FROM invoice_document))""");
                 ResultSet rs = ps.executeQuery()) {
                rs.next();
                OffsetDateTime t = rs.getObject(1, OffsetDateTime.class);
                return Optional.ofNullable(t).map(OffsetDateTime::toInstant);
            }
        });
    }

    /** Moves the watermark to {@code to}, never back (another instance may have moved it further meanwhile). */
    public void advanceInvoiceWatermark(Instant to) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO invoice_watermark (id, looked_before) VALUES (1, ?)
                    ON CONFLICT (id) DO UPDATE SET looked_before = GREATEST(invoice_watermark.looked_before,
                                                                            EXCLUDED.looked_before)""")) {
                ps.setObject(1, time(to));
                return ps.executeUpdate();
            }
        });
    }

    /** Documents, oldest first; {@code tenant}/{@code month} null means any. */
    public List<Invoice> documents(String tenant, String month) {
        return tx.executeRead(s -> {
            Connection c = s.getConnection();
            List<Invoice> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT document_id, kind, tenant, month, time_zone, currency, sequence, corrects,
                           price_book_version, issued_at FROM invoice_document
                    WHERE (CAST(? AS TEXT) IS NULL OR tenant = ?) AND (CAST(? AS TEXT) IS NULL OR month = ?)
                    ORDER BY month, tenant, sequence""")) {
                ps.setString(1, tenant);
                ps.setString(2, tenant);
                ps.setString(3, month);
                ps.setString(4, month);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        BillingMonth m = BillingMonth.parse(rs.getString(4), ZoneId.of(rs.getString(5)));
                        out.add(new Invoice(rs.getString(1), Invoice.DocumentKind.valueOf(rs.getString(2)),
                                rs.getString(3), m, rs.getString(6), List.of(), instant(rs, 10), rs.getLong(9),
                                rs.getString(8), rs.getInt(7)));
                    }
                }
            }
            List<Invoice> full = new ArrayList<>(out.size());
            for (Invoice d : out) {
                full.add(withLines(c, d));
            }
            return full;
        });
    }

    public Optional<Invoice> document(String documentId) {
        return tx.executeRead(s -> {
            Connection c = s.getConnection();
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT document_id, kind, tenant, month, time_zone, currency, sequence, corrects,
                           price_book_version, issued_at FROM invoice_document WHERE document_id = ?""")) {
                ps.setString(1, documentId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.<Invoice>empty();
                    }
                    BillingMonth m = BillingMonth.parse(rs.getString(4), ZoneId.of(rs.getString(5)));
                    Invoice d = new Invoice(rs.getString(1), Invoice.DocumentKind.valueOf(rs.getString(2)),
                            rs.getString(3), m, rs.getString(6), List.of(), instant(rs, 10), rs.getLong(9),
                            rs.getString(8), rs.getInt(7));
                    return Optional.of(withLines(c, d));
                }
            }
        });
    }

    private static Invoice withLines(Connection c, Invoice d) throws SQLException {
        List<InvoiceLine> lines = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT job_id, gpu_model, component, kind, reason, unit_price, quantity, amount, mig_profile
                FROM invoice_line
                WHERE document_id = ? ORDER BY line_no""")) {
            ps.setString(1, d.documentId());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    BigDecimal unit = rs.getBigDecimal(6);
                    lines.add(new InvoiceLine(rs.getString(1), rs.getString(2), Component.valueOf(rs.getString(3)),
                            LineKind.valueOf(rs.getString(4)), rs.getString(5),
                            unit == null ? null : io.gantry.billing.core.Money.canonical(unit), rs.getLong(7),
                            rs.getBigDecimal(8).setScale(d.minorDigits()), rs.getString(9)));
                }
            }
        }
        return new Invoice(d.documentId(), d.kind(), d.tenant(), d.month(), d.currency(), lines, d.issuedAt(),
                d.priceBookVersion(), d.corrects(), d.sequence());
    }

    /** Replaces every budget with {@code budgets}, in one transaction. */
    public void replaceBudgets(List<Budget> budgets, Instant now) {
        tx.executeWrite(s -> {
            Connection c = s.getConnection();
            try (PreparedStatement del = c.prepareStatement("DELETE FROM budget")) {
                del.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO budget (tenant, queue, amount, action, warn_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?)""")) {
                for (Budget b : budgets) {
                    ps.setString(1, b.tenant());
                    ps.setString(2, b.queue() == null ? "" : b.queue());
                    ps.setBigDecimal(3, b.limit());
                    ps.setString(4, b.action().name());
                    ps.setString(5, b.warnAt().stream().map(String::valueOf)
                            .collect(java.util.stream.Collectors.joining(",")));
                    ps.setObject(6, time(now));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return null;
        });
    }

    public List<Budget> budgets() {
        return tx.executeRead(s -> {
            List<Budget> out = new ArrayList<>();
            try (PreparedStatement ps = s.getConnection().prepareStatement(
                    "SELECT tenant, queue, amount, action, warn_at FROM budget ORDER BY tenant, queue");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    List<Integer> warnAt = new ArrayList<>();
                    for (String p : rs.getString(5).split(",")) {
                        if (!p.isBlank()) {
                            warnAt.add(Integer.parseInt(p.trim()));
                        }
                    }
                    out.add(new Budget(rs.getString(1), rs.getString(2).isEmpty() ? null : rs.getString(2),
                            rs.getBigDecimal(3), Budget.Action.valueOf(rs.getString(4)), warnAt));
                }
            }
            return out;
        });
    }

    /**
     * Records a granted allocation's per-node shares (zero-length entries) until its release is rated, with their MIG
     * instances as the release's ledger rows will have them, so a running job's spend is priced as its release will be.
     */
    public void recordOpen(List<io.gantry.billing.core.LedgerEntry> nodes) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO open_allocation_node (entry_id, allocation_id, tenant, job_id, attempt, node_id,
                                                      gpu_model, gpu_count, gpu_milli, cpu_millis, memory_mib,
                                                      granted_at, mig_instances)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (entry_id) DO NOTHING""")) {
                for (io.gantry.billing.core.LedgerEntry e : nodes) {
                    ps.setString(1, e.entryId());
                    ps.setString(2, e.allocationId());
                    ps.setString(3, e.tenant());
                    ps.setString(4, e.jobId());
                    ps.setInt(5, e.attempt());
                    ps.setString(6, e.nodeId());
                    ps.setString(7, e.gpuModel());
                    ps.setInt(8, e.gpuCount());
                    ps.setLong(9, e.gpuMilli());
                    ps.setLong(10, e.cpuMillis());
                    ps.setLong(11, e.memoryMiB());
                    ps.setObject(12, time(e.startedAt()));
                    ps.setString(13, io.gantry.billing.core.MigInstances.encode(e.migInstances()));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return null;
        });
    }

    /** Records a run's utilisation window once (by allocation and window start). */
    public void recordUtilisation(io.gantry.billing.core.Utilisation.Window w) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    INSERT INTO run_utilisation (allocation_id, window_from, window_to, tenant, job_id, attempt,
                                                 held_gpu_milli, used_gpu_milli, samples, idle_since)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (allocation_id, window_from) DO NOTHING""")) {
                ps.setString(1, w.allocationId());
                ps.setObject(2, time(w.from()));
                ps.setObject(3, time(w.to()));
                ps.setString(4, w.tenant());
                ps.setString(5, w.jobId());
                ps.setInt(6, w.attempt());
                ps.setLong(7, w.heldGpuMilli());
                ps.setLong(8, w.usedGpuMilli());
                ps.setInt(9, w.samples());
                ps.setObject(10, w.idleSince() == null ? null : time(w.idleSince()));
                return ps.executeUpdate();
            }
        });
    }

    /** Utilisation windows reaching into {@code [from, to)} ({@code tenant} null: every tenant's). */
    public List<io.gantry.billing.core.Utilisation.Window> utilisation(String tenant, Instant from, Instant to) {
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT tenant, job_id, attempt, allocation_id, window_from, window_to, held_gpu_milli,
                           used_gpu_milli, samples, idle_since FROM run_utilisation
                    WHERE (CAST(? AS TEXT) IS NULL OR tenant = ?) AND window_to > ? AND window_from < ?
                    ORDER BY allocation_id, window_from""")) {
                ps.setString(1, tenant);
                ps.setString(2, tenant);
                ps.setObject(3, time(from));
                ps.setObject(4, time(to));
                return utilisationRows(ps);
            }
        });
    }

    /** The newest window of every allocation still held ({@code open_allocation_node}), of {@code tenant} or all. */
    public List<io.gantry.billing.core.Utilisation.Window> latestOpenUtilisation(String tenant) {
        return tx.executeRead(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT DISTINCT ON (r.allocation_id) r.tenant, r.job_id, r.attempt, r.allocation_id,
                           r.window_from, r.window_to, r.held_gpu_milli, r.used_gpu_milli, r.samples, r.idle_since
                    FROM run_utilisation r
                    WHERE (CAST(? AS TEXT) IS NULL OR r.tenant = ?)
                      AND EXISTS (SELECT 1 FROM open_allocation_node o WHERE o.allocation_id = r.allocation_id)
                    ORDER BY r.allocation_id, r.window_to DESC""")) {
                ps.setString(1, tenant);
                ps.setString(2, tenant);
                return utilisationRows(ps);
            }
        });
    }

    private static List<io.gantry.billing.core.Utilisation.Window> utilisationRows(PreparedStatement ps)
            throws SQLException {
        List<io.gantry.billing.core.Utilisation.Window> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                OffsetDateTime idle = rs.getObject(10, OffsetDateTime.class);
                out.add(new io.gantry.billing.core.Utilisation.Window(rs.getString(1), rs.getString(2), rs.getInt(3),
                        rs.getString(4), instant(rs, 5), instant(rs, 6), rs.getLong(7), rs.getLong(8), rs.getInt(9),
                        idle == null ? null : idle.toInstant()));
            }
        }
        return out;
    }

    public void closeOpen(String allocationId) {
        tx.executeWrite(s -> {
            try (PreparedStatement ps = s.getConnection().prepareStatement(
                    "DELETE FROM open_allocation_node WHERE allocation_id = ?")) {
                ps.setString(1, allocationId);
                return ps.executeUpdate();
            }
        });
    }

    /**
     * Allocations of {@code tenant} still held, as provisional entries ending at {@code now} (never credited); an
     * allocation whose release is already in the ledger is left out, so it is never counted twice. Each carries the
     * MIG instances its release's row will carry, so a priced profile counts at its own price, not by its share
     * (rows recorded before instances were kept have none, and count by their share as they did).
     */
    public List<io.gantry.billing.core.LedgerEntry> openUntil(String tenant, Instant now) {
        return tx.executeRead(s -> {
            List<io.gantry.billing.core.LedgerEntry> out = new ArrayList<>();
            try (PreparedStatement ps = s.getConnection().prepareStatement("""
                    SELECT entry_id, allocation_id, tenant, job_id, attempt, node_id, gpu_model, gpu_count,
                           gpu_milli, cpu_millis, memory_mib, granted_at, mig_instances FROM open_allocation_node o
                    WHERE tenant = ? AND NOT EXISTS (SELECT 1 FROM usage_entry u WHERE u.allocation_id = o.allocation_id)
                    ORDER BY entry_id""")) {
                ps.setString(1, tenant);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Instant start = instant(rs, 12);
                        Instant end = now.isAfter(start) ? Instant.ofEpochMilli(now.toEpochMilli()) : start;
                        long d = end.toEpochMilli() - start.toEpochMilli();
                        long milli = rs.getLong(9);
                        out.add(new io.gantry.billing.core.LedgerEntry(rs.getString(1), rs.getString(3),
                                rs.getString(4), rs.getInt(5), rs.getString(2), rs.getString(6), rs.getString(7),
                                rs.getInt(8), start, end, d, Math.multiplyExact(milli, d) / 1000, milli,
                                Math.multiplyExact(milli, d), rs.getLong(10), rs.getLong(11), null,
                                io.gantry.billing.core.MigInstances.decode(rs.getString(13))));
                    }
                }
            }
            return out;
        });
    }

    private static PriceBookRow priceRow(ResultSet rs) throws SQLException {
        return new PriceBookRow(rs.getLong(1), rs.getString(2), rs.getString(3), instant(rs, 4), rs.getString(5));
    }

    private static OffsetDateTime time(Instant t) {
        return t.atOffset(ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rs, int col) throws SQLException {
        return rs.getObject(col, OffsetDateTime.class).toInstant();
    }
}
