package io.gantry.launcher;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Settings every service's HTTP server must share (admission's integration test proves what they do): a client that
 * stops mid-request is cut off, and empty lists are answered rather than dropped.
 */
class ServiceConfigTest {
    static List<String> services() {
        return DevCluster.SERVICES;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("services")
    void everyServiceClosesStalledConnectionsAndAnswersEmptyLists(String service) throws IOException {
        Path file = Path.of("..", "services", service, "src/main/resources/application.yml");
        Map<String, Object> yaml = new Yaml().load(Files.readString(file));

        Object idle = path(yaml, "micronaut", "server", "idle-timeout");
        assertThat(idle).as("%s: micronaut.server.idle-timeout", service).isNotNull();
        assertThat(Duration.parse("PT" + idle.toString().toUpperCase(Locale.ROOT)))
                .isLessThanOrEqualTo(Duration.ofSeconds(30));
        Object inclusion = path(yaml, "micronaut", "serde", "serialization", "inclusion");
        assertThat(inclusion).as("%s: micronaut.serde.serialization.inclusion", service).isNotNull();
        assertThat(inclusion.toString().toLowerCase(Locale.ROOT)).isIn("always", "non_null", "non_absent");
    }

    /** An http URL as a default inside {@code @Value("${key:default}")} is cut at its first colon: keep it in the yml. */
    @org.junit.jupiter.api.Test
    void placementTellsLocalTasksAnHttpUrlToReportTo() throws IOException {
        Map<String, Object> yaml = new Yaml().load(Files.readString(
                Path.of("..", "services", "placement", "src/main/resources/application.yml")));

        assertThat(String.valueOf(path(yaml, "gantry", "placement", "local", "api-url"))).startsWith("http://");
        assertThat(Files.readString(Path.of("..", "services", "placement",
                "src/main/java/io/gantry/placement/BackendFactory.java"))).doesNotContain("api-url:http");
    }

    private static Object path(Map<String, Object> yaml, String... keys) {
        Object node = yaml;
        for (String k : keys) {
            if (!(node instanceof Map<?, ?> m)) {
                return null;
            }
            node = m.get(k);
        }
        return node;
    }
}
