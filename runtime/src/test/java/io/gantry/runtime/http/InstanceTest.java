package io.gantry.runtime.http;

import io.micronaut.context.exceptions.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InstanceTest {
    private static final Duration MS20 = Duration.ofMillis(20);
    private static final Duration S1 = Duration.ofSeconds(1);
    private static final Duration MS100 = Duration.ofMillis(100);
    private static final Duration S60 = Duration.ofSeconds(60);

    @Test
    void aPodNameIsAnIdAndTheAddressDefaultsToTheLoopbackPort() {
        Instance i = new Instance("gantry-queue-7d9f8-x2x4z", "", 8081, Duration.ofSeconds(10), MS20, S1, MS100, 100_000, S60);
        assertThat(i.id()).isEqualTo("gantry-queue-7d9f8-x2x4z");
        assertThat(i.advertisedUrl()).isEqualTo("http://127.0.0.1:8081");
        assertThat(new Instance("", "http://10.0.0.7:8081", -1, Duration.ofSeconds(6), MS20, S1, MS100, 100_000, S60).advertisedUrl())
                .isEqualTo("http://10.0.0.7:8081");
        assertThat(new Instance("", "", -1, Duration.ofMinutes(5), MS20, S1, MS100, 100_000, S60).advertisedUrl()).as("a random port: none").isEmpty();
    }

    @Test
    void badSettingsStopTheStartNamingTheKey() {
        assertThatThrownBy(() -> new Instance("a b", "", 8081, Duration.ofSeconds(10), MS20, S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.instance.id");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(5), MS20, S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.session-timeout");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofMinutes(6), MS20, S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.session-timeout");
        assertThatThrownBy(() -> new Instance("a", "http://host:1/path", 8081, Duration.ofSeconds(10), MS20, S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.instance.advertised-url");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), Duration.ofMillis(1001), S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.commit-interval");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), Duration.ofMillis(-1), S1, MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.commit-interval");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), MS20, Duration.ofSeconds(11), MS100, 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.quiet-commit-interval");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), MS20, S1, Duration.ofMillis(1001), 100_000, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.read-model-fetch-wait");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), MS20, S1, MS100, -1, S60))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.snapshot-every");
        assertThatThrownBy(() -> new Instance("a", "", 8081, Duration.ofSeconds(10), MS20, S1, MS100, 100_000,
                Duration.ofMinutes(11)))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("gantry.kafka.open-transaction-wait");
    }
}
