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

    /**
     * A service with a database tells PgJDBC a socket timeout (a query cut off by a network partition would otherwise
     * wait for ever, and its request with it), one the operator can set, well above the slowest legitimate query
     * (billing's invoice run: ~4 s for a month of 1 M ledger rows) and well below the 10 minutes a read model's
     * consumer may stay away from Kafka (its poll interval) while a write of its waits.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("services")
    void everyServiceWithADatabaseBoundsHowLongAQueryWaitsForAnAnswer(String service) throws IOException {
        Map<String, Object> yaml = new Yaml().load(Files.readString(
                Path.of("..", "services", service, "src/main/resources/application.yml")));
        if (path(yaml, "datasources", "default") == null) {
            return;
        }

        Object timeout = path(yaml, "datasources", "default", "data-source-properties", "socketTimeout");
        assertThat(timeout).as("%s: datasources.default.data-source-properties.socketTimeout", service).isNotNull();
        var setting = java.util.regex.Pattern.compile("\\$\\{gantry\\.database\\.socket-timeout-seconds:(\\d+)}")
                .matcher(timeout.toString());
        assertThat(setting.matches()).as("%s: socketTimeout is ${gantry.database.socket-timeout-seconds:<seconds>}: %s",
                service, timeout).isTrue();
        assertThat(Integer.parseInt(setting.group(1))).as("%s: default socket timeout, s", service).isBetween(30, 300);
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
