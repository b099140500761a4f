package io.gantry.billing.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * GPU time held vs used, and idle allocations, from placement's utilisation windows ({@code RunUtilisationSampled}).
 * Only GPUs the backend reported count: "held" here is the sampled part of what the ledger holds, so the ratio
 * used / held is what FinOps reads; the ledger stays the source of billed time.
 */
public final class Utilisation {
    private Utilisation() {
    }

    /** One run's window as billing keeps it. Amounts in thousandths of a GPU, averaged over the window. */
    public record Window(String tenant, String jobId, int attempt, String allocationId, Instant from, Instant to,
                         long heldGpuMilli, long usedGpuMilli, int samples, Instant idleSince) {
        public Window {
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(allocationId, "allocationId");
            Objects.requireNonNull(from, "from");
            Objects.requireNonNull(to, "to");
            if (to.isBefore(from)) {
                throw new IllegalArgumentException("windowTo: must not be before windowFrom");
            }
            if (heldGpuMilli < 0 || usedGpuMilli < 0 || usedGpuMilli > heldGpuMilli) {
                throw new IllegalArgumentException("usedGpuMilli: must be within 0 and heldGpuMilli " + heldGpuMilli
                        + ", was " + usedGpuMilli);
            }
        }
    }

    /**
     * A tenant's sampled GPU time in a window: held and used in GPU-microseconds (thousandths x milliseconds), and
     * used as a percentage of held (2 decimals, rounded down; null when nothing was held).
     */
    public record TenantUtilisation(String tenant, long heldGpuMicros, long usedGpuMicros,
                                    java.math.BigDecimal usedPercent) {
    }

    /** A run whose GPUs have been idle since {@code idleSince}, per its latest window. */
    public record IdleAllocation(String tenant, String jobId, int attempt, String allocationId, Instant idleSince,
                                 Duration idleFor, long heldGpuMilli, long usedGpuMilli) {
    }

    /**
     * Per tenant, held and used GPU time of the windows' parts inside {@code window} (a window cut by it counts
     * pro rata of its time, exactly), in tenant order.
     */
    public static List<TenantUtilisation> heldVsUsed(List<Window> windows, UsageWindow window) {
        Map<String, long[]> byTenant = new TreeMap<>();
        for (Window w : windows) {
            long lo = w.from().toEpochMilli();
            long hi = w.to().toEpochMilli();
            if (window.from() != null) {
                lo = Math.max(lo, window.from().toEpochMilli());
            }
            if (window.to() != null) {
                hi = Math.min(hi, window.to().toEpochMilli());
            }
            long[] acc = byTenant.computeIfAbsent(w.tenant(), t -> new long[2]);
            if (hi <= lo) {
                continue;
            }
            acc[0] = Math.addExact(acc[0], Math.multiplyExact(w.heldGpuMilli(), hi - lo));
            acc[1] = Math.addExact(acc[1], Math.multiplyExact(w.usedGpuMilli(), hi - lo));
        }
        List<TenantUtilisation> out = new ArrayList<>();
        byTenant.forEach((t, a) -> out.add(new TenantUtilisation(t, a[0], a[1], a[0] == 0 ? null
                : java.math.BigDecimal.valueOf(a[1]).multiply(java.math.BigDecimal.valueOf(100))
                .divide(java.math.BigDecimal.valueOf(a[0]), 2, java.math.RoundingMode.DOWN))));
        return out;
    }

    /**
     * The runs among {@code latest} (each run's newest window, of allocations still held) idle for at least
     * {@code minIdle} at {@code now}, longest idle first.
     */
    public static List<IdleAllocation> idle(List<Window> latest, Instant now, Duration minIdle) {
        List<IdleAllocation> out = new ArrayList<>();
        for (Window w : latest) {
            if (w.idleSince() == null) {
                continue;
            }
            Duration idleFor = Duration.between(w.idleSince(), now);
            if (idleFor.compareTo(minIdle) >= 0) {
                out.add(new IdleAllocation(w.tenant(), w.jobId(), w.attempt(), w.allocationId(), w.idleSince(), idleFor,
                        w.heldGpuMilli(), w.usedGpuMilli()));
            }
        }
        out.sort(Comparator.comparing(IdleAllocation::idleSince).thenComparing(IdleAllocation::allocationId));
        return out;
    }
}
