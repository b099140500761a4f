package io.gantry.runtime.http;

import io.gantry.runtime.kafka.KafkaSecurity;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.env.Environment;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's {@link KafkaSecurity} from its configuration: {@code kafka.security.protocol}, {@code kafka.sasl.*},
 * {@code kafka.ssl.*} (in a file, as system properties, or as environment variables such as
 * {@code KAFKA_SASL_JAAS_CONFIG}: keep a password there, not on a command line).
 */
@Factory
public class KafkaSecurityFactory {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaSecurityFactory.class);

    @Singleton
    KafkaSecurity kafkaSecurity(Environment env) {
        // each name looked up on its own: an environment variable (KAFKA_SASL_JAAS_CONFIG) resolves that way whatever
        // spellings the environment source makes of it, where a listing of the kafka.* tree may miss it
        java.util.Map<String, Object> found = new java.util.HashMap<>();
        for (String name : KafkaSecurity.knownNames()) {
            env.getProperty("kafka." + name, String.class).ifPresent(v -> found.put(name, v));
        }
        KafkaSecurity security = KafkaSecurity.from(found);
        if (!security.none()) {
            LOG.info("Kafka clients connect with {}", security);
        }
        return security;
    }
}
