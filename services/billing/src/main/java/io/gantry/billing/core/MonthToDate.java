package io.gantry.billing.core;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Month-to-date GPU time from the announced ledger entries ({@code UsageRecorded} on {@code billing.usage-events}):
 * the arithmetic of billing's Streams aggregation, kept here so it is the same as the invoices'.
 *
 * <p>An entry is cut into calendar months of the billing time zone ({@link BillingMonth}) exactly as {@link Usage}
 * cuts it for any window, so the parts of an entry spanning a month boundary add up to the entry, and a month's
 * total is what {@code GET /v1/usage} answers for that month. It counts as an entry in every month it touches (like
 * {@link UsageRow#entries()}).
 *
 * <p>An announcement carries whole GPUs ({@code gpuCount}) and {@code gpuMillis} (GPU-microseconds / 1000, rounded
 * down), not the thousandths of a GPU held; {@link #heldMilli} recovers them, exactly whenever the entry lasted at
 * least a second or held only whole GPUs.
 *
 * <p>Duplicates are recognised per month in which an entry ends; months more than {@code openMonths} before the
 * newest such month are closed: their duplicates are no longer remembered and any entry ending in them is no longer
 * counted (it is still in the ledger and on invoices), so the memory of seen entries stays bounded.
 */
public final class MonthToDate {
    private MonthToDate() {
    }

    /** The GPU-microseconds of one entry that fall into one month. */
    public record Part(BillingMonth month, long gpuMicros) {
        public Part {
            Objects.requireNonNull(month, "month");
        }
    }

    /** What a (tenant, month, GPU model) has added up to: exact GPU-microseconds and the entries touching it. */
    public record Totals(long gpuMicros, long entries) {
        public static final Totals NONE = new Totals(0, 0);

        public Totals {
            if (gpuMicros < 0 || entries < 0) {
                throw new IllegalArgumentException("totals must not be negative");
            }
        }

        /** One more entry with this part of it. */
        public Totals plus(Part part) {
            return new Totals(Math.addExact(gpuMicros, part.gpuMicros()), Math.addExact(entries, 1));
        }

        public Totals plus(Totals other) {
            return new Totals(Math.addExact(gpuMicros, other.gpuMicros), Math.addExact(entries, other.entries));
        }

        /** GPU-milliseconds, rounded down once over the exact total (as {@link UsageRow} does). */
        public long gpuMillis() {
            return gpuMicros / 1000;
        }
    }

    /**
     * Thousandths of a GPU an announced entry held, from what the announcement carries: the smallest {@code m >=
     * 1000 x gpuCount} with {@code floor(m x durationMillis / 1000) = gpuMillis}. It is the held figure itself when
     * only whole GPUs were held or the entry lasted at least 1000 ms (one more thousandth then adds at least one
     * GPU-millisecond, so only one {@code m} fits); for a shorter fractional entry the whole entry is still right to
     * the GPU-millisecond and off by less than one GPU-millisecond in GPU-microseconds.
     *
     * @throws IllegalArgumentException naming {@code gpuMillis} when no holding gives these figures
     */
    public static long heldMilli(int gpuCount, long gpuMillis, long durationMillis) {
        if (gpuCount < 0 || gpuMillis < 0 || durationMillis < 0) {
            throw new IllegalArgumentException("gpuMillis: gpuCount, gpuMillis and durationMillis must be >= 0");
        }
        long whole = 1000L * gpuCount;
        if (durationMillis == 0) {
            if (gpuMillis != 0) {
                throw new IllegalArgumentException("gpuMillis: must be 0 for a zero-length entry");
            }
            return whole;
        }
        long scaled = Math.multiplyExact(gpuMillis, 1000L);
        long m = Math.max(whole, (scaled + durationMillis - 1) / durationMillis);
        if (Math.multiplyExact(m, durationMillis) / 1000 != gpuMillis) {
            throw new IllegalArgumentException("gpuMillis: " + gpuMillis + " is less than " + gpuCount
                    + " whole GPUs for " + durationMillis + " ms");
        }
        return m;
    }

    /** An announced entry as a ledger entry (GPU time only), its thousandths of a GPU recovered by {@link #heldMilli}. */
    public static LedgerEntry announced(String entryId, String tenant, String jobId, int attempt, String allocationId,
                                        String nodeId, String gpuModel, int gpuCount, Instant startedAt,
                                        Instant endedAt, long durationMillis, long gpuMillis) {
        long milli = heldMilli(gpuCount, gpuMillis, durationMillis);
        return new LedgerEntry(entryId, tenant, jobId, attempt, allocationId, nodeId, gpuModel, gpuCount, startedAt,
                endedAt, durationMillis, gpuMillis, milli, Math.multiplyExact(milli, durationMillis));
    }

    /**
     * The entry cut into the months of {@code zone} it touches, oldest first, each with its GPU-microseconds inside
     * that month ({@link Usage#gpuMicrosIn}); a zero-length entry belongs to the month of its instant.
     */
    public static List<Part> split(LedgerEntry entry, ZoneId zone) {
        List<Part> parts = new ArrayList<>();
        BillingMonth month = BillingMonth.containing(entry.startedAt(), zone);
        while (true) {
            UsageWindow window = month.window();
            if (Usage.touches(entry, window)) {
                parts.add(new Part(month, Usage.gpuMicrosIn(entry, window)));
            }
            if (!month.to().isBefore(entry.endedAt())) {
                return parts;
            }
            month = new BillingMonth(month.month().plusMonths(1), zone);
        }
    }

    /** The month whose set of seen entries recognises a duplicate of this entry: the month it ends in. */
    public static YearMonth dedupMonth(LedgerEntry entry, ZoneId zone) {
        return BillingMonth.containing(entry.endedAt(), zone).month();
    }

    /** The oldest month still open when {@code newest} is the newest month an entry ended in. */
    public static YearMonth firstOpenMonth(YearMonth newest, int openMonths) {
        if (openMonths < 0) {
            throw new IllegalArgumentException("openMonths: must be >= 0");
        }
        return newest.minusMonths(openMonths);
    }

    /**
     * Which month "to date" means: the later of the month of {@code now} and the newest month with usage, so the
     * figures follow a cluster whose (simulated) time runs ahead of the clock, and start afresh when a month begins.
     */
    public static BillingMonth current(Instant now, ZoneId zone, YearMonth newestWithUsage) {
        BillingMonth byClock = BillingMonth.containing(now, zone);
        return newestWithUsage == null || !newestWithUsage.isAfter(byClock.month()) ? byClock
                : new BillingMonth(newestWithUsage, zone);
    }
}
