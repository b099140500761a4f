package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Usage in a window: each entry contributes {@code gpuMilli x overlap(entry, window)} GPU-microseconds (thousandths
 * of a GPU times milliseconds; {@code gpuCount x overlap} GPU-milliseconds for whole GPUs).
 *
 * <p>Because overlap is additive over adjacent half-open windows, the usage of a window equals the sum of the
 * usage of any partition of it into sub-windows, to the millisecond.
 */
public final class Usage {
    private static final Comparator<String> NULLS_FIRST = Comparator.nullsFirst(Comparator.naturalOrder());

    private Usage() {
    }

    /** GPU-milliseconds of one entry inside the window, rounded down (exact for whole GPUs). */
    public static long gpuMillisIn(LedgerEntry entry, UsageWindow window) {
        return gpuMicrosIn(entry, window) / 1000;
    }

    /** Exact GPU-microseconds (thousandths of a GPU x milliseconds) of one entry inside the window. */
    public static long gpuMicrosIn(LedgerEntry entry, UsageWindow window) {
        long overlap = window.overlapMillis(entry.startedAt().toEpochMilli(), entry.endedAt().toEpochMilli());
        return Math.multiplyExact(entry.gpuMilli(), overlap);
    }

    /** Whether the entry belongs to the window at all (positive overlap, or a zero-length entry inside it). */
    public static boolean touches(LedgerEntry entry, UsageWindow window) {
        long start = entry.startedAt().toEpochMilli();
        long end = entry.endedAt().toEpochMilli();
        return start == end ? window.contains(start) : window.overlapMillis(start, end) > 0;
    }

    public static UsageReport summarize(Iterable<LedgerEntry> entries, UsageWindow window) {
        Objects.requireNonNull(window, "window");
        Map<String, Map<String, long[]>> byTenant = new TreeMap<>();
        for (LedgerEntry e : entries) {
            if (!touches(e, window)) {
                continue;
            }
            long[] acc = byTenant.computeIfAbsent(e.tenant(), t -> new TreeMap<>(NULLS_FIRST))
                    .computeIfAbsent(e.gpuModel(), m -> new long[2]);
            acc[0] = Math.addExact(acc[0], gpuMicrosIn(e, window));
            acc[1]++;
        }
        List<UsageRow> rows = new ArrayList<>();
        byTenant.forEach((tenant, models) -> models.forEach(
                (model, acc) -> rows.add(new UsageRow(tenant, model, acc[0] / 1000, acc[1], acc[0]))));
        return new UsageReport(window, rows);
    }

    /** Exact seconds with three decimals: 1234 ms is 1.234, never 1.2339999. */
    public static BigDecimal seconds(long millis) {
        return BigDecimal.valueOf(millis, 3);
    }

    /** Exact seconds of GPU-microseconds: three decimals when that is exact (whole GPUs), else up to six. */
    public static BigDecimal secondsOfMicros(long micros) {
        BigDecimal s = BigDecimal.valueOf(micros, 6).stripTrailingZeros();
        return s.scale() < 3 ? s.setScale(3) : s;
    }
}
