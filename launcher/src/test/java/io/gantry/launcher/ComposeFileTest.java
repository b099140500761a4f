package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docker-compose.yml must run the same system as {@code gantry dev}: checked here against each service's real
 * configuration (application.yml, migrations, Dockerfile), since no Docker engine runs on our machines.
 */
class ComposeFileTest {
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    @SuppressWarnings("unchecked")
    static Map<String, Object> yaml(Path file) throws IOException {
        return new Yaml().load(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> at(Map<String, Object> m, String... path) {
        Map<String, Object> cur = m;
        for (String p : path) {
            cur = (Map<String, Object>) cur.get(p);
            if (cur == null) {
                return Map.of();
            }
        }
        return cur;
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyServiceIsInTheComposeStackWithThePortsAndSettingsItReallyUses() throws IOException {
        Map<String, Object> services = at(yaml(REPO.resolve("docker-compose.yml")), "services");
        assertThat(services).containsKeys("kafka", "postgres");
        String initSql = Files.readString(REPO.resolve("deploy/compose/postgres-init.sql"));
        for (String name : DevCluster.SERVICES) {
            Path dir = REPO.resolve("services").resolve(name);
            Map<String, Object> svc = (Map<String, Object>) services.get(name);
            assertThat(svc).as(name + " is in docker-compose.yml").isNotNull();
            Map<String, Object> build = (Map<String, Object>) svc.get("build");
            assertThat(build.get("context")).isEqualTo("services/" + name);
            assertThat(REPO.resolve("services").resolve(name).resolve((String) build.get("dockerfile")).normalize())
                    .isEqualTo(REPO.resolve("deploy/service.Dockerfile"));
            assertThat((Map<String, Object>) build.get("args")).containsEntry("SERVICE", name);

            Map<String, Object> appYml = yaml(dir.resolve("src/main/resources/application.yml"));
            String port = String.valueOf(at(appYml, "micronaut", "server").get("port"));
            assertThat((List<String>) svc.get("ports")).containsExactly(port + ":" + port);

            Map<String, Object> env = (Map<String, Object>) svc.get("environment");
            assertThat(env.get("MICRONAUT_SERVER_PORT")).isEqualTo(port);
            assertThat(env.get("MICRONAUT_SERVER_HOST")).as("containers must listen beyond loopback").isEqualTo("0.0.0.0");
            assertThat(env.get("KAFKA_BOOTSTRAP_SERVERS")).isEqualTo("kafka:9092");
            assertThat(env).containsKey("GANTRY_AUTH_TOKENS_FILE");

            boolean hasTables = Files.isDirectory(dir.resolve("src/main/resources/db/migration"));
            assertThat(env.containsKey("DATASOURCES_DEFAULT_URL")).as(name + " datasource iff it has migrations").isEqualTo(hasTables);
            assertThat(appYml.containsKey("datasources")).isEqualTo(hasTables);
            if (hasTables) {
                String url = (String) env.get("DATASOURCES_DEFAULT_URL");
                String db = url.substring(url.lastIndexOf('/') + 1);
                assertThat(db).isEqualTo("gantry_" + name);
                assertThat(initSql).contains("CREATE DATABASE " + db + ";");
                assertThat((Map<String, Object>) svc.get("depends_on")).containsKey("postgres");
            }

            String dockerfile = Files.readString(REPO.resolve("deploy/service.Dockerfile"));
            assertThat(dockerfile).contains("COPY target/gantry-${SERVICE}.jar").contains("COPY target/lib/");
            assertThat(Files.readString(dir.resolve("pom.xml"))).contains("<finalName>gantry-" + name + "</finalName>");
        }
    }

    @Test
    void theComposeBrokerRunsKraftWithTheTransactionSettingsServicesNeed() throws IOException {
        Map<String, Object> env = at(yaml(REPO.resolve("docker-compose.yml")), "services", "kafka", "environment");
        assertThat(env.get("KAFKA_PROCESS_ROLES")).isEqualTo("broker,controller");
        assertThat(env.get("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR")).isEqualTo("1");
        assertThat(env.get("KAFKA_AUTO_CREATE_TOPICS_ENABLE")).as("services create their own topics").isEqualTo("false");
    }
}
