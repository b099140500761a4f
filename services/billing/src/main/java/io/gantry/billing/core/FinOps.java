package io.gantry.billing.core;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * FinOps figures per tenant for a window: GPU time held, its share of the registered GPU capacity, what it cost,
 * how much of that went to runs of jobs that never succeeded, and the cost per successful job (everything the
 * tenant spent divided by the jobs that succeeded: failed and retried work makes a success dearer).
 *
 * <p>Idle allocations need GPU utilisation from the execution backends, which no event carries yet; they are not
 * computed here.
 */
public final class FinOps {
    public static final String SUCCEEDED = "RUN_SUCCEEDED";

    private FinOps() {
    }

    /**
     * @param allocationShare GPU time held / registered GPU capacity over the window, as a fraction with 6 decimals
     *                        (null when the window is unbounded or no capacity is known)
     * @param costPerSuccessfulJob null when no job succeeded
     */
    public record TenantView(String tenant, long gpuMicros, int jobs, int successfulJobs, BigDecimal cost,
                             BigDecimal costOfUnsuccessfulJobs, BigDecimal costPerSuccessfulJob,
                             BigDecimal allocationShare) {
    }

    /**
     * @param entries         ledger entries touching the window
     * @param lines           their rated lines for the window ({@link Pricing#rate})
     * @param clusterGpuMilli registered GPU capacity in thousandths of a GPU (0 when unknown)
     */
    public static List<TenantView> summarize(List<LedgerEntry> entries, List<RatedLine> lines, UsageWindow window,
                                             long clusterGpuMilli, int minorDigits) {
        Map<String, long[]> micros = new TreeMap<>();
        Map<String, Set<String>> jobs = new HashMap<>();
        Set<String> succeeded = new HashSet<>();
        for (LedgerEntry e : entries) {
            if (!Usage.touches(e, window)) {
                continue;
            }
            micros.computeIfAbsent(e.tenant(), t -> new long[1])[0] += Usage.gpuMicrosIn(e, window);
            jobs.computeIfAbsent(e.tenant(), t -> new HashSet<>()).add(e.jobId());
            if (SUCCEEDED.equals(e.releaseReason())) {
                succeeded.add(e.jobId());
            }
        }
        BigDecimal zero = BigDecimal.ZERO.setScale(minorDigits);
        Map<String, BigDecimal> cost = new HashMap<>();
        Map<String, BigDecimal> unsuccessful = new HashMap<>();
        for (RatedLine l : lines) {
            BigDecimal a = l.amount(minorDigits);
            cost.merge(l.tenant(), a, BigDecimal::add);
            if (!succeeded.contains(l.jobId())) {
                unsuccessful.merge(l.tenant(), a, BigDecimal::add);
            }
        }
        BigDecimal capacity = window.from() == null || window.to() == null || clusterGpuMilli <= 0 ? null
                : BigDecimal.valueOf(clusterGpuMilli).multiply(BigDecimal.valueOf(
                        window.to().toEpochMilli() - window.from().toEpochMilli()));
        List<TenantView> out = new ArrayList<>();
        for (Map.Entry<String, long[]> m : micros.entrySet()) {
            String tenant = m.getKey();
            int ok = (int) jobs.get(tenant).stream().filter(succeeded::contains).count();
            BigDecimal c = cost.getOrDefault(tenant, zero);
            out.add(new TenantView(tenant, m.getValue()[0], jobs.get(tenant).size(), ok, c,
                    unsuccessful.getOrDefault(tenant, zero),
                    ok == 0 ? null : c.divide(BigDecimal.valueOf(ok), minorDigits, Money.ROUNDING),
                    capacity == null || capacity.signum() == 0 ? null
                            : BigDecimal.valueOf(m.getValue()[0]).divide(capacity, 6, RoundingMode.HALF_EVEN)));
        }
        return out;
    }
}
