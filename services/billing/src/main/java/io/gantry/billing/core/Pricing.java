package io.gantry.billing.core;

import io.gantry.model.GpuShares;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns ledger entries into money: each entry's part inside a window is cut at every instant a price or factor
 * changes, and each piece is priced with what was in force during it. Pieces with the same job, model, component,
 * kind and unit price add up into one line, exactly (integer quantities).
 *
 * <p>Because the cut points and the window overlap are both additive, the rating of a window is the sum of the
 * ratings of any partition of it: per line key the quantities add up exactly, and so do the exact amounts
 * ({@link RatedLine#exactNumerator()}). Rounding happens afterwards, once per invoice line.
 *
 * <p>Credits: an entry released for a credited reason (a node failure; a preemption when the policy says so) also
 * yields a negative GPU line for the time from the run's last committed checkpoint (or its start) to the release,
 * priced exactly like the usage it gives back.
 */
public final class Pricing {
    private Pricing() {
    }

    public static List<RatedLine> rate(Iterable<LedgerEntry> entries, UsageWindow window, PriceBook book,
                                       Map<String, JobTerms> terms, Checkpoints checkpoints, CreditPolicy policy) {
        List<Instant> cuts = book.changeInstants();
        Map<RatedLine.Key, RatedLine> lines = new LinkedHashMap<>();
        for (LedgerEntry e : entries) {
            long start = e.startedAt().toEpochMilli();
            long end = e.endedAt().toEpochMilli();
            long lo = window.from() == null ? start : Math.max(start, window.from().toEpochMilli());
            long hi = window.to() == null ? end : Math.min(end, window.to().toEpochMilli());
            if (hi <= lo) {
                continue;
            }
            JobTerms t = terms.getOrDefault(e.jobId(), JobTerms.unknown(e.jobId()));
            priceSegments(e, t, lo, hi, cuts, book, LineKind.USAGE, null, lines);
            if (policy.credits(e.releaseReason()) && e.gpuMilli() > 0) {
                long lostFrom = checkpoints.lostFrom(e.jobId(), e.attempt(), e.startedAt(), e.endedAt())
                        .toEpochMilli();
                long cLo = Math.max(lo, lostFrom);
                if (hi > cLo) {
                    priceSegments(e, t, cLo, hi, cuts, book, LineKind.CREDIT, e.releaseReason(), lines);
                }
            }
        }
        List<RatedLine> out = new ArrayList<>(lines.values());
        out.removeIf(l -> l.quantity() == 0);
        out.sort(RatedLine.ORDER);
        return out;
    }

    private static void priceSegments(LedgerEntry e, JobTerms t, long lo, long hi, List<Instant> cuts,
                                      PriceBook book, LineKind kind, String reason,
                                      Map<RatedLine.Key, RatedLine> lines) {
        long a = lo;
        for (int i = 0; i <= cuts.size(); i++) {
            long cut = i < cuts.size() ? cuts.get(i).toEpochMilli() : Long.MAX_VALUE;
            if (cut <= a) {
                continue;
            }
            long b = Math.min(cut, hi);
            piece(e, t, a, b, book, kind, reason, lines);
            a = b;
            if (a >= hi) {
                break;
            }
        }
    }

    private static void piece(LedgerEntry e, JobTerms t, long a, long b, PriceBook book, LineKind kind,
                              String reason, Map<RatedLine.Key, RatedLine> lines) {
        Instant at = Instant.ofEpochMilli(a);
        long millis = b - a;
        long sign = kind == LineKind.CREDIT ? -1 : 1;
        BigDecimal factor = book.factor(t.queue(), t.priorityClass(), at);
        if (e.gpuMilli() > 0 && e.gpuModel() != null) {
            // a MIG profile with a price of its own is billed per instance on its own line; the rest of what the
            // node held (whole GPUs, fractions, other instances) by its thousandths at the model's price
            long byShare = e.gpuMilli();
            for (Map.Entry<String, Integer> m : e.migInstances().entrySet()) {
                BigDecimal own = book.migPrice(e.gpuModel(), m.getKey(), at);
                if (own != null) {
                    byShare -= (long) GpuShares.migMilli(m.getKey()) * m.getValue();
                    add(lines, new RatedLine(e.tenant(), e.jobId(), e.gpuModel(), Component.MIG, kind, reason,
                            times(own, factor), sign * Math.multiplyExact((long) m.getValue(), millis), m.getKey()));
                }
            }
            if (byShare > 0) {
                add(lines, e, Component.GPU, kind, reason, times(book.gpuPrice(e.gpuModel(), t.gpuTier(), at), factor),
                        sign * Math.multiplyExact(byShare, millis));
            }
        }
        if (kind == LineKind.CREDIT) {
            // a fault credit gives back GPU time; CPU and memory on the failed node are not credited
            return;
        }
        BigDecimal cpu = book.cpuPrice(at);
        if (e.cpuMillis() > 0 && cpu != null) {
            add(lines, e, Component.CPU, kind, reason, times(cpu, factor), Math.multiplyExact(e.cpuMillis(), millis));
        }
        BigDecimal mem = book.memoryPrice(at);
        if (e.memoryMiB() > 0 && mem != null) {
            add(lines, e, Component.MEMORY, kind, reason, times(mem, factor),
                    Math.multiplyExact(e.memoryMiB(), millis));
        }
    }

    private static BigDecimal times(BigDecimal price, BigDecimal factor) {
        return price == null ? null : Money.canonical(price.multiply(factor));
    }

    private static void add(Map<RatedLine.Key, RatedLine> lines, LedgerEntry e, Component c, LineKind kind,
                            String reason, BigDecimal unitPrice, long quantity) {
        add(lines, new RatedLine(e.tenant(), e.jobId(), e.gpuModel(), c, kind, reason, unitPrice, quantity));
    }

    private static void add(Map<RatedLine.Key, RatedLine> lines, RatedLine line) {
        lines.merge(line.key(), line, (old, neu) -> old.plus(neu.quantity()));
    }
}
