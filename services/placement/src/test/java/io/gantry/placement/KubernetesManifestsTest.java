package io.gantry.placement;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.gantry.placement.backend.kubernetes.KubernetesBackend;
import io.gantry.placement.backend.kubernetes.MockCluster;
import io.gantry.runtime.http.TokenStore;
import io.micronaut.management.endpoint.health.HealthEndpoint;
import io.micronaut.management.health.indicator.HealthCheckType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * deploy/kubernetes/ (no real API server on our machines, so checked here): every manifest loads with fabric8's
 * serialization, each service's Deployment and Service agree with that service's real configuration (port, probes on
 * the health endpoint it serves, environment variables for keys it reads, the tokens Secret where
 * {@code gantry.auth.tokens-file} points, placement's RBAC service account), and the whole set is accepted by the mock
 * API server in CRUD mode and reads back as written.
 */
class KubernetesManifestsTest {
    private static final Path REPO = Path.of("../..").toAbsolutePath().normalize();
    private static final Path DIR = REPO.resolve("deploy/kubernetes");
    /** The template of the Secrets; kept out of kustomization.yaml so no placeholder is ever applied over real ones. */
    private static final String SECRETS_TEMPLATE = "secrets.example.yaml";
    private static final List<String> SERVICES = List.of("admission", "queue", "placement", "recovery", "billing");
    /** The JVM's own variable (not a Micronaut key), set by the Dockerfile and restated by every Deployment. */
    private static final String JVM_OPTIONS = "JAVA_TOOL_OPTIONS";

    private static KubernetesMockServer server;
    private static KubernetesClient client;

    @BeforeAll
    static void start() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient();
    }

    @AfterAll
    static void stop() {
        client.close();
        MockCluster.destroy(server);
    }

    // ------------------------------------------------------------------------------------------------ loading

    @SuppressWarnings("unchecked")
    private static List<String> kustomized() throws IOException {
        Map<String, Object> k = new Yaml().load(Files.readString(DIR.resolve("kustomization.yaml")));
        return (List<String>) k.get("resources");
    }

    private static List<HasMetadata> load(String file) throws IOException {
        try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
            return client.load(in).items();
        }
    }

    /** What {@code kubectl apply -k deploy/kubernetes} applies, plus the Secrets of the template. */
    private static List<HasMetadata> everything() throws IOException {
        List<HasMetadata> all = new ArrayList<>();
        for (String file : kustomized()) {
            all.addAll(load(file));
        }
        all.addAll(load(SECRETS_TEMPLATE));
        return all;
    }

    private static <T extends HasMetadata> T find(List<HasMetadata> all, Class<T> kind, String name) {
        return all.stream().filter(kind::isInstance).map(kind::cast).filter(o -> o.getMetadata().getName().equals(name))
                .findFirst().orElseThrow(() -> new AssertionError("no " + kind.getSimpleName() + " " + name));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> applicationYml(String service) throws IOException {
        return new Yaml().load(Files.readString(REPO.resolve("services/" + service + "/src/main/resources/application.yml")));
    }

    @SuppressWarnings("unchecked")
    private static Object at(Map<String, Object> m, String... path) {
        Object cur = m;
        for (String p : path) {
            cur = cur instanceof Map<?, ?> map ? ((Map<String, Object>) map).get(p) : null;
        }
        return cur;
    }

    /** {@code FOO_BAR-BAZ} and {@code foo.bar-baz} alike: how Micronaut matches an environment variable to a key. */
    private static String normalized(String key) {
        return key.toLowerCase(Locale.ROOT).replace('_', '.').replace('-', '.');
    }

    /**
     * The keys a service reads: its application.yml, and the keys its README's configuration table documents
     * (a key in backquotes at the start of a row).
     */
    @SuppressWarnings("unchecked")
    private static Set<String> keysOf(String service) throws IOException {
        Set<String> keys = new HashSet<>();
        flatten("", applicationYml(service), keys);
        Matcher row = Pattern.compile("(?m)^\\| `([a-z][a-z0-9.-]+)`").matcher(
                Files.readString(REPO.resolve("services/" + service + "/README.md")));
        while (row.find()) {
            keys.add(normalized(row.group(1)));
        }
        return keys;
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String prefix, Map<String, Object> m, Set<String> into) {
        m.forEach((k, v) -> {
            String key = prefix.isEmpty() ? k : prefix + "." + k;
            if (v instanceof Map<?, ?> sub) {
                flatten(key, (Map<String, Object>) sub, into);
            } else {
                into.add(normalized(key));
            }
        });
    }

    private static Container container(Deployment d) {
        List<Container> cs = d.getSpec().getTemplate().getSpec().getContainers();
        assertThat(cs).as(d.getMetadata().getName() + " runs one container").hasSize(1);
        return cs.get(0);
    }

    private static Map<String, EnvVar> env(Container c) {
        Map<String, EnvVar> byName = new HashMap<>();
        c.getEnv().forEach(e -> assertThat(byName.put(e.getName(), e)).as("%s set twice", e.getName()).isNull());
        return byName;
    }

    private static String projectVersion() throws IOException {
        Matcher m = Pattern.compile("<artifactId>gantry-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(REPO.resolve("pom.xml")));
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    private static long bytes(String quantity) {
        return Quantity.getAmountInBytes(new Quantity(quantity)).longValueExact();
    }

    // ------------------------------------------------------------------------------------------------ tests

    @Test
    void kustomizationAppliesEveryManifestButTheSecretsTemplateAndNoSecretAtAll() throws IOException {
        List<String> files;
        try (Stream<Path> s = Files.list(DIR)) {
            files = s.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".yaml"))
                    .filter(f -> !f.equals("kustomization.yaml") && !f.equals(SECRETS_TEMPLATE)).toList();
        }
        assertThat(kustomized()).containsExactlyInAnyOrderElementsOf(files);
        for (String file : kustomized()) {
            assertThat(load(file)).as(file).isNotEmpty().noneMatch(Secret.class::isInstance);
        }
        assertThat(load(SECRETS_TEMPLATE)).allMatch(Secret.class::isInstance);
    }

    @Test
    void theSecretsTemplateHoldsPlaceholdersOnly() throws IOException {
        for (HasMetadata o : load(SECRETS_TEMPLATE)) {
            Secret s = (Secret) o;
            assertThat(s.getData()).as("values are written as readable placeholders").isNullOrEmpty();
            s.getStringData().forEach((k, v) -> assertThat(v).as("%s/%s", s.getMetadata().getName(), k).contains("REPLACE"));
        }
        // the tokens file as shipped would not even start a service: no one can run with a known token by mistake
        String tokens = find(load(SECRETS_TEMPLATE), Secret.class, "gantry-tokens").getStringData().get("tokens.yml");
        assertThatThrownBy(() -> TokenStore.parse(tokens)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eachServiceRunsOneInstanceOfItsOwnImageOnItsConfiguredPortBehindAClusterIpService() throws IOException {
        List<HasMetadata> all = everything();
        String version = projectVersion();
        for (String name : SERVICES) {
            Deployment d = find(all, Deployment.class, "gantry-" + name);
            Service svc = find(all, Service.class, "gantry-" + name);
            Container c = container(d);
            Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();

            // two instances: one owns a stateful service's work and the other stands by (admission and billing share
            // the partitions); an update starts the new pod before the old one stops, each with its own instance id
            // (static group membership) and the address the other forwards requests to
            assertThat(d.getSpec().getReplicas()).as(name + " replicas").isEqualTo(2);
            assertThat(d.getSpec().getStrategy().getType()).as(name + " strategy").isEqualTo("RollingUpdate");
            assertThat(d.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
                    .as(name + ": the old pod stops only once the new one is up").isZero();
            assertThat(env(c).get("GANTRY_INSTANCE_ID").getValue()).isEqualTo("$(POD_NAME)");
            assertThat(env(c).get("POD_NAME").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
            assertThat(env(c).get("POD_IP").getValueFrom().getFieldRef().getFieldPath()).isEqualTo("status.podIP");

            // the image deploy/service.Dockerfile builds over target/gantry-<service>.jar, at the project's version
            assertThat(c.getImage()).isEqualTo("gantry-" + name + ":" + version);
            assertThat(Files.readString(REPO.resolve("services/" + name + "/pom.xml")))
                    .contains("<finalName>gantry-" + name + "</finalName>");

            int port = (Integer) at(applicationYml(name), "micronaut", "server", "port");
            assertThat(c.getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getContainerPort()).as(name + " container port").isEqualTo(port);
                assertThat(p.getName()).isEqualTo("http");
            });
            Map<String, EnvVar> env = env(c);
            assertThat(env.get("MICRONAUT_SERVER_PORT").getValue()).isEqualTo(String.valueOf(port));
            assertThat(env.get("GANTRY_INSTANCE_ADVERTISED_URL").getValue()).isEqualTo("http://$(POD_IP):" + port);
            assertThat(env.get("MICRONAUT_SERVER_HOST").getValue()).as("the services listen on loopback unless told")
                    .isEqualTo("0.0.0.0");

            assertThat(d.getSpec().getSelector().getMatchLabels()).isNotEmpty();
            assertThat(podLabels).containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
            assertThat(svc.getSpec().getType()).isEqualTo("ClusterIP");
            assertThat(svc.getSpec().getSelector()).as(name + " Service selects its pods").isNotEmpty();
            assertThat(podLabels).containsAllEntriesOf(svc.getSpec().getSelector());
            for (String other : SERVICES) {
                if (!other.equals(name)) {
                    Map<String, String> otherPods = find(all, Deployment.class, "gantry-" + other)
                            .getSpec().getTemplate().getMetadata().getLabels();
                    assertThat(otherPods.entrySet().containsAll(svc.getSpec().getSelector().entrySet()))
                            .as(name + " Service selects only its own pods, not " + other + "'s").isFalse();
                }
            }
            assertThat(svc.getSpec().getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getPort()).isEqualTo(port);
                assertThat(p.getTargetPort().getStrVal()).isEqualTo("http");
            });
            assertThat(d.getSpec().getTemplate().getMetadata().getAnnotations())
                    .containsEntry("prometheus.io/port", String.valueOf(port))
                    .containsEntry("prometheus.io/path", "/prometheus");
            assertThat(at(applicationYml(name), "endpoints", "prometheus", "sensitive")).isEqualTo(false);
        }
    }

    @Test
    void probesAskTheHealthEndpointTheServiceServesWithoutAToken() throws IOException {
        // Micronaut management's health endpoint: /health (every check), /health/liveness (the process itself)
        String health = "/" + HealthEndpoint.NAME;
        String liveness = health + "/" + HealthCheckType.LIVENESS.name().toLowerCase(Locale.ROOT);
        List<HasMetadata> all = everything();
        for (String name : SERVICES) {
            assertThat(Files.readString(REPO.resolve("services/" + name + "/pom.xml")))
                    .as(name + " has the management endpoints").contains("<artifactId>micronaut-management</artifactId>");
            assertThat(at(applicationYml(name), "endpoints", "health", "sensitive"))
                    .as(name + ": a probe sends no token").isEqualTo(false);
            assertThat(at(applicationYml(name), "endpoints", "health", "enabled")).isNotEqualTo(false);

            Container c = container(find(all, Deployment.class, "gantry-" + name));
            Map<String, Probe> probes = new HashMap<>();
            probes.put("readiness", c.getReadinessProbe());
            probes.put("liveness", c.getLivenessProbe());
            probes.put("startup", c.getStartupProbe());
            probes.forEach((kind, p) -> {
                assertThat(p).as(name + " " + kind + " probe").isNotNull();
                assertThat(p.getHttpGet().getPort().getStrVal()).as(name + " " + kind).isEqualTo("http");
            });
            assertThat(probes.get("readiness").getHttpGet().getPath()).isEqualTo(health);
            assertThat(probes.get("liveness").getHttpGet().getPath()).isEqualTo(liveness);
            assertThat(probes.get("startup").getHttpGet().getPath()).isEqualTo(liveness);
            // restoring from Kafka at start must not be mistaken for a hang
            Probe startup = probes.get("startup");
            assertThat(startup.getPeriodSeconds() * startup.getFailureThreshold()).as(name + " start budget, s")
                    .isGreaterThanOrEqualTo(120);
        }
    }

    @Test
    void everyEnvironmentVariableSetsAKeyTheServiceReads() throws IOException {
        List<HasMetadata> all = everything();
        Map<String, String> shared = find(all, io.fabric8.kubernetes.api.model.ConfigMap.class, "gantry-config").getData();
        for (String name : SERVICES) {
            Set<String> keys = keysOf(name);
            Map<String, EnvVar> env = env(container(find(all, Deployment.class, "gantry-" + name)));
            env.forEach((var, e) -> {
                if (var.equals(JVM_OPTIONS) || var.startsWith("POD_")) {
                    // the pod's own name and address, for the variables below that set keys
                    return;
                }
                assertThat(keys).as("%s: %s sets a key the service reads (application.yml or its README)", name, var)
                        .contains(normalized(var));
                if (e.getValueFrom() != null && e.getValueFrom().getConfigMapKeyRef() != null) {
                    var ref = e.getValueFrom().getConfigMapKeyRef();
                    assertThat(ref.getName()).isEqualTo("gantry-config");
                    assertThat(shared).as("gantry-config").containsKey(ref.getKey());
                    assertThat(normalized(ref.getKey())).as("the ConfigMap's key is the key the variable sets")
                            .isEqualTo(normalized(var));
                }
                if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                    var ref = e.getValueFrom().getSecretKeyRef();
                    assertThat(find(all, Secret.class, ref.getName()).getStringData()).as(ref.getName())
                            .containsKey(ref.getKey());
                }
            });
            assertThat(env).containsKeys("KAFKA_BOOTSTRAP_SERVERS", "GANTRY_KAFKA_PARTITIONS", "GANTRY_AUTH_TOKENS_FILE");

            // a service with tables gets its own database, from its own Secret
            boolean hasTables = Files.isDirectory(REPO.resolve("services/" + name + "/src/main/resources/db/migration"));
            assertThat(env.containsKey("DATASOURCES_DEFAULT_URL")).as(name + " database iff migrations").isEqualTo(hasTables);
            if (hasTables) {
                for (String k : List.of("URL", "USERNAME", "PASSWORD")) {
                    assertThat(env.get("DATASOURCES_DEFAULT_" + k).getValueFrom().getSecretKeyRef().getName())
                            .isEqualTo("gantry-" + name + "-db");
                }
                assertThat(find(all, Secret.class, "gantry-" + name + "-db").getStringData().get("url"))
                        .endsWith("/gantry_" + name);
            }
        }
    }

    @Test
    void theHeapFitsTheMemoryLimitAndTheJvmTrustsTheEventClasses() throws IOException {
        String dockerfile = Files.readString(REPO.resolve("deploy/service.Dockerfile"));
        Matcher avro = Pattern.compile("-Dorg\\.apache\\.avro\\.SERIALIZABLE_PACKAGES=\\S+").matcher(dockerfile);
        assertThat(avro.find()).isTrue();
        for (String name : SERVICES) {
            Container c = container(find(everything(), Deployment.class, "gantry-" + name));
            // the Deployment's options replace the image's: without the Avro trust no event decodes
            String opts = env(c).get(JVM_OPTIONS).getValue().replace("\"", "");
            assertThat(opts).contains(avro.group().replace("\"", ""));
            Matcher xmx = Pattern.compile("-Xmx(\\d+[kmgKMG])").matcher(opts);
            assertThat(xmx.find()).as(name + " sets its heap").isTrue();
            long heap = bytes(xmx.group(1).toUpperCase(Locale.ROOT).replace("K", "Ki").replace("M", "Mi").replace("G", "Gi"));

            var res = c.getResources();
            assertThat(res.getRequests().get("memory")).as(name + ": requests = limits for memory")
                    .isEqualTo(res.getLimits().get("memory"));
            long limit = bytes(res.getLimits().get("memory").toString());
            // 227-362 MiB resident measured per service with heaps of 256-512 MiB: 256 MiB beyond the heap
            assertThat(limit - heap).as(name + " room beyond the heap").isGreaterThanOrEqualTo(256L << 20);
            assertThat(res.getRequests()).containsKey("cpu");
            assertThat(res.getLimits()).containsKey("cpu");
        }
    }

    @Test
    void theTokensSecretIsMountedWhereGantryAuthTokensFilePoints() throws IOException {
        List<HasMetadata> all = everything();
        Secret tokens = find(all, Secret.class, "gantry-tokens");
        for (String name : SERVICES) {
            Deployment d = find(all, Deployment.class, "gantry-" + name);
            Container c = container(d);
            Path file = Path.of(env(c).get("GANTRY_AUTH_TOKENS_FILE").getValue());
            VolumeMount mount = c.getVolumeMounts().stream()
                    .filter(m -> file.startsWith(Path.of(m.getMountPath()))).findFirst()
                    .orElseThrow(() -> new AssertionError(name + ": nothing is mounted at " + file));
            assertThat(mount.getReadOnly()).isTrue();
            Volume volume = d.getSpec().getTemplate().getSpec().getVolumes().stream()
                    .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();
            assertThat(volume.getSecret().getSecretName()).isEqualTo(tokens.getMetadata().getName());
            String inVolume = Path.of(mount.getMountPath()).relativize(file).toString();
            assertThat(volume.getSecret().getItems()).singleElement().satisfies(item -> {
                assertThat(item.getPath()).isEqualTo(inVolume);
                assertThat(tokens.getStringData()).containsKey(item.getKey());
            });
        }
    }

    @Test
    void placementRunsTasksWithTheRbacServiceAccountInTheNamespaceItsRoleGrants() throws IOException {
        List<HasMetadata> all = everything();
        PodSpec pod = find(all, Deployment.class, "gantry-placement").getSpec().getTemplate().getSpec();
        Map<String, EnvVar> env = env(container(find(all, Deployment.class, "gantry-placement")));
        ServiceAccount sa = all.stream().filter(ServiceAccount.class::isInstance).map(ServiceAccount.class::cast)
                .findFirst().orElseThrow();
        Role role = find(all, Role.class, "gantry-placement");

        assertThat(pod.getServiceAccountName()).isEqualTo(sa.getMetadata().getName());
        assertThat(pod.getAutomountServiceAccountToken()).as("the backend's in-pod credentials").isNotEqualTo(false);
        assertThat(find(all, RoleBinding.class, "gantry-placement").getSubjects())
                .anyMatch(s -> s.getName().equals(sa.getMetadata().getName()));
        assertThat(find(all, ClusterRoleBinding.class, "gantry-placement-nodes").getSubjects())
                .anyMatch(s -> s.getName().equals(sa.getMetadata().getName())
                        && s.getNamespace().equals(sa.getMetadata().getNamespace()));
        assertThat(find(all, Deployment.class, "gantry-placement").getMetadata().getNamespace())
                .isEqualTo(sa.getMetadata().getNamespace());

        assertThat(env.get("GANTRY_PLACEMENT_BACKEND").getValue()).isEqualTo(KubernetesBackend.NAME);
        assertThat(env.get("GANTRY_PLACEMENT_KUBERNETES_NAMESPACE").getValue()).isEqualTo(role.getMetadata().getNamespace());
        assertThat(env).as("in a pod the service account, not a kubeconfig")
                .doesNotContainKey("GANTRY_PLACEMENT_KUBERNETES_KUBECONFIG");
        // tasks report checkpoints to admission through its Service
        Service admission = find(all, Service.class, "gantry-admission");
        assertThat(env.get("GANTRY_PLACEMENT_KUBERNETES_API_URL").getValue()).isEqualTo("http://%s.%s.svc:%d".formatted(
                admission.getMetadata().getName(), admission.getMetadata().getNamespace(),
                admission.getSpec().getPorts().get(0).getPort()));

        for (String name : SERVICES) {
            if (!name.equals("placement")) {
                assertThat(find(all, Deployment.class, "gantry-" + name).getSpec().getTemplate().getSpec()
                        .getAutomountServiceAccountToken()).as(name + " needs no API credentials").isFalse();
            }
        }
    }

    @Test
    void theMockApiServerAcceptsEveryManifestAndReadsItBack() throws IOException {
        List<HasMetadata> all = everything();
        String namespace = all.stream().filter(Namespace.class::isInstance).findFirst().orElseThrow()
                .getMetadata().getName();
        for (HasMetadata o : all) {
            if (!(o instanceof Namespace) && !o.getKind().startsWith("Cluster")) {
                assertThat(o.getMetadata().getNamespace()).as(o.getKind() + " " + o.getMetadata().getName())
                        .isEqualTo(namespace);
            }
            HasMetadata created = client.resource(o).create();
            assertThat(created.getMetadata().getUid()).isNotBlank();
        }
        for (HasMetadata o : all) {
            HasMetadata read = client.resource(o).get();
            assertThat(read).as("read back " + o.getKind() + " " + o.getMetadata().getName()).isNotNull();
            assertThat(read.getMetadata().getLabels()).isEqualTo(o.getMetadata().getLabels());
        }
        for (String name : SERVICES) {
            Deployment d = client.apps().deployments().inNamespace(namespace).withName("gantry-" + name).get();
            assertThat(d.getSpec()).isEqualTo(find(all, Deployment.class, "gantry-" + name).getSpec());
            assertThat(client.services().inNamespace(namespace).withName("gantry-" + name).get().getSpec().getPorts())
                    .hasSize(1);
        }
        assertThat(client.apps().deployments().inNamespace(namespace)
                .withLabel("app.kubernetes.io/part-of", "gantry").list().getItems()).hasSize(SERVICES.size());
    }
}
