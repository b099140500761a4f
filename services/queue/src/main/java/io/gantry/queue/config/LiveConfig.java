package io.gantry.queue.config;

import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueEntry;
import io.gantry.queue.core.ConfigException;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.runtime.kafka.TopicReader;
import io.gantry.schemas.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;

/**
 * Which fair-share configuration is live, and its history on {@code queue.config-events}.
 *
 * <p>Sources: the settings (the YAML file {@code gantry.queue.config-file}, checked for changes every
 * {@code config-poll}, or without one the implicit per-tenant quotas) and the admin API. The newest change wins.
 * Every applied configuration is published as an event; a rejected one never is, and the one before stays live.
 * After a restart the newest published configuration is live again, unless the settings changed while the
 * service was down (then they are applied and published).
 */
public final class LiveConfig {
    private static final Logger LOG = LoggerFactory.getLogger(LiveConfig.class);
    public static final String FILE = "file";
    public static final String ADMIN = "admin";
    public static final String IMPLICIT = "implicit";

    /** A queue of an applied configuration and the tenant it belongs to. */
    public record QueueName(String name, String tenant) {
    }

    /**
     * One applied configuration, as published. {@code queues} is null for the implicit configuration (every tenant has
     * one queue named after it) and in events written before it existed; so is {@code priorityClasses} in old events.
     */
    public record Applied(long version, String source, String appliedBy, String sha256, String yaml, Instant at,
                   List<QueueName> queues, List<String> priorityClasses) {
        /** The catalog other services check jobs against comes from the configuration itself, never the text. */
        public static Applied of(long version, String source, String appliedBy, String yaml, Instant at,
                          FairShareConfig config) {
            List<QueueName> queues = config.isImplicit() ? null : config.queues().stream()
                    .map(q -> new QueueName(q.name(), q.tenant())).toList();
            return new Applied(version, source, appliedBy, LiveConfig.sha256(yaml), yaml, at, queues,
                    List.copyOf(config.priorityClasses().keySet()));
        }

        public QueueConfigEvent toEvent() {
            return new QueueConfigEvent(UUID.randomUUID().toString(), at,
                    new QueueConfigApplied(version, source, appliedBy, sha256, yaml,
                            queues == null ? null : queues.stream().map(q -> new QueueEntry(q.name(), q.tenant()))
                                    .toList(),
                            priorityClasses));
        }

        public static Applied of(QueueConfigEvent e) {
            QueueConfigApplied a = (QueueConfigApplied) e.getPayload();
            return new Applied(a.getVersion(), a.getSource(), a.getAppliedBy(), a.getSha256(), a.getYaml(),
                    e.getOccurredAt(), a.getQueues() == null ? null : a.getQueues().stream()
                    .map(q -> new QueueName(q.getName(), q.getTenant())).toList(), a.getPriorityClasses());
        }
    }

    /** The last configuration that was refused, and why. */
    public record Rejected(String source, String by, List<String> problems, Instant at) {
    }

    /**
     * What a (re)starting queue runs with. {@code current} is null for the implicit configuration (no file, nothing
     * applied through the API); {@code publish} is a configuration to publish before anything else, or null.
     */
    public record Startup(FairShareConfig config, Applied current, Applied publish, Rejected rejected, String fileSha,
                   Applied fallback, FairShareConfig fallbackConfig) {
        Startup(FairShareConfig config, Applied current, Applied publish, Rejected rejected, String fileSha) {
            this(config, current, publish, rejected, fileSha, null, null);
        }
    }

    private LiveConfig() {
    }

    public static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Decides the live configuration from the settings and the published history. The settings (the file, or the
     * implicit per-tenant quotas without one) win when they changed since they were last applied, and are then
     * published; otherwise the newest published configuration (perhaps applied through the admin API) stays live.
     * Settings that changed into something invalid stop the start with {@link ConfigException}, naming the path;
     * unless {@code keepOnError} (a restart of the event loop in a running service) and something was published:
     * then the newest published configuration stays live and the settings are reported as rejected.
     */
    public static Startup startup(QueueConfig settings, List<Applied> history, Instant now, boolean keepOnError) {
        return startup(settings, history, now, keepOnError, (before, next) -> List.of());
    }

