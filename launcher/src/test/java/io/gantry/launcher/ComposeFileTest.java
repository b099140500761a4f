package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import io.gantry.embedded.EmbeddedKafkaCluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

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

    @Test
    @SuppressWarnings("unchecked")
    void theHaOverrideRunsThreeBrokersInOneQuorumReplicatingEveryTopicThreeTimesWithTwoInSync() throws IOException {
        Map<String, Object> services = at(merged(yaml(REPO.resolve("docker-compose.yml")),
                yaml(REPO.resolve("deploy/docker-compose.ha.yml"))), "services");
        Map<String, Map<String, Object>> brokers = new LinkedHashMap<>();
        services.forEach((name, svc) -> {
            if (String.valueOf(((Map<String, Object>) svc).get("image")).startsWith("apache/kafka:")) {
                brokers.put(name, (Map<String, Object>) svc);
            }
        });
        assertThat(brokers).as("the same image as the base broker").hasSize(3)
                .allSatisfy((name, b) -> assertThat(b.get("image")).isEqualTo(at(services, "kafka").get("image")));

        int rf = EmbeddedKafkaCluster.replicationFactorFor(3);
        int minIsr = EmbeddedKafkaCluster.minInsyncReplicasFor(3);
        Set<String> ids = new TreeSet<>();
        List<String> voters = new ArrayList<>();
        List<String> advertised = new ArrayList<>();
        for (Map.Entry<String, Map<String, Object>> b : brokers.entrySet()) {
            Map<String, Object> env = (Map<String, Object>) b.getValue().get("environment");
            String name = b.getKey();
            assertThat(env.get("KAFKA_PROCESS_ROLES")).as(name).isEqualTo("broker,controller");
            assertThat(env.get("CLUSTER_ID")).as(name + ": one cluster").isEqualTo(at(services, "kafka", "environment")
                    .get("CLUSTER_ID")).isNotNull();
            ids.add((String) env.get("KAFKA_NODE_ID"));
            voters.add((String) env.get("KAFKA_CONTROLLER_QUORUM_VOTERS"));
            assertThat(env.get("KAFKA_ADVERTISED_LISTENERS")).as(name).isEqualTo("PLAINTEXT://" + name + ":9092");
            advertised.add(name + ":9092");
            assertThat(env.get("KAFKA_LISTENERS")).as(name).isEqualTo("PLAINTEXT://:9092,CONTROLLER://:9093");
            // the same settings as the chaos test's cluster (EmbeddedKafkaCluster)
            assertThat(env).as(name)
                    .containsEntry("KAFKA_DEFAULT_REPLICATION_FACTOR", Integer.toString(rf))
                    .containsEntry("KAFKA_MIN_INSYNC_REPLICAS", Integer.toString(minIsr))
                    .containsEntry("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", Integer.toString(rf))
                    .containsEntry("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", Integer.toString(rf))
                    .containsEntry("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", Integer.toString(minIsr))
                    .containsEntry("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "false");
            assertThat(b.getValue().get("healthcheck")).as(name).isNotNull();
        }
        assertThat(ids).as("distinct node ids").hasSize(3);
        assertThat(Set.copyOf(voters)).as("one quorum: every broker names the same voters").hasSize(1);
        Map<String, String> voterByNode = new java.util.TreeMap<>();
        for (String v : voters.get(0).split(",")) {
            voterByNode.put(v.substring(0, v.indexOf('@')), v.substring(v.indexOf('@') + 1));
        }
        assertThat(voterByNode.keySet()).as("every broker is a voter").isEqualTo(ids);
        brokers.forEach((name, b) -> assertThat(voterByNode.get(
                (String) ((Map<String, Object>) b.get("environment")).get("KAFKA_NODE_ID"))).isEqualTo(name + ":9093"));
        assertThat(minIsr).as("one broker may be down").isLessThan(rf).isGreaterThan(1);

        for (String name : DevCluster.SERVICES) {
            Map<String, Object> svc = (Map<String, Object>) services.get(name);
            String bootstrap = (String) ((Map<String, Object>) svc.get("environment")).get("KAFKA_BOOTSTRAP_SERVERS");
            assertThat(List.of(bootstrap.split(","))).as(name + " bootstraps from every broker")
                    .containsExactlyInAnyOrderElementsOf(advertised);
            Map<String, Object> dependsOn = (Map<String, Object>) svc.get("depends_on");
            for (String broker : brokers.keySet()) {
                assertThat((Map<String, Object>) dependsOn.get(broker)).as(name + " waits for " + broker)
                        .containsEntry("condition", "service_healthy");
            }
        }
        Map<String, Object> haOnly = at(yaml(REPO.resolve("deploy/docker-compose.ha.yml")), "services");
        assertThat(haOnly.keySet().stream().filter(k -> !brokers.containsKey(k)).collect(Collectors.toSet()))
                .as("the override changes only the brokers and the services' Kafka settings")
                .isEqualTo(Set.copyOf(DevCluster.SERVICES));
    }

    /** docker compose's merge of an override file: maps merge key by key, anything else is replaced. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> merged(Map<String, Object> base, Map<String, Object> override) {
        Map<String, Object> out = new LinkedHashMap<>(base);
        override.forEach((key, value) -> {
            Object old = out.get(key);
            out.put(key, old instanceof Map && value instanceof Map
                    ? merged((Map<String, Object>) old, (Map<String, Object>) value) : value);
        });
        return out;
    }
}
