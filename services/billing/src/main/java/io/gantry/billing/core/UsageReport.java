package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.List;

/** Usage within a window, one row per (tenant, GPU model), ordered by tenant then model (CPU-only first). */
public record UsageReport(UsageWindow window, List<UsageRow> rows) {
    public UsageReport {
        rows = List.copyOf(rows);
    }

    public long totalGpuMillis() {
        long total = 0;
        for (UsageRow row : rows) {
            total = Math.addExact(total, row.gpuMillis());
        }
        return total;
    }

    public BigDecimal totalGpuSeconds() {
        return Usage.seconds(totalGpuMillis());
    }
}
