package io.gantry.queue.config;

import io.gantry.model.GpuShares;
import io.gantry.queue.core.ConfigException;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.Quotas;
import io.micronaut.context.annotation.ConfigurationProperties;
import io.micronaut.core.convert.format.MapFormat;
import io.micronaut.core.naming.conventions.StringConvention;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code gantry.queue.*}: read at start. The fair-share configuration itself (the YAML file) is reloaded while
 * running, see {@link LiveConfig}.
 */
@ConfigurationProperties("gantry.queue")
public class QueueConfig {
    /** GPUs, fractions allowed (at most three decimals: quota is kept in thousandths of a GPU). */
    private BigDecimal defaultGpuQuota = BigDecimal.valueOf(64);
    private Map<String, BigDecimal> quotas = new HashMap<>();
    private String configFile;
    private String halfLife = "7d";
    private String starvationWait = "30m";
    private String parkedRecheck = "5m";
    private String configPoll = "5s";
    private String preemptionGracePeriod = "30s";
    private String preemptionMinRunTime = "5m";

    public String getConfigPoll() {
        return configPoll;
    }

    public void setConfigPoll(String configPoll) {
        this.configPoll = configPoll;
    }

    /** How often the configuration file is checked for changes. */
    public Duration configPollInterval() {
        Duration d = FairShareConfig.parseDuration(configPoll);
        if (d == null || d.isNegative() || d.isZero()) {
            throw new ConfigException(List.of("gantry.queue.config-poll: must be a duration > 0 such as 5s, was '"
                    + configPoll + "'"));
        }
        return d;
    }

    public String getParkedRecheck() {
        return parkedRecheck;
    }

    public void setParkedRecheck(String parkedRecheck) {
        this.parkedRecheck = parkedRecheck;
    }

    /** How often every parked job is offered to placement once more, whatever capacity was reported. */
    public Duration parkedRecheckInterval() {
        Duration d = FairShareConfig.parseDuration(parkedRecheck);
        if (d == null || d.isNegative() || d.isZero()) {
            throw new ConfigException(List.of("gantry.queue.parked-recheck: must be a duration > 0 such as 5m, was '"
                    + parkedRecheck + "'"));
        }
        return d;
    }

    public String getConfigFile() {
        return configFile;
    }

    public void setConfigFile(String configFile) {
        this.configFile = configFile;
    }

    public String getHalfLife() {
        return halfLife;
    }

    public void setHalfLife(String halfLife) {
        this.halfLife = halfLife;
    }

    public String getStarvationWait() {
        return starvationWait;
    }

    public void setStarvationWait(String starvationWait) {
        this.starvationWait = starvationWait;
    }

    public BigDecimal getDefaultGpuQuota() {
        return defaultGpuQuota;
    }

    public void setDefaultGpuQuota(BigDecimal defaultGpuQuota) {
        this.defaultGpuQuota = defaultGpuQuota;
    }

    public Map<String, BigDecimal> getQuotas() {
        return quotas;
    }

    /** Raw keys: tenant names such as {@code team-a} must not be re-cased. */
    public void setQuotas(@MapFormat(keyFormat = StringConvention.RAW, transformation = MapFormat.MapTransformation.FLAT)
                          Map<String, BigDecimal> quotas) {
        this.quotas = new HashMap<>(quotas);
    }

    /** The implicit quotas in thousandths; a quota finer than a thousandth of a GPU or negative is refused. */
    public Quotas toQuotas() {
        Map<String, Long> milli = new HashMap<>();
        quotas.forEach((tenant, gpus) -> milli.put(tenant, GpuShares.fromGpus(gpus)));
        return new Quotas(GpuShares.fromGpus(defaultGpuQuota), milli);
    }

    /**
     * The queue configuration: the YAML file {@code gantry.queue.config-file} when set, else one implicit queue per
     * tenant from the GPU quota keys. Throws {@link ConfigException} naming every bad path; the service then refuses
     * to start.
     */
    public FairShareConfig toFairShare() {
        String text = configFileText();
        return text == null ? implicitConfig() : parse(text, configFile);
    }

