package io.gantry.queue.core;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/** GPU quota per tenant: a default and per-tenant overrides. Fixed for the life of a core. */
public record Quotas(int defaultGpus, Map<String, Integer> perTenant) {
    public Quotas {
        if (defaultGpus < 0) {
            throw new IllegalArgumentException("default GPU quota must be >= 0, was " + defaultGpus);
        }
        perTenant = Map.copyOf(Objects.requireNonNull(perTenant));
        perTenant.forEach((tenant, gpus) -> {
            if (gpus == null || gpus < 0) {
                throw new IllegalArgumentException("GPU quota of tenant " + tenant + " must be >= 0, was " + gpus);
            }
        });
    }

    public static Quotas uniform(int gpus) {
        return new Quotas(gpus, Map.of());
    }

    public int of(String tenant) {
        return perTenant.getOrDefault(tenant, defaultGpus);
    }

    /** Tenants with an explicit quota, sorted. */
    public Map<String, Integer> configured() {
        return new TreeMap<>(perTenant);
    }
}
