package io.gantry.billing.core;

import java.math.BigDecimal;

/**
 * Usage of one tenant on one GPU model within a window.
 *
 * @param gpuModel  {@code null} for CPU-only entries (which bill zero GPU time but still count as entries)
 * @param gpuMillis GPU-milliseconds inside the window: {@code gpuMicros / 1000}, rounded down (exact for whole GPUs)
 * @param entries   ledger entries that overlap the window
 * @param gpuMicros exact GPU-microseconds inside the window (fractions and MIG shares included)
 */
public record UsageRow(String tenant, String gpuModel, long gpuMillis, long entries, long gpuMicros) {
    public UsageRow {
        if (gpuMillis != gpuMicros / 1000) {
            throw new IllegalArgumentException("gpuMillis must be gpuMicros / 1000");
        }
    }

    /** Whole GPUs only. */
    public UsageRow(String tenant, String gpuModel, long gpuMillis, long entries) {
        this(tenant, gpuModel, gpuMillis, entries, Math.multiplyExact(gpuMillis, 1000));
    }

    /** GPU-seconds, exact: three decimals for whole GPUs, up to six with fractions. */
    public BigDecimal gpuSeconds() {
        return Usage.secondsOfMicros(gpuMicros);
    }
}
