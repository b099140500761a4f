package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Kubernetes scrape configuration (deploy/prometheus/kubernetes.yml) on a real Prometheus: Debian's build has no
 * Kubernetes discovery, so the pods of deploy/kubernetes are handed to the shipped job's relabel rules as a file
 * discovery would, with the labels Kubernetes discovery gives a pod (its labels, annotations, namespace, name, phase)
 * at addresses where nothing answers. Every Gantry pod must be scraped at its prometheus.io/port and path with
 * job="gantry" and its service, and GantryServiceDown must name each service that is down. A pod job of the
 * operator's own with the file's two gantry rules appended must label Gantry's pods the same and leave another
 * application's pod alone.
 */
class KubernetesScrapeConfigTest {
    static final Path DEPLOY = PrometheusDashboardsTest.DEPLOY;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    static final Set<String> SERVICES = Set.of("admission", "queue", "placement", "recovery", "billing");

    /** A Deployment's pod as Kubernetes discovery shows it to relabelling. */
    record Pod(String component, int port, String path, Map<String, String> meta) {
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyGantryPodIsScrapedAsJobGantryWithItsServiceAndGantryServiceDownNamesTheServiceThatIsDown()
            throws Exception {
        Path binary = PrometheusDashboardsTest.prometheusBinary();
        Path dir = Files.createTempDirectory("gantry-k8s-scrape-");
        Process prometheus = null;
        try {
            List<Pod> pods = pods();
            assertThat(pods).extracting(Pod::component).containsExactlyInAnyOrderElementsOf(SERVICES);
            List<Map<String, Object>> gantryTargets = new ArrayList<>();
            for (Pod p : pods) {
                gantryTargets.add(target(p.meta()));
            }
            // a pod still being scheduled is not scraped
            Map<String, String> pending = new HashMap<>(pods.get(0).meta());
            pending.put("__meta_kubernetes_pod_phase", "Pending");
            pending.put("__meta_kubernetes_pod_name", "gantry-pending-0");
            pending.put("__address__", "192.0.2.99:" + pods.get(0).port());
            gantryTargets.add(target(pending));
            Files.writeString(dir.resolve("gantry-pods.json"), Api.JSON.writeValueAsString(gantryTargets));

            // the operator's own pod job: another application's pod, and one of Gantry's
            Map<String, String> other = new HashMap<>();
            other.put("__address__", "192.0.2.50:9100");
            other.put("__meta_kubernetes_namespace", "monitoring");
            other.put("__meta_kubernetes_pod_name", "node-exporter-abc12");
            other.put("__meta_kubernetes_pod_phase", "Running");
            other.put("__meta_kubernetes_pod_label_app_kubernetes_io_name", "node-exporter");
            other.put("__meta_kubernetes_pod_label_app_kubernetes_io_component", "metrics");
            other.put("__meta_kubernetes_pod_annotation_prometheus_io_scrape", "true");
            other.put("__meta_kubernetes_pod_annotation_prometheus_io_port", "9100");
            Map<String, String> gantryInOwnJob = new HashMap<>(pods.get(0).meta());
            gantryInOwnJob.put("__address__", "192.0.2.60:" + pods.get(0).port());
            gantryInOwnJob.put("__meta_kubernetes_pod_name", "gantry-own-job-0");
            Files.writeString(dir.resolve("other-pods.json"),
                    Api.JSON.writeValueAsString(List.of(target(other), target(gantryInOwnJob))));

            Map<String, Object> config = new Yaml().load(Files.readString(DEPLOY.resolve("prometheus/kubernetes.yml")));
            config.put("global", Map.of("scrape_interval", "1s", "scrape_timeout", "1s", "evaluation_interval", "1s"));
            config.put("rule_files", List.of(DEPLOY.resolve("prometheus/rules").toString() + "/*.yml"));
            List<Map<String, Object>> jobs = (List<Map<String, Object>>) config.get("scrape_configs");
            Map<String, Object> gantry = jobs.stream().filter(j -> "gantry".equals(j.get("job_name"))).findFirst()
                    .orElseThrow();
            List<Map<String, Object>> sd = (List<Map<String, Object>>) gantry.remove("kubernetes_sd_configs");
            assertThat(sd).singleElement().satisfies(s -> assertThat(s).containsEntry("role", "pod"));
            gantry.put("file_sd_configs", List.of(Map.of("files", List.of(dir.resolve("gantry-pods.json").toString()))));
            List<Map<String, Object>> rules = (List<Map<String, Object>>) gantry.get("relabel_configs");
            Map<String, Object> own = new LinkedHashMap<>();
            own.put("job_name", "kubernetes-pods");
            own.put("file_sd_configs", List.of(Map.of("files", List.of(dir.resolve("other-pods.json").toString()))));
            // a generic pod job (every annotated pod) with the two gantry rules appended
            own.put("relabel_configs", rules.stream().filter(r -> !("keep".equals(r.get("action"))
                    && String.valueOf(r.get("source_labels")).contains("part_of"))).toList());
            jobs.add(own);
            Path file = dir.resolve("prometheus.yml");
            Files.writeString(file, new Yaml().dump(config));
            PrometheusDashboardsTest.promtool("check", "config", file.toString());

            int port = EmbeddedStack.freePort();
            String url = "http://127.0.0.1:" + port;
            prometheus = new ProcessBuilder(binary.toString(), "--config.file=" + file,
                    "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + port)
                    .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                    .until(() -> get(url + "/-/ready").statusCode() == 200);

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                JsonNode targets = Api.JSON.readTree(get(url + "/api/v1/targets").body()).path("data");
                Map<String, JsonNode> byPod = new HashMap<>();
                targets.path("activeTargets").forEach(t -> byPod.put(t.path("labels").path("pod").asText(), t));
                for (Pod p : pods) {
                    JsonNode t = byPod.get(p.meta().get("__meta_kubernetes_pod_name"));
                    assertThat(t).as(p.component() + "'s pod is a target").isNotNull();
                    assertThat(t.path("scrapePool").asText()).isEqualTo("gantry");
                    assertThat(t.path("labels").path("job").asText()).isEqualTo("gantry");
                    assertThat(t.path("labels").path("service").asText()).isEqualTo(p.component());
                    assertThat(t.path("labels").path("namespace").asText()).isEqualTo("gantry");
                    assertThat(t.path("scrapeUrl").asText()).as("the annotated port and path")
                            .isEqualTo("http://" + p.meta().get("__address__").replaceAll(":\\d+$", "") + ":"
                                    + p.port() + p.path());
                }
                assertThat(byPod).as("a pending pod is not scraped").doesNotContainKey("gantry-pending-0");
                JsonNode mine = byPod.get("gantry-own-job-0");
                assertThat(mine).as("Gantry's pod in the operator's own job").isNotNull();
                assertThat(mine.path("scrapePool").asText()).isEqualTo("kubernetes-pods");
                assertThat(mine.path("labels").path("job").asText()).isEqualTo("gantry");
                assertThat(mine.path("labels").path("service").asText()).isEqualTo(pods.get(0).component());
                JsonNode exporter = byPod.get("node-exporter-abc12");
                assertThat(exporter).as("another application's pod in the operator's own job").isNotNull();
                assertThat(exporter.path("labels").path("job").asText()).isEqualTo("kubernetes-pods");
                assertThat(exporter.path("labels").has("service")).isFalse();
            });

            // nothing answers at those addresses: GantryServiceDown is pending for every service, by name
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                JsonNode alerts = query(url, "ALERTS{alertname=\"GantryServiceDown\"}");
                Set<String> services = new TreeSet<>();
                alerts.forEach(a -> services.add(a.path("metric").path("service").asText()));
                assertThat(services).containsExactlyInAnyOrderElementsOf(SERVICES);
                assertThat(query(url, "up{job=\"gantry\",service=\"\"}")).as("a Gantry target without service")
                        .isEmpty();
            });
        } finally {
            if (prometheus != null) {
                prometheus.destroy();
                if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                    prometheus.destroyForcibly();
                }
            }
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                // a leftover temporary directory is harmless
            }
        }
    }

    /** The pods of deploy/kubernetes' Deployments, as Kubernetes pod discovery labels them (one address each). */
    @SuppressWarnings("unchecked")
    static List<Pod> pods() throws IOException {
        List<Pod> out = new ArrayList<>();
        List<Path> manifests;
        try (Stream<Path> files = Files.list(DEPLOY.resolve("kubernetes"))) {
            manifests = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
        }
        for (Path f : manifests) {
            for (Object o : new Yaml().loadAll(Files.readString(f))) {
                Map<String, Object> doc = (Map<String, Object>) o;
                if (doc == null || !"Deployment".equals(doc.get("kind"))) {
                    continue;
                }
                Map<String, Object> metadata = (Map<String, Object>) doc.get("metadata");
                Map<String, Object> template = (Map<String, Object>) ((Map<String, Object>) doc.get("spec"))
                        .get("template");
                Map<String, Object> podMeta = (Map<String, Object>) template.get("metadata");
                Map<String, String> labels = (Map<String, String>) podMeta.get("labels");
                Map<String, String> annotations = (Map<String, String>) podMeta.get("annotations");
                Map<String, Object> container = ((List<Map<String, Object>>) ((Map<String, Object>) template
                        .get("spec")).get("containers")).get(0);
                int containerPort = (Integer) ((List<Map<String, Object>>) container.get("ports")).get(0)
                        .get("containerPort");
                Map<String, String> meta = new HashMap<>();
                meta.put("__address__", "192.0.2." + (out.size() + 1) + ":" + containerPort);
                meta.put("__meta_kubernetes_namespace", (String) metadata.get("namespace"));
                meta.put("__meta_kubernetes_pod_name", metadata.get("name") + "-5d9c7f-" + out.size());
                meta.put("__meta_kubernetes_pod_phase", "Running");
                labels.forEach((k, v) -> meta.put("__meta_kubernetes_pod_label_" + sanitized(k), v));
                annotations.forEach((k, v) -> meta.put("__meta_kubernetes_pod_annotation_" + sanitized(k), v));
                out.add(new Pod(labels.get("app.kubernetes.io/component"),
                        Integer.parseInt(annotations.get("prometheus.io/port")), annotations.get("prometheus.io/path"),
                        meta));
            }
        }
        return out;
    }

    /** As Kubernetes discovery turns a label or annotation name into a label name. */
    private static String sanitized(String name) {
        return name.replaceAll("[^a-zA-Z0-9_]", "_");
    }

    private static Map<String, Object> target(Map<String, String> meta) {
        Map<String, String> labels = new HashMap<>(meta);
        String address = labels.remove("__address__");
        return Map.of("targets", List.of(address), "labels", labels);
    }

    private static JsonNode query(String url, String expr) throws IOException {
        JsonNode r = Api.JSON.readTree(get(url + "/api/v1/query?query=" + URLEncoder.encode(expr,
                StandardCharsets.UTF_8)).body());
        assertThat(r.path("status").asText()).as(expr).isEqualTo("success");
        return r.path("data").path("result");
    }

    private static HttpResponse<String> get(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
