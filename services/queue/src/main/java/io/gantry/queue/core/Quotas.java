package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * GPU quota per tenant, in thousandths of a GPU: a default and per-tenant overrides. Fixed for the life of a core.
 * People write GPUs ({@code 12.5}); {@link #ofGpus} and the configuration readers convert.
 */
public record Quotas(long defaultMilli, Map<String, Long> perTenantMilli) {
    public Quotas {
        if (defaultMilli < 0) {
            throw new IllegalArgumentException("default GPU quota must be >= 0, was " + GpuShares.format(defaultMilli));
        }
        perTenantMilli = Map.copyOf(Objects.requireNonNull(perTenantMilli));
        perTenantMilli.forEach((tenant, milli) -> {
            if (milli == null || milli < 0) {
                throw new IllegalArgumentException("GPU quota of tenant " + tenant + " must be >= 0, was " + milli);
            }
        });
    }

    /** Every tenant gets {@code gpus} whole GPUs. */
    public static Quotas uniform(int gpus) {
        return ofGpus(gpus, Map.of());
    }

    /** Whole GPUs: a default and per-tenant overrides. */
    public static Quotas ofGpus(int defaultGpus, Map<String, Integer> perTenant) {
        Map<String, Long> milli = new LinkedHashMap<>();
        perTenant.forEach((t, g) -> milli.put(t, g == null ? null : (long) g * GpuShares.WHOLE));
        return new Quotas((long) defaultGpus * GpuShares.WHOLE, milli);
    }

    /** The tenant's quota, in thousandths of a GPU. */
    public long of(String tenant) {
        return perTenantMilli.getOrDefault(tenant, defaultMilli);
    }

    /** Tenants with an explicit quota (thousandths), sorted. */
    public Map<String, Long> configured() {
        return new TreeMap<>(perTenantMilli);
    }
}
