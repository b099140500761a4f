package io.gantry.billing.core;

import java.math.BigDecimal;

/**
 * Usage of one tenant on one GPU model within a window.
 *
 * @param gpuModel  {@code null} for CPU-only entries (which bill zero GPU time but still count as entries)
 * @param gpuMillis exact GPU-milliseconds inside the window
 * @param entries   ledger entries that overlap the window
 */
public record UsageRow(String tenant, String gpuModel, long gpuMillis, long entries) {

    /** GPU-seconds, exact: {@code gpuMillis / 1000} with three decimals. */
    public BigDecimal gpuSeconds() {
        return Usage.seconds(gpuMillis);
    }
}
