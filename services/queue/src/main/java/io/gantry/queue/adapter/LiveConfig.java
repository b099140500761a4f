package io.gantry.queue.adapter;

import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
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

/**
 * Which fair-share configuration is live, and its history on {@code queue.config-events}.
 *
 * <p>Sources: the settings (the YAML file {@code gantry.queue.config-file}, checked for changes every
 * {@code config-poll}, or without one the implicit per-tenant quotas) and the admin API. The newest change wins.
 * Every applied configuration is published as an event; a rejected one never is, and the one before stays live.
 * After a restart the newest published configuration is live again, unless the settings changed while the
 * service was down (then they are applied and published).
 */
final class LiveConfig {
    private static final Logger LOG = LoggerFactory.getLogger(LiveConfig.class);
    static final String FILE = "file";
    static final String ADMIN = "admin";
    static final String IMPLICIT = "implicit";

    /** One applied configuration, as published. */
    record Applied(long version, String source, String appliedBy, String sha256, String yaml, Instant at) {
        QueueConfigEvent toEvent() {
            return new QueueConfigEvent(UUID.randomUUID().toString(), at,
                    new QueueConfigApplied(version, source, appliedBy, sha256, yaml));
        }

        static Applied of(QueueConfigEvent e) {
            QueueConfigApplied a = (QueueConfigApplied) e.getPayload();
            return new Applied(a.getVersion(), a.getSource(), a.getAppliedBy(), a.getSha256(), a.getYaml(),
                    e.getOccurredAt());
        }
    }

    /** The last configuration that was refused, and why. */
    record Rejected(String source, String by, List<String> problems, Instant at) {
    }

    /**
     * What a (re)starting queue runs with. {@code current} is null for the implicit configuration (no file, nothing
     * applied through the API); {@code publish} is a configuration to publish before anything else, or null.
     */
    record Startup(FairShareConfig config, Applied current, Applied publish, Rejected rejected, String fileSha) {
    }

    private LiveConfig() {
    }

    static String sha256(String text) {
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
    static Startup startup(QueueConfig settings, List<Applied> history, Instant now, boolean keepOnError) {
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
                return fromSettings(settings, fileText, text, sha, latest, null, now);
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
        Applied a = new Applied(latest == null ? 1 : latest.version() + 1, fileText != null ? FILE : IMPLICIT,
                fileText != null ? FILE : IMPLICIT, sha, text, now);
        return new Startup(c, a, a, rejected, sha);
    }

    /** The implicit configuration as text: what identifies it in the history. */
    static String implicitText(QueueConfig settings) {
        return "# implicit: one queue per tenant, no cohorts\n"
                + "defaultGpuQuota: " + settings.getDefaultGpuQuota() + "\n"
                + "quotas: " + new java.util.TreeMap<>(settings.getQuotas()) + "\n"
                + "halfLife: " + settings.getHalfLife() + "\n"
                + "starvationWait: " + settings.getStarvationWait() + "\n"
                + "preemption: {withinQueue: lowerPriority, gracePeriod: " + settings.getPreemptionGracePeriod()
                + ", minRunTime: " + settings.getPreemptionMinRunTime() + "}\n";
    }

    /** Every applied configuration on the topic, oldest first (committed records only). */
    static List<Applied> readHistory(String bootstrap) {
        List<Applied> out = new ArrayList<>(TopicReader.readAll(bootstrap, Topics.QUEUE_CONFIG_EVENTS).stream()
                .map(Applied::of).toList());
        out.sort(java.util.Comparator.comparingLong(Applied::version));
        return out;
    }
}
