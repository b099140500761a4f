package io.gantry.placement;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.gantry.placement.backend.kubernetes.KubernetesBackend;
import io.gantry.placement.backend.kubernetes.MockCluster;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.env.PropertySource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * deploy/docker-compose.kubernetes.yml (no Docker engine on our machines, so checked here): it layers onto the base
 * stack's placement service, mounts the kubeconfig where it tells placement to read it, and its environment, read
 * the way Micronaut reads environment variables, configures a Kubernetes backend that reaches the cluster.
 */
class KubernetesComposeOverrideTest {
    private static final Path REPO = Path.of("../..").toAbsolutePath().normalize();
    private static final Path OVERRIDE = REPO.resolve("deploy/docker-compose.kubernetes.yml");
    /** {@code ${VAR:-default}}, {@code ${VAR:?message}} or {@code ${VAR}} as docker compose interpolates them. */
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{(\\w+)(?::([-?])([^}]*))?}");
    @TempDir
    Path dir;

    @SuppressWarnings("unchecked")
    private static Map<String, Object> yaml(Path file) throws IOException {
        return new Yaml().load(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> placement(Path file) throws IOException {
        return (Map<String, Object>) ((Map<String, Object>) yaml(file).get("services")).get("placement");
    }

    /** Compose's interpolation with only {@code given} set: defaults for the rest. */
    private static String interpolate(String value, Map<String, String> given) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = given.get(m.group(1));
            if (v == null) {
                assertThat(m.group(2)).as("${%s} must have a default or be required", m.group(1)).isNotNull();
                assertThat(m.group(2)).as("${%s} is required but not given", m.group(1)).isEqualTo("-");
                v = m.group(3);
            }
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    @Test
    @SuppressWarnings("unchecked")
    void theOverrideSwitchesTheBaseStacksPlacementToKubernetesAndMountsTheKubeconfigItNames() throws IOException {
        Map<String, Object> override = yaml(OVERRIDE);
        assertThat((Map<String, Object>) override.get("services")).as("only placement changes").containsOnlyKeys("placement");
        Map<String, Object> base = placement(REPO.resolve("docker-compose.yml"));
        assertThat(base).as("the base stack has the service the override layers onto").isNotNull();

        Map<String, Object> env = (Map<String, Object>) placement(OVERRIDE).get("environment");
        assertThat(env).containsEntry("GANTRY_PLACEMENT_BACKEND", "kubernetes");
        List<String> volumes = (List<String>) placement(OVERRIDE).get("volumes");
        String mount = interpolate(volumes.get(0), Map.of("GANTRY_KUBECONFIG", "/home/me/kubeconfig"));
        assertThat(mount).isEqualTo("/home/me/kubeconfig:" + env.get("GANTRY_PLACEMENT_KUBERNETES_KUBECONFIG") + ":ro");
        assertThat(volumes.get(0)).as("no kubeconfig, no start: compose says which variable is missing")
                .contains("${GANTRY_KUBECONFIG:?");
        // compose merges volumes by target: the base stack's tokens file stays mounted
        assertThat((List<String>) base.get("volumes")).noneMatch(v -> v.contains(":/config/kubeconfig"));

        String readme = Files.readString(REPO.resolve("services/placement/README.md"));
        for (String var : env.keySet()) {
            if (var.startsWith("GANTRY_PLACEMENT_KUBERNETES_")) {
                // Micronaut reads FOO_BAR_BAZ as foo.bar.baz or foo.bar-baz: a documented key must be one of them
                String dotted = var.toLowerCase().replace('_', '.');
                Matcher keys = Pattern.compile("`(gantry\\.placement\\.kubernetes\\.[a-z.-]+)`").matcher(readme);
                boolean documented = false;
                while (keys.find()) {
                    documented |= keys.group(1).replace('-', '.').equals(dotted);
                }
                assertThat(documented).as(var + " sets a key the placement README documents").isTrue();
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void itsEnvironmentAsMicronautReadsItConfiguresABackendThatReachesTheCluster() throws IOException {
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        try (KubernetesClient admin = server.createClient()) {
            admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-1")
                    .withLabels(Map.of("pool", "gantry")).endMetadata().withNewStatus()
                    .withAllocatable(Map.of("nvidia.com/gpu", new Quantity("4")))
                    .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build()).create();
            Path kubeconfig = dir.resolve("kubeconfig");
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: c, cluster: {server: "%s"}}]
                    users: [{name: u, user: {token: t}}]
                    contexts: [{name: c, context: {cluster: c, user: u}}]
                    current-context: c
                    """.formatted(server.url("/")));

            Map<String, Object> vars = new LinkedHashMap<>();
            ((Map<String, Object>) placement(OVERRIDE).get("environment")).forEach((k, v) ->
                    vars.put(k, interpolate(String.valueOf(v), Map.of("GANTRY_K8S_NODE_SELECTOR", "pool=gantry"))));
            // the container's path of the mount, here: the test's file
            vars.put("GANTRY_PLACEMENT_KUBERNETES_KUBECONFIG", kubeconfig.toString());
            Environment env = ApplicationContext.builder().environmentPropertySource(false)
                    .propertySources(PropertySource.of("compose", vars, PropertySource.PropertyConvention.ENVIRONMENT_VARIABLE))
                    .build().getEnvironment().start();

            assertThat(env.getProperty("gantry.placement.backend", String.class)).contains(KubernetesBackend.NAME);
            try (KubernetesBackend b = BackendFactory.kubernetes(env)) {
                assertThat(b.nodes()).singleElement().satisfies(n -> assertThat(n.gpus()).hasSize(4));
                assertThat(b.settings().namespace()).isEqualTo("gantry");
                assertThat(b.settings().image()).isEqualTo("ubuntu:24.04");
                assertThat(b.settings().tolerationKey()).isEqualTo("gantry.io/dedicated");
                assertThat(b.settings().nodeSelector()).as("a key with a dash, from an environment variable")
                        .isEqualTo("pool=gantry");
                assertThat(b.settings().apiUrl()).isEmpty();
            }
        } finally {
            MockCluster.destroy(server);
        }
    }
}
