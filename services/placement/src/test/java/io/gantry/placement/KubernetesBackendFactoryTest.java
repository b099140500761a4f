package io.gantry.placement;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.gantry.placement.backend.kubernetes.KubernetesBackend;
import io.micronaut.context.ApplicationContext;
import io.micronaut.context.env.Environment;
import io.micronaut.context.exceptions.ConfigurationException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code gantry.placement.kubernetes.*} read into a backend talking to the cluster a kubeconfig names. */
class KubernetesBackendFactoryTest {
    private static KubernetesMockServer server;
    private static KubernetesClient admin;
    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        admin = server.createClient();
        admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("gpu-1").endMetadata().withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity("8"), "nvidia.com/gpu", new Quantity("2")))
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build()).create();
    }

    @AfterAll
    static void stop() {
        admin.close();
        io.gantry.placement.backend.kubernetes.MockCluster.destroy(server);
    }

    private Environment env(Map<String, Object> props) throws IOException {
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster: {server: "%s"}
                users:
                - name: placement
                  user: {token: "do-not-log-me"}
                contexts:
                - name: mock
                  context: {cluster: mock, user: placement, namespace: from-context}
                current-context: mock
                """.formatted(server.url("/")));
        Map<String, Object> all = new HashMap<>(props);
        all.putIfAbsent("gantry.placement.kubernetes.kubeconfig", kubeconfig.toString());
        return ApplicationContext.builder().properties(all).build().getEnvironment().start();
    }

    @Test
    void aKubeconfigNamesTheClusterAndItsContextTheNamespaceUnlessConfigured() throws IOException {
        try (KubernetesBackend b = BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.image", "site/cuda:12",
                "gantry.placement.kubernetes.grace-seconds", "90",
                "gantry.placement.kubernetes.toleration-key", "example.com/gpu-pool",
                "gantry.placement.kubernetes.foreign-scan-interval", "0s",
                "gantry.placement.kubernetes.allowed-host-paths", "/mnt/datasets, /scratch")))) {
            assertThat(b.nodes()).singleElement().satisfies(n -> assertThat(n.gpus()).hasSize(2));
            assertThat(b.settings().namespace()).isEqualTo("from-context");
            assertThat(b.settings().image()).isEqualTo("site/cuda:12");
            assertThat(b.settings().graceSeconds()).isEqualTo(90);
            assertThat(b.settings().tolerationKey()).isEqualTo("example.com/gpu-pool");
            assertThat(b.settings().foreignScanInterval()).isZero();
            assertThat(b.settings().allowedHostPaths()).containsExactly("/mnt/datasets", "/scratch");
        }
        try (KubernetesBackend b = BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.namespace", "jobs")))) {
            assertThat(b.settings().namespace()).isEqualTo("jobs");
            assertThat(b.settings().tolerationKey()).isEqualTo("gantry.io/dedicated");
            assertThat(b.settings().foreignScanInterval()).isEqualTo(java.time.Duration.ofSeconds(60));
            assertThat(b.settings().allowedHostPaths()).as("no host path by default").isEmpty();
        }
    }

    @Test
    void aBadSettingRefusesToStartNamingIt() {
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.grace-seconds", "-1"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("grace-seconds");
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.master-port", "http"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("master-port must be a whole number");
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.toleration-key",
                "not a key"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("toleration-key");
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of(
                "gantry.placement.kubernetes.foreign-scan-interval", "-1s"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("foreign-scan-interval");
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of(
                "gantry.placement.kubernetes.allowed-host-paths", "/data,relative"))))
                .isInstanceOf(ConfigurationException.class).hasMessageContaining("allowed-host-paths");
        assertThatThrownBy(() -> BackendFactory.kubernetes(env(Map.of("gantry.placement.kubernetes.kubeconfig",
                dir.resolve("missing").toString())))).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("cannot configure the Kubernetes client")
                .hasMessageNotContaining("do-not-log-me");
    }

    @Test
    void thePlacementServiceStartsOnTheKubernetesBackendAloneWithItsGauges() throws IOException {
        env(Map.of()); // writes the kubeconfig
        Path tokens = io.gantry.testkit.TokensFile.write(io.gantry.testkit.TokensFile.tenants("t", "t-token"),
                "admin-token");
        Map<String, Object> props = new HashMap<>();
        props.put("gantry.placement.backend", "kubernetes");
        props.put("gantry.placement.kubernetes.kubeconfig", dir.resolve("kubeconfig").toString());
        props.put("kafka.bootstrap.servers", io.gantry.embedded.EmbeddedKafka.shared().bootstrapServers());
        props.put("micronaut.server.port", "-1");
        props.put("gantry.auth.tokens-file", tokens.toString());
        try (ApplicationContext context = ApplicationContext.run(props)) {
            io.micrometer.core.instrument.MeterRegistry registry =
                    context.getBean(io.micrometer.core.instrument.MeterRegistry.class);
            assertThat(registry.find("gantry.placement.kubernetes.foreign.pods").gauge()).isNotNull();
        }
    }
}
