package io.gantry.placement.backend.slurm;

import io.micronaut.core.value.PropertyResolver;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Reads {@code gantry.placement.slurm.*} (README, "Slurm backend"); a bad value is refused with its key. */
public final class SlurmSettings {
    public static final String PREFIX = "gantry.placement.slurm.";

    private SlurmSettings() {
    }

    public static SlurmConfig config(PropertyResolver p) {
        SlurmConfig d = SlurmConfig.defaults("gantry", Path.of(System.getProperty("java.io.tmpdir"), "gantry-slurm"));
        Map<String, String> models = new TreeMap<>();
        p.getProperties(PREFIX + "gpu-models").forEach((type, model) -> models.put(type, String.valueOf(model).trim()));
        String workDir = string(p, "work-dir", d.workDir().toString());
        try {
            return new SlurmConfig(string(p, "partition", d.partition()), string(p, "account", ""),
                    duration(p, "poll-interval", d.pollInterval()), duration(p, "command-timeout", d.commandTimeout()),
                    number(p, "grace-seconds", d.graceSeconds()),
                    (int) number(p, "submit-attempts", d.submitAttempts()),
                    duration(p, "submit-backoff", d.submitBackoff()), duration(p, "pending-timeout", d.pendingTimeout()),
                    string(p, "gres-name", d.gresName()), models, Path.of(workDir),
                    bool(p, "exact-gpu-indices", d.exactGpuIndices()),
                    bool(p, "require-restricted-partition", d.requireRestrictedPartition()),
                    string(p, "rack-feature-prefix", d.rackFeaturePrefix()),
                    string(p, "spine-feature-prefix", d.spineFeaturePrefix()),
                    string(p, "api-url", "http://127.0.0.1:8080"), duration(p, "startup-timeout", d.startupTimeout()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PREFIX + e.getMessage(), e);
        }
    }

    /** The Slurm tools as configured: {@code commands.<tool>} paths, {@code conf} (SLURM_CONF), the timeout. */
    public static SlurmCommands commands(PropertyResolver p, SlurmConfig config) {
        Map<SlurmCommands.Tool, String> paths = new EnumMap<>(SlurmCommands.Tool.class);
        for (SlurmCommands.Tool tool : SlurmCommands.Tool.values()) {
            String path = string(p, "commands." + tool.name().toLowerCase(Locale.ROOT), "");
            if (!path.isBlank()) {
                paths.put(tool, path);
            }
        }
        return new ProcessSlurmCommands(paths, string(p, "conf", ""), config.commandTimeout());
    }

    private static String string(PropertyResolver p, String key, String fallback) {
        return p.getProperty(PREFIX + key, String.class).orElse(fallback).trim();
    }

    private static Duration duration(PropertyResolver p, String key, Duration fallback) {
        try {
            return p.getProperty(PREFIX + key, Duration.class).orElse(fallback);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(key + " must be a duration such as 2s or 500ms");
        }
    }

    private static long number(PropertyResolver p, String key, long fallback) {
        String v = string(p, key, Long.toString(fallback));
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a whole number, was `" + v + "`");
        }
    }

    private static boolean bool(PropertyResolver p, String key, boolean fallback) {
        String v = string(p, key, Boolean.toString(fallback));
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, was `" + v + "`");
        }
        return Boolean.parseBoolean(v);
    }
}
