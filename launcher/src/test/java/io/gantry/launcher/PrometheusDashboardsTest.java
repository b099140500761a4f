package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dashboards and rules are proven on a real Prometheus: it scrapes the embedded stack (the shipped
 * deploy/prometheus/prometheus.yml with its targets moved to loopback) while jobs run, and every panel query of
 * every dashboard in deploy/grafana/dashboards and every rule in deploy/prometheus/rules must evaluate without error
 * and return data. Alert expressions are the exception: on a healthy cluster they rightly return nothing, so for
 * them only that they evaluate is checked. Needs Debian's {@code prometheus} package: installed with apt-get when
 * missing, or the test is skipped with the reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PrometheusDashboardsTest {
    static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    static final Path DEPLOY = REPO.resolve("deploy");
    static final Duration LONG = Duration.ofSeconds(90);
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The tenant the tenant dashboard is evaluated for. */
    static final String TENANT = "alpha";

    Path dir;
    DevCluster cluster;
    Process prometheus;
    String prometheusUrl;
    Instant startedAt;
    Api alpha;
    Api beta;

    @BeforeAll
    void startTheStackAndPrometheus() throws Exception {
        Path binary = prometheusBinary();
        dir = Files.createTempDirectory("gantry-prometheus-");
        Files.writeString(dir.resolve("tokens.yml"), """
                tokens:
                  - tenant: alpha
                    token: alpha-token-0001
                  - tenant: beta
                    token: beta-token-0002
                  - tenant: ops
                    role: admin
                    token: admin-token-0005
                """);
        int basePort = EmbeddedStack.freePortRange(5);
        cluster = new DevCluster(new DevCluster.Config(dir, REPO, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                basePort,
                Map.of("admission", Map.of("gantry.admission.metrics.refresh", "1s"),
                        "queue", Map.of("gantry.queue.metrics.refresh", "1s", "gantry.queue.default-gpu-quota", "32",
                                "gantry.queue.quotas.beta", "4"),
                        "placement", Map.of("gantry.placement.metrics.refresh", "1s",
                                "gantry.placement.simulated.speedup", "1",
                                "gantry.placement.simulated.heartbeat-interval", "500ms"),
                        "recovery", Map.of("gantry.recovery.metrics.refresh", "1s"),
                        "billing", Map.of("gantry.billing.finops.check-every", "1s")),
                "200m")).start();
        alpha = new Api(cluster.url("admission"), "alpha-token-0001");
        beta = new Api(cluster.url("admission"), "beta-token-0002");

        Map<String, Integer> ports = new HashMap<>();
        for (int i = 0; i < DevCluster.SERVICES.size(); i++) {
            ports.put(DevCluster.SERVICES.get(i), basePort + i);
        }
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, new Yaml().dump(onLoopback(ports)));
        promtool("check", "config", config.toString());
        int port = EmbeddedStack.freePort();
        prometheusUrl = "http://127.0.0.1:" + port;
        prometheus = new ProcessBuilder(binary.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> get(prometheusUrl + "/-/ready").statusCode() == 200);
        startedAt = Instant.now();
    }

    @AfterAll
    void stopIt() throws InterruptedException {
        if (prometheus != null) {
            prometheus.destroy();
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly();
            }
        }
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                // a leftover temporary directory is harmless
            }
        }
    }

    @Test
    void everyDashboardQueryAndEveryRuleReturnsDataWhileJobsRun() throws Exception {
        // a gang that finishes, one that keeps running, and one that waits for its quota: every panel has something
        String done = submit(alpha, job("done", 2, 4, 3));
        submit(alpha, job("long", 1, 8, 100000));
        submit(beta, job("over-quota", 1, 8, 20));
        awaitState(alpha, done, "SUCCEEDED");

        await().atMost(LONG).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
            assertThat(query("up{job=\"gantry\"} == 1")).as("every service is scraped").hasSize(5);
            assertThat(query("gantry_billing_month_gpu_seconds{tenant=\"" + TENANT + "\"} > 0"))
                    .as(() -> "billing's gauges: " + gantryLines("billing")).isNotEmpty();
            assertThat(query("gantry_jobs{tenant=\"" + TENANT + "\",state=\"SUCCEEDED\"} > 0")).isNotEmpty();
            assertThat(query("gantry_queue_pending_jobs{tenant=\"beta\",reason!=\"NONE\"} > 0"))
                    .as("a reason why beta waits").isNotEmpty();
            assertThat(query("sum(gantry_placement_gpus{state=\"allocated\"}) >= 8"))
                    .as("the long job's 8 GPUs are allocated").isNotEmpty();
            assertThat(query("gantry_job_admission_wait_seconds_count{tenant=\"" + TENANT + "\"} >= 2"))
                    .as("both of alpha's jobs were dispatched").isNotEmpty();
            // admission reports every service's dead letters: the scrape's own `service` label must not hide whose
            assertThat(query("count(count by (owner, topic) (gantry_dead_letters_total)) == 5"))
                    .as("a dead-letter series per owner and topic").isNotEmpty();
        });

        Map<String, String> mustReturnData = new LinkedHashMap<>();
        Map<String, String> mayBeEmpty = new LinkedHashMap<>();
        for (Path dashboard : dashboards()) {
            JsonNode json = Api.JSON.readTree(Files.readString(dashboard));
            assertThat(json.path("panels")).as(dashboard + " has panels").isNotEmpty();
            for (JsonNode panel : json.path("panels")) {
                assertThat(panel.path("targets")).as(panel.path("title") + " has queries").isNotEmpty();
                for (JsonNode target : panel.path("targets")) {
                    mustReturnData.put(dashboard.getFileName() + " / " + panel.path("title").asText() + " / "
                            + target.path("refId").asText(), target.path("expr").asText().replace("$tenant", TENANT));
                }
            }
        }
        for (Map<String, Object> rule : rules()) {
            if (rule.containsKey("record")) {
                mustReturnData.put("rule " + rule.get("record"), (String) rule.get("expr"));
                mustReturnData.put("recorded " + rule.get("record"), (String) rule.get("record"));
            } else {
                // a healthy cluster fires no alert: evaluating without error is what can be checked
                mayBeEmpty.put("alert " + rule.get("alert"), (String) rule.get("expr"));
            }
        }
        assertThat(mustReturnData).hasSizeGreaterThan(40);

        await().atMost(LONG).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
            Map<String, String> failures = new TreeMap<>();
            mustReturnData.forEach((what, expr) -> {
                JsonNode r = evaluate(expr);
                if (!"success".equals(r.path("status").asText())) {
                    failures.put(what, expr + " -> " + r.path("error").asText());
                } else if (r.path("data").path("result").isEmpty()) {
                    failures.put(what, expr + " -> no data");
                }
            });
            mayBeEmpty.forEach((what, expr) -> {
                JsonNode r = evaluate(expr);
                if (!"success".equals(r.path("status").asText())) {
                    failures.put(what, expr + " -> " + r.path("error").asText());
                }
            });
            assertThat(failures).as("queries that failed or returned nothing").isEmpty();
        });

        JsonNode rules = Api.JSON.readTree(get(prometheusUrl + "/api/v1/rules").body());
        List<String> unhealthy = new ArrayList<>();
        rules.path("data").path("groups").forEach(g -> g.path("rules").forEach(r -> {
            if (!"ok".equals(r.path("health").asText())) {
                unhealthy.add(r.path("name").asText() + ": " + r.path("lastError").asText());
            }
        }));
        assertThat(unhealthy).as("rules Prometheus could not evaluate").isEmpty();

        JsonNode tenants = Api.JSON.readTree(get(prometheusUrl + "/api/v1/label/tenant/values?match[]="
                + URLEncoder.encode("gantry_jobs", StandardCharsets.UTF_8)).body());
        assertThat(tenants.path("data").toString()).as("the tenant dashboard's $tenant choices").contains(TENANT);

        // the dashboards drawn from the same data (docs/images shows them): every panel has something to show.
        // -Dgantry.dashboards.minutes=N first keeps a mixed workload going for N minutes (how the README's images
        // are made; CI draws what the test above produced)
        long lingerMinutes = Long.getLong("gantry.dashboards.minutes", 0);
        if (lingerMinutes > 0) {
            keepJobsGoing(Duration.ofMinutes(lingerMinutes));
        }
        DashboardRenderer.Source source = new DashboardRenderer.Source() {
            @Override
            public JsonNode instant(String expr) {
                return evaluate(expr);
            }

            @Override
            public JsonNode range(String expr, Instant from, Instant to, int stepSeconds) {
                return rangeQuery(expr, from, to, stepSeconds);
            }
        };
        Instant to = Instant.now();
        for (Path dashboard : dashboards()) {
            Path png = Path.of(System.getProperty("gantry.dashboards.out", "target/dashboards"),
                    dashboard.getFileName().toString().replace(".json", ".png"));
            List<DashboardRenderer.Drawn> drawn = DashboardRenderer.render(Api.JSON.readTree(Files.readString(
                    dashboard)), source, startedAt, to, e -> e.replace("$tenant", TENANT), png);
            assertThat(drawn).as(dashboard + ": panels drawn with nothing to show").allMatch(d -> d.series() > 0);
            assertThat(png).isNotEmptyFile();
        }
    }

    /** Jobs of both tenants of varied sizes and lengths, a few cancelled, until {@code d} has passed. */
    private void keepJobsGoing(Duration d) {
        java.util.Random random = new java.util.Random(7);
        Instant until = Instant.now().plus(d);
        int i = 0;
        while (Instant.now().isBefore(until)) {
            Api who = random.nextInt(3) == 0 ? beta : alpha;
            int gpus = List.of(1, 2, 4, 8).get(random.nextInt(4));
            String id = submit(who, job("load-" + i++, 1 + random.nextInt(2), gpus, 5 + random.nextInt(60)));
            if (random.nextInt(8) == 0) {
                who.delete("/v1/jobs/" + id);
            }
            await().pollDelay(Duration.ofSeconds(2 + random.nextInt(4))).until(() -> true);
        }
    }

    private JsonNode rangeQuery(String expr, Instant from, Instant to, int stepSeconds) {
        try {
            return Api.JSON.readTree(get(prometheusUrl + "/api/v1/query_range?query="
                    + URLEncoder.encode(expr, StandardCharsets.UTF_8) + "&start=" + from.getEpochSecond() + "&end="
                    + to.getEpochSecond() + "&step=" + stepSeconds).body());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void everyServiceServesItsOpenApiDocumentAndSwaggerUiWithoutAToken() {
        for (String service : DevCluster.SERVICES) {
            HttpResponse<String> doc = get(cluster.url(service) + "/swagger/gantry-" + service + "-0.1.yml");
            assertThat(doc.statusCode()).as(service + " OpenAPI document").isEqualTo(200);
            assertThat(doc.body()).startsWith("openapi: 3").contains("title: gantry-" + service, "/v1/");
            HttpResponse<String> ui = get(cluster.url(service) + "/swagger-ui/index.html");
            assertThat(ui.statusCode()).as(service + " Swagger UI").isEqualTo(200);
            assertThat(ui.body()).contains("gantry-" + service + "-0.1.yml");
        }
    }

    @Test
    void theRulesPassPromtool() throws Exception {
        List<String> args = new ArrayList<>(List.of("check", "rules"));
        try (Stream<Path> files = Files.list(DEPLOY.resolve("prometheus/rules"))) {
            files.filter(f -> f.toString().endsWith(".yml")).sorted().forEach(f -> args.add(f.toString()));
        }
        assertThat(args).hasSizeGreaterThan(2);
        promtool(args.toArray(String[]::new));
    }

    /** The shipped Prometheus configuration, scraping this test's loopback ports and reading the repo's rules. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> onLoopback(Map<String, Integer> ports) throws IOException {
        Map<String, Object> config = new Yaml().load(Files.readString(DEPLOY.resolve("prometheus/prometheus.yml")));
        Map<String, Object> global = (Map<String, Object>) config.get("global");
        global.put("scrape_interval", "1s");
        global.put("evaluation_interval", "1s");
        config.put("rule_files", List.of(DEPLOY.resolve("prometheus/rules").toString() + "/*.yml"));
        Set<String> scraped = new java.util.TreeSet<>();
        for (Map<String, Object> job : (List<Map<String, Object>>) config.get("scrape_configs")) {
            for (Map<String, Object> target : (List<Map<String, Object>>) job.get("static_configs")) {
                String service = (String) ((Map<String, Object>) target.get("labels")).get("service");
                assertThat(ports).as("the compose Prometheus scrapes a known service").containsKey(service);
                target.put("targets", List.of("127.0.0.1:" + ports.get(service)));
                scraped.add(service);
            }
        }
        assertThat(scraped).as("the compose Prometheus scrapes every service")
                .containsExactlyInAnyOrderElementsOf(DevCluster.SERVICES);
        return config;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rules() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(DEPLOY.resolve("prometheus/rules"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yml")).sorted().toList()) {
                Map<String, Object> doc = new Yaml().load(Files.readString(f));
                for (Map<String, Object> group : (List<Map<String, Object>>) doc.get("groups")) {
                    out.addAll((List<Map<String, Object>>) group.get("rules"));
                }
            }
        }
        assertThat(out).as("rules in deploy/prometheus/rules").isNotEmpty();
        return out;
    }

    private static List<Path> dashboards() throws IOException {
        try (Stream<Path> files = Files.list(DEPLOY.resolve("grafana/dashboards"))) {
            List<Path> out = files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
            assertThat(out).as("dashboards in deploy/grafana/dashboards").isNotEmpty();
            return out;
        }
    }

    private JsonNode evaluate(String expr) {
        try {
            return Api.JSON.readTree(get(prometheusUrl + "/api/v1/query?query="
                    + URLEncoder.encode(expr, StandardCharsets.UTF_8)).body());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private JsonNode query(String expr) {
        JsonNode r = evaluate(expr);
        assertThat(r.path("status").asText()).as(expr + ": " + r.path("error").asText()).isEqualTo("success");
        return r.path("data").path("result");
    }

    /** A service's own gantry_ lines on /prometheus, to say what is missing when a query finds nothing. */
    private String gantryLines(String service) {
        return get(cluster.url(service) + "/prometheus").body().lines().filter(l -> l.startsWith("gantry_"))
                .reduce("", (a, b) -> a + "\n" + b);
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

    private static String job(String name, int replicas, int gpus, int runSeconds) {
        return """
                {"name":"%s","tasks":[{"name":"worker","replicas":%d,"command":["python","train.py"],"gpus":%d,"runSeconds":%d}]}
                """.formatted(name, replicas, gpus, runSeconds);
    }

    private static String submit(Api api, String spec) {
        Api.Response r = api.post("/v1/jobs", spec);
        assertThat(r.status()).as(r.body().toString()).isEqualTo(202);
        return r.text("jobId");
    }

    private static void awaitState(Api api, String job, String state) {
        await().atMost(LONG).pollInterval(Duration.ofMillis(250))
                .until(() -> api.get("/v1/jobs/" + job).body(), j -> state.equals(j.path("state").asText()));
    }

    /** Debian's prometheus, installed with apt-get if missing; without it the test is skipped, saying why. */
    static Path prometheusBinary() throws Exception {
        Path binary = Path.of("/usr/bin/prometheus");
        if (!Files.isExecutable(binary)) {
            String why = run(Duration.ofMinutes(5), "apt-get", "install", "-y", "-q", "prometheus");
            if (!Files.isExecutable(binary)) {
                why = run(Duration.ofMinutes(5), "sh", "-c", "apt-get update -q && apt-get install -y -q prometheus");
            }
            Assumptions.assumeTrue(Files.isExecutable(binary),
                    "prometheus is not installed and `apt-get install prometheus` did not install it: " + why);
        }
        return binary;
    }

    static void promtool(String... args) throws Exception {
        Path promtool = Path.of("/usr/bin/promtool");
        if (!Files.isExecutable(promtool)) {
            return; // Debian ships it with prometheus; the query checks above still run
        }
        List<String> command = new ArrayList<>(List.of(promtool.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("promtool " + String.join(" ", args) + ":\n" + out).isZero();
    }

    private static String run(Duration timeout, String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return String.join(" ", command) + " timed out";
            }
            String text = new String(out, StandardCharsets.UTF_8).strip();
            return text.length() > 400 ? text.substring(text.length() - 400) : text;
        } catch (IOException e) {
            return e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e.toString();
        }
    }
}
