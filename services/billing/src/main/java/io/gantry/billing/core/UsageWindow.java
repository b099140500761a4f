package io.gantry.billing.core;

import java.time.Instant;

/**
 * A half-open query window {@code [from, to)}; a {@code null} bound is unbounded on that side.
 *
 * <p>Bounds must be whole milliseconds: the ledger is in milliseconds, and a finer bound would make a
 * window's usage a fraction of a GPU-millisecond.
 */
public record UsageWindow(Instant from, Instant to) {
    /** The years 1 to 9999: every bound has an epoch millisecond, and the ledger's database can compare with it. */
    public static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
    public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    public UsageWindow {
        requireInRange(from, "from");
        requireInRange(to, "to");
        requireMillis(from, "from");
        requireMillis(to, "to");
        if (from != null && to != null && !from.isBefore(to)) {
            throw new IllegalArgumentException("to: must be after from");
        }
    }

    public static UsageWindow all() {
        return new UsageWindow(null, null);
    }

    /** Milliseconds of {@code [start, end)} that fall inside this window. */
    public long overlapMillis(long start, long end) {
        long lo = from == null ? start : Math.max(start, from.toEpochMilli());
        long hi = to == null ? end : Math.min(end, to.toEpochMilli());
        return Math.max(0, hi - lo);
    }

    /** Whether an instant lies in the window (used for zero-length entries, which have no overlap to measure). */
    public boolean contains(long instant) {
        return (from == null || instant >= from.toEpochMilli()) && (to == null || instant < to.toEpochMilli());
    }

    private static void requireInRange(Instant t, String field) {
        if (t != null && (t.isBefore(EARLIEST) || t.isAfter(LATEST))) {
            throw new IllegalArgumentException(field + ": must be between " + EARLIEST + " and " + LATEST);
        }
    }

    private static void requireMillis(Instant t, String field) {
        if (t != null && t.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException(field + ": must have at most millisecond precision");
        }
    }
}