    /**
     * {@link #startup(QueueConfig, List, Instant, boolean)}, with settings that changed also refused (like invalid
     * ones) when {@code refuse} finds problems going from the newest published configuration (null when none is
     * valid) to them: a queue split into shards refuses one that moves a tenant to another shard, or whose pins
     * cannot hold.
     */
    public static Startup startup(QueueConfig settings, List<Applied> history, Instant now, boolean keepOnError,
                                  BiFunction<FairShareConfig, FairShareConfig, List<String>> refuse) {
        Applied latest = history.isEmpty() ? null : history.get(history.size() - 1);
        Applied lastFromSettings = null;
        for (Applied a : history) {
            if (FILE.equals(a.source()) || IMPLICIT.equals(a.source())) {
                lastFromSettings = a;
            }
        }
        String fileText = settings.configFileText();
        String text = fileText != null ? fileText : implicitText(settings);
        String sha = sha256(text);
        if (latest == null || lastFromSettings == null || !lastFromSettings.sha256().equals(sha)) {
            try {
                Startup s = fromSettings(settings, fileText, text, sha, latest, null, now);
                FairShareConfig before = latest == null || !isValid(latest) ? null
                        : IMPLICIT.equals(latest.source()) ? settings.implicitConfig()
                        : QueueConfig.parse(latest.yaml(), "version " + latest.version());
                List<String> problems = refuse.apply(before, s.config());
                if (!problems.isEmpty()) {
                    String where = fileText != null ? settings.getConfigFile() : "settings";
                    throw new ConfigException(problems.stream().map(p -> where + ": " + p).toList());
                }
                return s;
            } catch (ConfigException e) {
                if (!keepOnError || latest == null || !IMPLICIT.equals(latest.source())
                        && !isValid(latest)) {
                    throw e;
                }
                LOG.error("queue configuration file rejected, keeping version {}: {}", latest.version(), e.problems());
                Rejected r = new Rejected(FILE, FILE, e.problems(), now);
                FairShareConfig c = IMPLICIT.equals(latest.source()) ? settings.implicitConfig()
                        : QueueConfig.parse(latest.yaml(), "version " + latest.version());
                return new Startup(c, latest, null, r, sha);
            }
        }
        if (IMPLICIT.equals(latest.source())) {
            return new Startup(settings.implicitConfig(), latest, null, null, sha);
        }
        try {
            return new Startup(QueueConfig.parse(latest.yaml(), "version " + latest.version()), latest, null, null,
                    sha);
        } catch (ConfigException e) {
            // valid when applied, refused by this build: the settings take over
            LOG.error("published queue configuration version {} is no longer valid, applying the settings: {}",
                    latest.version(), e.problems());
            return fromSettings(settings, fileText, text, sha, latest,
                    new Rejected("version " + latest.version(), latest.appliedBy(), e.problems(), now), now);
        }
    }

    private static boolean isValid(Applied a) {
        try {
            QueueConfig.parse(a.yaml(), "version " + a.version());
            return true;
        } catch (ConfigException e) {
            return false;
        }
    }

    private static Startup fromSettings(QueueConfig settings, String fileText, String text, String sha, Applied latest,
                                        Rejected rejected, Instant now) {
        FairShareConfig c = fileText != null ? QueueConfig.parse(fileText, settings.getConfigFile())
                : settings.implicitConfig();
        Applied a = Applied.of(latest == null ? 1 : latest.version() + 1, fileText != null ? FILE : IMPLICIT,
                fileText != null ? FILE : IMPLICIT, text, now, c);
        // what was live before: kept instead if the changed file turns out to strand jobs (known once restored)
        FairShareConfig fallback = null;
        if (latest != null && fileText != null && rejected == null) {
            try {
                fallback = IMPLICIT.equals(latest.source()) ? settings.implicitConfig()
                        : QueueConfig.parse(latest.yaml(), "version " + latest.version());
            } catch (ConfigException e) {
                fallback = null;
            }
        }
        return new Startup(c, a, a, rejected, sha, fallback == null ? null : latest, fallback);
    }

    /**
     * The implicit configuration as a configuration document (the {@code implicit:} form), so that what the admin API
     * shows for it can be applied again unchanged; its SHA-256 also identifies the settings in the history.
     */
    public static String implicitText(QueueConfig settings) {
        StringBuilder t = new StringBuilder("# implicit: no configuration file; every tenant has one queue named after"
                + " it, with a GPU quota only, no cohort\n");
        t.append("implicit:\n  defaultGpuQuota: ").append(settings.getDefaultGpuQuota().toPlainString()).append('\n');
        Map<String, java.math.BigDecimal> quotas = new java.util.TreeMap<>(settings.getQuotas());
        if (quotas.isEmpty()) {
            t.append("  quotas: {}\n");
        } else {
            t.append("  quotas:\n");
            quotas.forEach((tenant, gpus) -> t.append("    ").append(quoted(tenant)).append(": ").append(gpus.toPlainString())
                    .append('\n'));
        }
        t.append("halfLife: ").append(quoted(settings.getHalfLife())).append('\n');
        t.append("starvationWait: ").append(quoted(settings.getStarvationWait())).append('\n');
        t.append("preemption:\n  withinQueue: lowerPriority\n");
        t.append("  gracePeriod: ").append(quoted(settings.getPreemptionGracePeriod())).append('\n');
        t.append("  minRunTime: ").append(quoted(settings.getPreemptionMinRunTime())).append('\n');
        return t.toString();
    }

    /** A YAML double-quoted scalar: tenant names and durations are written as given, whatever they contain. */
    private static String quoted(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                q.append('\\').append(c);
            } else if (c < 0x20) {
                q.append(String.format("\\x%02x", (int) c));
            } else {
                q.append(c);
            }
        }
        return q.append('"').toString();
    }

    /** Every applied configuration on the topic, oldest first (committed records only). */
    public static List<Applied> readHistory(String bootstrap, io.gantry.runtime.kafka.KafkaSecurity security) {
        return history(TopicReader.readAll(bootstrap, security, Topics.QUEUE_CONFIG_EVENTS));
    }

    /** The applied configurations among these records of the topic, oldest first. */
    public static List<Applied> history(List<io.gantry.events.QueueConfigEvent> records) {
        List<Applied> out = new ArrayList<>(records.stream().map(Applied::of).toList());
        out.sort(java.util.Comparator.comparingLong(Applied::version));
        return out;
    }
}
