package io.gantry.placement.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns the backend's GPU utilisation samples into one fact per run and window: how much of what the run holds was
 * busy on average. A sample (node, GPU index, percent busy) is taken to describe the time since the previous sample,
 * as {@code nvidia-smi}'s {@code utilization.gpu} does; a run's share of a GPU (whole, a fraction, a MIG instance's
 * parent GPU) is weighted by the thousandths it holds of it. GPUs the backend did not report count in neither figure.
 *
 * <p>A run's windows follow each other: one closes at the first sample at least {@code window} after it opened; a run
 * no longer live closes its last, shorter window at its last sample. So the facts are bounded by runs x time / window,
 * whatever the number of GPUs or samples. A run is idle while every sample is at most {@code idlePercent} of what it
 * holds; {@code idleSince} is where its current idle stretch began (the previous sample).
 *
 * <p>Not thread-safe; holds no clock: time is what the caller passes.
 */
public final class UtilisationSampler {
    /** One closed window of one run. Amounts in thousandths of a GPU. */
    public record Window(String jobId, String tenant, int attempt, String allocationId, Instant from, Instant to,
                         long heldGpuMilli, long usedGpuMilli, int samples, Instant idleSince) {
    }

    private static final class Run {
        final Allocation allocation;
        Instant windowFrom;
        Instant last;
        /** Thousandths held x milliseconds, and thousandths x percent busy x milliseconds, since windowFrom. */
        long heldMilliMs;
        long usedMilliPctMs;
        int samples;
        Instant idleSince;

        Run(Allocation allocation, Instant at) {
            this.allocation = allocation;
            this.windowFrom = at;
            this.last = at;
        }
    }

    private final Duration window;
    private final int idlePercent;
    private final Map<String, Run> runs = new TreeMap<>();

    public UtilisationSampler(Duration window, int idlePercent) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be > 0, was " + window);
        }
        if (idlePercent < 0 || idlePercent > 100) {
            throw new IllegalArgumentException("idlePercent must be 0-100, was " + idlePercent);
        }
        this.window = window;
        this.idlePercent = idlePercent;
    }

    /**
     * Records one sample of every reported GPU ({@code busy}: node -> GPU index -> percent 0-100) for the live
     * allocations, and returns the windows that closed, in allocation id order.
     */
    public List<Window> observe(Instant now, Map<String, Map<Integer, Integer>> busy, Collection<Allocation> live) {
        Objects.requireNonNull(now, "now");
        List<Window> closed = new ArrayList<>();
        Set<String> liveIds = new HashSet<>();
        for (Allocation a : live) {
            liveIds.add(a.allocationId());
            long[] sample = sample(a, busy);
            if (sample[0] == 0) {
                continue; // nothing of it reported now: the window waits for the next sample
            }
            Run r = runs.get(a.allocationId());
            if (r == null) {
                runs.put(a.allocationId(), new Run(a, now));
                continue; // the first sample only anchors: it describes time before the run was watched
            }
            long dt = now.toEpochMilli() - r.last.toEpochMilli();
            if (dt <= 0) {
                continue;
            }
            r.heldMilliMs = Math.addExact(r.heldMilliMs, Math.multiplyExact(sample[0], dt));
            r.usedMilliPctMs = Math.addExact(r.usedMilliPctMs, Math.multiplyExact(sample[1], dt));
            r.samples++;
            boolean idle = sample[1] <= sample[0] * idlePercent;
            r.idleSince = !idle ? null : r.idleSince != null ? r.idleSince : r.last;
            r.last = now;
            if (!now.isBefore(r.windowFrom.plus(window))) {
                closed.add(close(r));
            }
        }
        for (Run r : List.copyOf(runs.values())) {
            if (!liveIds.contains(r.allocation.allocationId())) {
                runs.remove(r.allocation.allocationId());
                if (r.samples > 0) {
                    closed.add(close(r));
                }
            }
        }
        closed.sort(java.util.Comparator.comparing(Window::allocationId));
        return closed;
    }

    /** How many runs are being watched (for tests and gauges). */
    public int watched() {
        return runs.size();
    }

    private static Window close(Run r) {
        long span = r.last.toEpochMilli() - r.windowFrom.toEpochMilli();
        Allocation a = r.allocation;
        Window w = new Window(a.jobId(), a.tenant(), a.attempt(), a.allocationId(), r.windowFrom, r.last,
                r.heldMilliMs / span, r.usedMilliPctMs / 100 / span, r.samples, r.idleSince);
        r.windowFrom = r.last;
        r.heldMilliMs = 0;
        r.usedMilliPctMs = 0;
        r.samples = 0;
        return w;
    }

    /** {thousandths held on reported GPUs, thousandths x percent busy}. */
    private static long[] sample(Allocation a, Map<String, Map<Integer, Integer>> busy) {
        long held = 0;
        long used = 0;
        for (PlacedTask t : a.placements()) {
            Map<Integer, Integer> node = busy.get(t.nodeId());
            if (node == null) {
                continue;
            }
            for (int index : t.gpuIndices()) {
                Integer pct = node.get(index);
                if (pct != null) {
                    held += 1000;
                    used += 1000L * clamp(pct);
                }
            }
            for (GpuShare s : t.gpuShares()) {
                Integer pct = node.get(s.index());
                if (pct != null) {
                    held += s.milli();
                    used += (long) s.milli() * clamp(pct);
                }
            }
        }
        return new long[] {held, used};
    }

    private static int clamp(int pct) {
        return Math.max(0, Math.min(100, pct));
    }
}
