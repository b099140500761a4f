package io.gantry.runtime.kafka;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaSecurityTest {
    @Test
    void takesOnlyTheSecuritySettingsKafkaClientsKnow() {
        Map<String, Object> kafka = new HashMap<>();
        kafka.put("bootstrap.servers", "b:9093");
        kafka.put("security.protocol", "SASL_SSL");
        kafka.put("sasl.mechanism", "SCRAM-SHA-512");
        // one environment variable stands for several spellings: only the real name is passed on
        kafka.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        kafka.put("sasl.jaas-config", "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        kafka.put("sasl-jaas.config", "x");
        kafka.put("ssl.truststore.location", "/etc/kafka/ca.p12");
        kafka.put("ssl.truststore.password", "");
        kafka.put("ssl.truststor.location", "misspelt");
        kafka.put("health.enabled", false);
        kafka.put("acks", "0");

        KafkaSecurity s = KafkaSecurity.from(kafka);

        assertThat(s.names()).containsExactlyInAnyOrder("security.protocol", "sasl.mechanism", "sasl.jaas.config",
                "ssl.truststore.location");
        assertThat(s.on(Map.of("bootstrap.servers", "b:9093", "security.protocol", "PLAINTEXT")))
                .containsEntry("security.protocol", "SASL_SSL").containsEntry("bootstrap.servers", "b:9093")
                .doesNotContainKey("acks");
        Properties streams = new Properties();
        streams.put("application.id", "a");
        assertThat(s.on(streams)).containsEntry("sasl.mechanism", "SCRAM-SHA-512").containsEntry("application.id", "a");
        assertThat(s.toString()).doesNotContain("ScramLoginModule");
    }

    @Test
    void nothingGivenIsPlain() {
        assertThat(KafkaSecurity.from(Map.of("bootstrap.servers", "b:9092"))).isSameAs(KafkaSecurity.NONE);
        assertThat(KafkaSecurity.NONE.on(Map.of("a", 1))).isEqualTo(Map.of("a", 1));
    }
}
