package io.gantry.runtime.kafka;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * How a service's Kafka clients authenticate and encrypt: the {@code kafka.security.protocol}, {@code kafka.sasl.*}
 * and {@code kafka.ssl.*} settings (TLS, SASL PLAIN / SCRAM / OAUTHBEARER, mTLS), given to every client the service
 * makes (its event loops' producers, consumers and admin clients, topic readers, Kafka Streams). Only names the Kafka
 * clients know are taken, so a setting misspelt, or the other spellings an environment variable also stands for,
 * is not passed on.
 */
public final class KafkaSecurity {
    /** Plain connections, as to the embedded broker of the tests. */
    public static final KafkaSecurity NONE = new KafkaSecurity(Map.of());

    private static final Set<String> KNOWN = known();
    private final Map<String, Object> settings;

    private KafkaSecurity(Map<String, Object> settings) {
        this.settings = Map.copyOf(settings);
    }

    /**
     * The security settings among {@code kafka} (keys without the {@code kafka.} prefix, e.g. the configuration's
     * {@code kafka.*} tree): the ones every Kafka client type knows that start with {@code security.}, {@code sasl.}
     * or {@code ssl.}. Blank values are left out.
     */
    public static KafkaSecurity from(Map<String, ?> kafka) {
        Map<String, Object> picked = new TreeMap<>();
        kafka.forEach((k, v) -> {
            if (KNOWN.contains(k) && v != null && !String.valueOf(v).isBlank()) {
                picked.put(k, v instanceof Number || v instanceof Boolean ? v : String.valueOf(v));
            }
        });
        return picked.isEmpty() ? NONE : new KafkaSecurity(picked);
    }

    /** The setting names this class takes (every Kafka client type's {@code security.*}, {@code sasl.*}, {@code ssl.*}). */
    public static Set<String> knownNames() {
        return KNOWN;
    }

    private static Set<String> known() {
        Set<String> names = new java.util.HashSet<>(ProducerConfig.configNames());
        names.retainAll(ConsumerConfig.configNames());
        names.retainAll(AdminClientConfig.configNames());
        names.removeIf(n -> !(n.startsWith("security.") || n.startsWith("sasl.") || n.startsWith("ssl.")));
        return Set.copyOf(names);
    }

    /** {@code client} with these settings added (a new map; those of {@code client} with the same names lose). */
    public Map<String, Object> on(Map<String, Object> client) {
        Map<String, Object> all = new HashMap<>(client);
        all.putAll(settings);
        return all;
    }

    /** The same, for the {@link Properties} Kafka Streams takes. */
    public Properties on(Properties client) {
        Properties all = new Properties();
        all.putAll(client);
        all.putAll(settings);
        return all;
    }

    /** The setting names (never their values: a SASL configuration holds a password), for logs. */
    public Set<String> names() {
        return settings.keySet();
    }

    public boolean none() {
        return settings.isEmpty();
    }

    @Override
    public String toString() {
        return none() ? "plain" : "security settings " + new TreeMap<>(settings).keySet();
    }
}
