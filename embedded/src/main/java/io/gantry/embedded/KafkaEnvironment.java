package io.gantry.embedded;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The Kafka client security settings of a tool that connects to a running Gantry ({@code gantry loadtest --bootstrap},
 * {@code gantry whatif --from HOST:PORT}), from the same environment variables the services read:
 * {@code KAFKA_SECURITY_PROTOCOL}, {@code KAFKA_SASL_*}, {@code KAFKA_SSL_*} (e.g. {@code KAFKA_SASL_JAAS_CONFIG} for
 * {@code sasl.jaas.config}).
 */
public final class KafkaEnvironment {
    private KafkaEnvironment() {
    }

    /** The settings among {@code env} (a process's environment), by their Kafka client names. */
    public static Map<String, String> clientSettings(Map<String, String> env) {
        Map<String, String> settings = new TreeMap<>();
        env.forEach((name, value) -> {
            if (!name.startsWith("KAFKA_") || value == null || value.isBlank()) {
                return;
            }
            String key = name.substring("KAFKA_".length()).toLowerCase(Locale.ROOT).replace('_', '.');
            if (key.startsWith("security.") || key.startsWith("sasl.") || key.startsWith("ssl.")) {
                settings.put(key, value);
            }
        });
        return settings;
    }
}
