package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.List;

/** Usage within a window, one row per (tenant, GPU model), ordered by tenant then model (CPU-only first). */
public record UsageReport(UsageWindow window, List<UsageRow> rows) {
    public UsageReport {
        rows = List.copyOf(rows);
    }

    /** Exact GPU-microseconds of every row. */
    public long totalGpuMicros() {
        long total = 0;
        for (UsageRow row : rows) {
            total = Math.addExact(total, row.gpuMicros());
        }
        return total;
    }

    /** GPU-milliseconds, rounded down once over the exact total (exact for whole GPUs). */
    public long totalGpuMillis() {
        return totalGpuMicros() / 1000;
    }

    public BigDecimal totalGpuSeconds() {
        return Usage.secondsOfMicros(totalGpuMicros());
    }
}