    public boolean hasConfigFile() {
        return configFile != null && !configFile.isBlank();
    }

    /** The configuration file's text, or null without one; unreadable -> ConfigException. */
    public String configFileText() {
        if (!hasConfigFile()) {
            return null;
        }
        try {
            return Files.readString(Path.of(configFile));
        } catch (IOException | RuntimeException e) {
            throw new ConfigException(List.of("gantry.queue.config-file: cannot read " + configFile + ": "
                    + e.getMessage()));
        }
    }

    /**
     * Reads exactly one YAML (or JSON, its subset) document, strictly: a key given twice, a second document or
     * anything after the document is an error, never silently dropped.
     */
    public static Object parseDocument(String yaml, String origin) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        try {
            return new Yaml(new SafeConstructor(options)).load(yaml);
        } catch (RuntimeException e) {
            throw new ConfigException(List.of(origin + ": not valid YAML: " + e.getMessage()));
        }
    }

    /** The configuration as YAML that {@link #parse} reads back into an equal one (see {@code toDocument}). */
    public static String toYaml(FairShareConfig config) {
        org.yaml.snakeyaml.DumperOptions options = new org.yaml.snakeyaml.DumperOptions();
        options.setDefaultFlowStyle(org.yaml.snakeyaml.DumperOptions.FlowStyle.BLOCK);
        return new Yaml(options).dump(config.toDocument());
    }

    /** Parses and validates a YAML configuration; problems are prefixed with {@code origin}. */
    public static FairShareConfig parse(String yaml, String origin) {
        Object document = parseDocument(yaml, origin);
        try {
            return FairShareConfig.fromYaml(document);
        } catch (ConfigException e) {
            throw new ConfigException(e.problems().stream().map(p -> origin + ": " + p).toList());
        }
    }

    /**
     * Without a configuration file: one implicit queue per tenant. Preemption then happens only within a tenant's
     * queue (a higher {@code JobSpec.priority} evicts a lower one), with the grace period and minimum run time below.
     */
    public FairShareConfig implicitConfig() {
        Duration h = FairShareConfig.parseDuration(halfLife);
        Duration w = FairShareConfig.parseDuration(starvationWait);
        Duration g = FairShareConfig.parseDuration(preemptionGracePeriod);
        Duration m = FairShareConfig.parseDuration(preemptionMinRunTime);
        if (h == null || h.isNegative()) {
            throw new ConfigException(List.of("gantry.queue.half-life: must be a duration such as 7d, was '"
                    + halfLife + "'"));
        }
        if (w == null || w.isNegative() || w.isZero()) {
            throw new ConfigException(List.of("gantry.queue.starvation-wait: must be a duration > 0 such as 30m, "
                    + "was '" + starvationWait + "'"));
        }
        if (g == null || g.isNegative() || g.compareTo(Duration.ofHours(1)) > 0) {
            throw new ConfigException(List.of("gantry.queue.preemption-grace-period: must be a duration from 0 to 1h "
                    + "such as 30s, was '" + preemptionGracePeriod + "'"));
        }
        if (m == null || m.isNegative()) {
            throw new ConfigException(List.of("gantry.queue.preemption-min-run-time: must be a duration >= 0 such as "
                    + "5m, was '" + preemptionMinRunTime + "'"));
        }
        FairShareConfig.Preemption d = FairShareConfig.Preemption.DEFAULT;
        return FairShareConfig.implicit(toQuotas(), h, w).withPreemption(
                new FairShareConfig.Preemption(d.reclaim(), d.withinQueue(), d.overFairShare(), g, m));
    }

    public String getPreemptionGracePeriod() {
        return preemptionGracePeriod;
    }

    public void setPreemptionGracePeriod(String preemptionGracePeriod) {
        this.preemptionGracePeriod = preemptionGracePeriod;
    }

    public String getPreemptionMinRunTime() {
        return preemptionMinRunTime;
    }

    public void setPreemptionMinRunTime(String preemptionMinRunTime) {
        this.preemptionMinRunTime = preemptionMinRunTime;
    }
}
