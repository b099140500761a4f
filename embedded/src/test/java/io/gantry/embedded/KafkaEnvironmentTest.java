package io.gantry.embedded;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaEnvironmentTest {
    @Test
    void theServicesVariablesGiveTheClientSettingsAndNothingElse() {
        assertThat(KafkaEnvironment.clientSettings(Map.of(
                "KAFKA_SECURITY_PROTOCOL", "SASL_SSL",
                "KAFKA_SASL_MECHANISM", "SCRAM-SHA-512",
                "KAFKA_SASL_JAAS_CONFIG", "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "KAFKA_SSL_TRUSTSTORE_LOCATION", "/ca.p12",
                "KAFKA_BOOTSTRAP_SERVERS", "b:9093",
                "KAFKA_SSL_KEY_PASSWORD", " ",
                "GANTRY_DATA_DIR", "/x")))
                .containsExactlyInAnyOrderEntriesOf(Map.of("security.protocol", "SASL_SSL",
                        "sasl.mechanism", "SCRAM-SHA-512",
                        "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                        "ssl.truststore.location", "/ca.p12"));
    }
}
