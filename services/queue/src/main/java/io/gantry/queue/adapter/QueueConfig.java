package io.gantry.queue.adapter;

import io.gantry.queue.core.Quotas;
import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.convert.format.MapFormat;
import io.micronaut.core.naming.conventions.StringConvention;

import java.util.HashMap;
import java.util.Map;

/** {@code gantry.queue.*}: read once at start; a change needs a restart. */
@ConfigurationProperties("gantry.queue")
public class QueueConfig {
    private int defaultGpuQuota = 64;
    private Map<String, Integer> quotas = new HashMap<>();

    public int getDefaultGpuQuota() {
        return defaultGpuQuota;
    }

    public void setDefaultGpuQuota(int defaultGpuQuota) {
        this.defaultGpuQuota = defaultGpuQuota;
    }

    public Map<String, Integer> getQuotas() {
        return quotas;
    }

    /** Raw keys: tenant names such as {@code team-a} must not be re-cased. */
    public void setQuotas(@MapFormat(keyFormat = StringConvention.RAW, transformation = MapFormat.MapTransformation.FLAT)
                          Map<String, Integer> quotas) {
        this.quotas = new HashMap<>(quotas);
    }

    public Quotas toQuotas() {
        return new Quotas(defaultGpuQuota, quotas);
    }
}
