package io.gantry.launcher.load;

import java.util.Arrays;
import java.util.Collection;

/** Nearest-rank percentiles over a finished set of samples (all of them are kept: a run has at most ~10^5). */
public final class Percentiles {
    private final long[] sorted;

    private Percentiles(long[] sorted) {
        this.sorted = sorted;
    }

    public static Percentiles of(Collection<Long> values) {
        long[] a = new long[values.size()];
        int i = 0;
        for (Long v : values) {
            a[i++] = v;
        }
        Arrays.sort(a);
        return new Percentiles(a);
    }

    public static Percentiles of(long[] values) {
        long[] a = values.clone();
        Arrays.sort(a);
        return new Percentiles(a);
    }

    public int count() {
        return sorted.length;
    }

    /** The q-quantile (0 < q <= 1) by nearest rank, or -1 when there is no sample. */
    public long at(double q) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    public long max() {
        return sorted.length == 0 ? -1 : sorted[sorted.length - 1];
    }

    public double mean() {
        if (sorted.length == 0) {
            return -1;
        }
        double s = 0;
        for (long v : sorted) {
            s += v;
        }
        return s / sorted.length;
    }
}
