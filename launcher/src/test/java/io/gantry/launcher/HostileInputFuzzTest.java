package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.yaml.snakeyaml.Yaml;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Generated malformed and hostile requests against every {@code /v1} endpoint of the five services of one running
 * stack (processes, loopback): each must be refused with a 4xx {@code application/problem+json} and publish nothing.
 * Then a poison record on every event topic: each reaches a dead letter with its reason, and the stack goes on.
 *
 * <p>Seeded ({@code -Dgantry.fuzz.seed=N} repeats a run; the seed is printed). No generated request is one the API
 * may accept: bodies are valid ones with one field of the wrong type, out of range or holding control characters;
 * ids name nothing; tokens are missing, unknown, another tenant's or a run's where it has no business.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostileInputFuzzTest {
    static final String ALPHA = "alpha-fuzz-token-1";
    static final String BETA = "beta-fuzz-token-2";
    static final String ADMIN = "admin-fuzz-token-3";
    /** Shaped like a run token (the auth filter lets it through to the two run endpoints), but no run's. */
    static final String FORGED_RUN = "gtr_" + "ab".repeat(32);
    /** Published by the simulated nodes on a timer, whatever the requests: the only topic whose count may move. */
    static final Set<String> TIMER_TOPICS = Set.of(Topics.PLACEMENT_HEARTBEAT_EVENTS.name());

    enum Who { TENANT, ADMIN }

    enum Body { NONE, JSON }

    /** An endpoint as the controllers declare it; {@code {p}} is its path variable. */
    record Endpoint(String service, String method, String path, Who who, Body body, List<String> query) {
        String label() {
            return service + " " + method + " " + path;
        }
    }

    record Case(Endpoint endpoint, String what, String method, String target, Map<String, String> headers,
                byte[] body) {
    }

    record Outcome(Case c, RawHttp.Reply reply) {
    }

    DevCluster cluster;
    TopicClient topics;
    KafkaConsumer<String, byte[]> offsets;
    long seed;
    String alphaJob;
    String node;
    final Map<String, JsonNode> bases = new LinkedHashMap<>();
    final Map<String, Integer> sentByEndpoint = new TreeMap<>();

    @BeforeAll
    void startTheStackAndAFinishedJob() throws Exception {
        seed = Long.getLong("gantry.fuzz.seed", 20261125L);
        System.out.println("fuzz seed " + seed + " (repeat with -Dgantry.fuzz.seed=" + seed + ")");
        Path dataDir = Files.createTempDirectory("gantry-fuzz-");
        Files.writeString(dataDir.resolve("tokens.yml"), """
                tokens:
                  - tenant: alpha
                    token: %s
                  - tenant: beta
                    token: %s
                  - tenant: ops
                    role: admin
                    token: %s
                """.formatted(ALPHA, BETA, ADMIN));
        Path repo = Path.of("..").toAbsolutePath().normalize();
        cluster = new DevCluster(new DevCluster.Config(dataDir, repo, DevCluster.freePort(), DevCluster.freePort(),
                DevCluster.freePortRange(5),
                // no submission rate limit: every hostile body must reach validation, not a 429 for coming too fast
                Map.of("placement", Map.of("gantry.placement.simulated.speedup", "10"),
                        "admission", Map.of("gantry.admission.submit-rate", "0")), "200m")).start();
        topics = new TopicClient(cluster.bootstrapServers());
        offsets = new KafkaConsumer<>(Map.<String, Object>of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers(), ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false),
                new org.apache.kafka.common.serialization.StringDeserializer(), new ByteArrayDeserializer());

        Api alpha = new Api(cluster.url("admission"), ALPHA);
        Api placement = new Api(cluster.url("placement"), ADMIN);
        JsonNode nodes = await().atMost(Duration.ofSeconds(90)).until(() -> placement.get("/v1/nodes").body(),
                n -> n.size() > 0);
        node = nodes.get(0).path("nodeId").asText();
        // one real, finished job of alpha's: other tenants and tokens aim at it; nothing may touch it any more
        Api.Response submitted = alpha.post("/v1/jobs",
                "{\"name\":\"target\",\"tasks\":[{\"name\":\"w\",\"command\":[\"x\"],\"gpus\":1,\"runSeconds\":1}]}");
        assertThat(submitted.status()).as(submitted.body().toString()).isEqualTo(202);
        alphaJob = submitted.text("jobId");
        await().atMost(Duration.ofSeconds(90)).until(() -> "SUCCEEDED".equals(alpha.get("/v1/jobs/" + alphaJob).text("state")));
        Api usage = new Api(cluster.url("billing"), ALPHA);
        await().atMost(Duration.ofSeconds(90)).until(() -> usage.get("/v1/usage/entries?jobId=" + alphaJob).body().toString()
                .contains(alphaJob));

        bases.put("job", Api.JSON.readTree(
                "{\"name\":\"fuzz\",\"tasks\":[{\"name\":\"w\",\"replicas\":1,\"command\":[\"x\"],\"gpus\":1,\"runSeconds\":1}]}"));
        bases.put("tenant", Api.JSON.readTree("{\"name\":\"fuzzed\",\"displayName\":\"Fuzzed\"}"));
        bases.put("token", Api.JSON.readTree("{\"label\":\"ci\",\"expiresIn\":\"P30D\"}"));
        bases.put("checkpoint", Api.JSON.readTree(
                "{\"step\":1200,\"path\":\"/ckpt/step-1200.pt\",\"sizeBytes\":5,\"saveSeconds\":1.5}"));
        bases.put("budgets", Api.JSON.readTree(
                "{\"budgets\":[{\"tenant\":\"alpha\",\"limit\":\"100.00\",\"action\":\"WARN\",\"warnAt\":[50,80]}]}"));
        bases.put("fault", Api.JSON.readTree("{\"gpu\":0,\"kind\":\"XID\",\"xid\":79}"));
        bases.put("preflight", Api.JSON.readTree("{\"fail\":true}"));
        bases.put("gpus", Api.JSON.readTree("{\"gpus\":[0]}"));
        JsonNode book = new Api(cluster.url("billing"), ADMIN).get("/v1/price-book").body().path("book");
        bases.put("price-book", book.isObject() && book.size() > 0 ? book
                : Api.JSON.readTree("{\"currency\":\"EUR\",\"gpu\":[{\"model\":\"H100\",\"perGpuHour\":\"2.50\"}]}"));
        RawHttp.Reply yaml = RawHttp.send(port("queue"), "GET", "/v1/admin/queue-config",
                Map.of("Authorization", "Bearer " + ADMIN, "Accept", "application/yaml"), null);
        assertThat(yaml.status()).isEqualTo(200);
        Object config = new Yaml().load(yaml.body().contains("...(") ? fullQueueConfig() : yaml.body());
        bases.put("queue-config", Api.JSON.valueToTree(config));
        awaitQuiet();
    }

    @AfterAll
    void stop() {
        if (offsets != null) {
            offsets.close();
        }
        if (topics != null) {
            topics.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Every endpoint of the five controllers' {@code /v1} API. */
    List<Endpoint> endpoints() {
        List<String> none = List.of();
        return List.of(
                new Endpoint("admission", "POST", "/v1/jobs", Who.TENANT, Body.JSON, none),
                new Endpoint("admission", "GET", "/v1/jobs", Who.TENANT, Body.NONE, List.of("state", "limit", "tenant", "cursor")),
                new Endpoint("admission", "GET", "/v1/jobs/{p}", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "DELETE", "/v1/jobs/{p}", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/jobs/{p}/suspend", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/jobs/{p}/resume", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/jobs/{p}/checkpoints", Who.TENANT, Body.JSON, none),
                new Endpoint("admission", "GET", "/v1/jobs/{p}/checkpoints", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "GET", "/v1/jobs/{p}/preemption", Who.TENANT, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tenants", Who.ADMIN, Body.JSON, none),
                new Endpoint("admission", "GET", "/v1/admin/tenants", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "GET", "/v1/admin/tenants/{p}", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tenants/{p}/disable", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tenants/{p}/enable", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tenants/{p}/tokens", Who.ADMIN, Body.JSON, none),
                new Endpoint("admission", "GET", "/v1/admin/tenants/{p}/tokens", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tokens/{p}/revoke", Who.ADMIN, Body.NONE, none),
                new Endpoint("admission", "POST", "/v1/admin/tokens/{p}/rotate", Who.ADMIN, Body.NONE, List.of("overlap")),
                new Endpoint("queue", "GET", "/v1/queues", Who.TENANT, Body.NONE, none),
                new Endpoint("queue", "GET", "/v1/queues/{p}/pending", Who.TENANT, Body.NONE, none),
                new Endpoint("queue", "GET", "/v1/admin/queue-config", Who.ADMIN, Body.NONE, none),
                new Endpoint("queue", "PUT", "/v1/admin/queue-config", Who.ADMIN, Body.JSON, List.of("force")),
                new Endpoint("placement", "GET", "/v1/jobs/{p}/logs", Who.TENANT, Body.NONE,
                        List.of("attempt", "task", "replica", "offset", "limit")),
                new Endpoint("placement", "GET", "/v1/cluster", Who.TENANT, Body.NONE, none),
                new Endpoint("placement", "GET", "/v1/nodes", Who.TENANT, Body.NONE, none),
                new Endpoint("placement", "POST", "/v1/admin/nodes/{p}/cordon", Who.ADMIN, Body.NONE, none),
                new Endpoint("placement", "POST", "/v1/admin/nodes/{p}/uncordon", Who.ADMIN, Body.NONE, none),
                new Endpoint("placement", "POST", "/v1/admin/nodes/{p}/gpus/uncordon", Who.ADMIN, Body.JSON, none),
                new Endpoint("placement", "POST", "/v1/admin/simulation/nodes/{p}/fail", Who.ADMIN, Body.NONE, none),
                new Endpoint("placement", "POST", "/v1/admin/simulation/nodes/{p}/revive", Who.ADMIN, Body.NONE, none),
                new Endpoint("placement", "POST", "/v1/admin/simulation/nodes/{p}/faults", Who.ADMIN, Body.JSON, none),
                new Endpoint("placement", "POST", "/v1/admin/simulation/nodes/{p}/preflight", Who.ADMIN, Body.JSON, none),
                new Endpoint("recovery", "GET", "/v1/nodes/health", Who.TENANT, Body.NONE, none),
                new Endpoint("recovery", "GET", "/v1/nodes/detector", Who.TENANT, Body.NONE, none),
                new Endpoint("recovery", "GET", "/v1/nodes/devices", Who.TENANT, Body.NONE, none),
                new Endpoint("billing", "GET", "/v1/usage", Who.TENANT, Body.NONE, List.of("from", "to", "tenant")),
                new Endpoint("billing", "GET", "/v1/usage/entries", Who.TENANT, Body.NONE, List.of("jobId")),
                new Endpoint("billing", "GET", "/v1/usage/month-to-date", Who.TENANT, Body.NONE, List.of("month", "tenant")),
                new Endpoint("billing", "GET", "/v1/budgets", Who.TENANT, Body.NONE, none),
                new Endpoint("billing", "PUT", "/v1/budgets", Who.ADMIN, Body.JSON, none),
                new Endpoint("billing", "GET", "/v1/invoices", Who.TENANT, Body.NONE, List.of("month", "tenant")),
                new Endpoint("billing", "GET", "/v1/invoices/{p}", Who.TENANT, Body.NONE, List.of("format")),
                new Endpoint("billing", "POST", "/v1/invoices/issue", Who.ADMIN, Body.NONE, List.of("month")),
                new Endpoint("billing", "GET", "/v1/costs", Who.TENANT, Body.NONE, List.of("from", "to", "tenant")),
                new Endpoint("billing", "GET", "/v1/finops", Who.TENANT, Body.NONE, List.of("from", "to", "tenant")),
                new Endpoint("billing", "GET", "/v1/finops/utilisation", Who.TENANT, Body.NONE, List.of("from", "to", "tenant")),
                new Endpoint("billing", "GET", "/v1/finops/idle", Who.TENANT, Body.NONE, List.of("tenant", "minIdle")),
                new Endpoint("billing", "GET", "/v1/reconciliation", Who.ADMIN, Body.NONE, List.of("month")),
                new Endpoint("billing", "GET", "/v1/price-book", Who.TENANT, Body.NONE, none),
                new Endpoint("billing", "GET", "/v1/price-book/versions", Who.ADMIN, Body.NONE, none),
                new Endpoint("billing", "PUT", "/v1/price-book", Who.ADMIN, Body.JSON, none));
    }

    @Test
    @Order(1)
    void everyHostileRequestToEveryEndpointIsRefusedWithAProblemAndPublishesNothing() {
        long started = System.nanoTime();
        Map<String, Long> first = endOffsets();
        List<String> failures = new ArrayList<>();
        int sent = 0;
        for (Endpoint e : endpoints()) {
            Random random = new Random(seed ^ e.label().hashCode());
            List<Case> cases = cases(e, random);
            Map<String, Long> before = endOffsets();
            for (Case c : cases) {
                RawHttp.Reply r = RawHttp.send(port(e.service()), c.method(), c.target(), c.headers(), c.body());
                sent++;
                sentByEndpoint.merge(e.label(), 1, Integer::sum);
                boolean problem = r.contentType().startsWith("application/problem+json");
                if (r.status() < 400 || r.status() > 499 || !problem) {
                    failures.add(e.label() + " [" + c.what() + "] " + c.method() + " " + RawHttp.abbreviate(c.target())
                            + " -> " + r.status() + " " + r.contentType() + " " + r.body());
                }
            }
            Map<String, Long> after = endOffsets();
            if (!after.equals(before)) {
                failures.add(e.label() + ": published " + diff(before, after));
            }
        }
        // a late event (one a loop published after a request was answered) shows here
        await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> true);
        Map<String, Long> last = endOffsets();
        if (!last.equals(first)) {
            failures.add("after all requests: published " + diff(first, last));
        }
        System.out.printf("fuzz: %d requests to %d endpoints in %d ms (seed %d), %d failures%n", sent,
                sentByEndpoint.size(), (System.nanoTime() - started) / 1_000_000, seed, failures.size());
        sentByEndpoint.forEach((k, v) -> System.out.println("fuzz:   " + v + "  " + k));
        failures.stream().limit(200).forEach(f -> System.out.println("FUZZ FAILURE " + f));
        assertThat(sent).isGreaterThanOrEqualTo(1000);
        assertThat(sentByEndpoint).hasSize(endpoints().size());
        assertThat(failures).isEmpty();
    }

    @Test
    @Order(2)
    void aPoisonRecordOnEveryEventTopicReachesADeadLetterWithItsReasonAndTheStackGoesOn() {
        byte[] poison = "not an Avro event \u0000\u00ff".getBytes(StandardCharsets.ISO_8859_1);
        for (Topic<?> t : Topics.eventTopics()) {
            topics.sendRaw(t, "poison-" + t.name(), poison);
        }
        Map<String, Set<String>> deadLettered = new TreeMap<>();
        Map<String, Set<String>>[] last = new Map[]{Map.of()};
        // every loop has seen its poison when the dead letters stop growing
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(3)).until(() -> {
            Map<String, Set<String>> now = poisoned();
            boolean same = !now.isEmpty() && now.equals(last[0]);
            last[0] = now;
            return same;
        });
        deadLettered.putAll(last[0]);
        Set<String> unread = new TreeSet<>();
        Topics.eventTopics().forEach(t -> unread.add(t.name()));
        deadLettered.values().forEach(unread::removeAll);
        System.out.println("poison: dead-lettered by service " + deadLettered + "; no loop of these reads: " + unread);
        assertThat(deadLettered.keySet()).as("every service dead-letters its poison")
                .containsExactlyInAnyOrder("admission", "queue", "placement", "recovery", "billing");

        // and every loop goes on: a job of beta's is admitted, queued, placed, run, and billed
        Api beta = new Api(cluster.url("admission"), BETA);
        Api.Response submitted = beta.post("/v1/jobs",
                "{\"name\":\"after-poison\",\"tasks\":[{\"name\":\"w\",\"command\":[\"x\"],\"gpus\":1,\"runSeconds\":1}]}");
        assertThat(submitted.status()).isEqualTo(202);
        String job = submitted.text("jobId");
        await().atMost(Duration.ofSeconds(90)).until(() -> "SUCCEEDED".equals(beta.get("/v1/jobs/" + job).text("state")));
        Api usage = new Api(cluster.url("billing"), BETA);
        await().atMost(Duration.ofSeconds(90)).until(() -> usage.get("/v1/usage/entries?jobId=" + job).body().toString()
                .contains(job));
        Api.Response health = new Api(cluster.url("recovery"), ADMIN).get("/v1/nodes/health");
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body().toString()).doesNotContain("FAILED");
    }

    /** Per service, the source topics of the poison records in its dead letter, each with a reason. */
    Map<String, Set<String>> poisoned() {
        Map<String, Set<String>> out = new TreeMap<>();
        for (io.gantry.schemas.Service s : io.gantry.schemas.Service.values()) {
            for (ConsumerRecord<String, byte[]> r : topics.readAllRaw(Topics.deadLetter(s))) {
                Header source = r.headers().lastHeader("gantry.source.topic");
                Header error = r.headers().lastHeader("gantry.error");
                if (r.key() != null && r.key().startsWith("poison-") && source != null) {
                    assertThat(error).as("the reason of %s in %s", r.key(), s.id()).isNotNull();
                    assertThat(new String(error.value(), StandardCharsets.UTF_8)).isNotBlank();
                    out.computeIfAbsent(s.id(), k -> new TreeSet<>()).add(new String(source.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ generation

    List<Case> cases(Endpoint e, Random random) {
        List<Case> out = new ArrayList<>();
        String token = e.who() == Who.ADMIN ? ADMIN : ALPHA;
        String p = e.path().contains("{p}") ? validParameter(e) : null;
        String path = p == null ? e.path() : e.path().replace("{p}", p);

        // who is asking
        for (String[] auth : new String[][]{{"no Authorization", null}, {"an empty bearer", "Bearer "},
                {"Basic credentials", "Basic YWxwaGE6YWxwaGE="}, {"an unknown token", "Bearer gty_" + "0".repeat(32)},
                {"a forged run token", "Bearer " + FORGED_RUN}, {"a token with a NUL", "Bearer " + ALPHA + "%00"},
                {"a token with trailing junk", "Bearer " + ALPHA + "x"}, {"an over-long token", "Bearer " + "t".repeat(6000)}}) {
            if (auth[1] != null && auth[1].contains(FORGED_RUN) && runEndpoint(e)) {
                continue; // covered below with the run-token cases
            }
            out.add(request(e, "auth: " + auth[0], e.method(), path, auth[1], e.body() == Body.JSON ? "application/json" : null,
                    e.body() == Body.JSON ? body(e) : null));
        }
        if (e.who() == Who.ADMIN) {
            out.add(request(e, "a tenant's token on an admin endpoint", e.method(), path, "Bearer " + ALPHA,
                    e.body() == Body.JSON ? "application/json" : null, e.body() == Body.JSON ? body(e) : null));
        }
        if (p != null && p.equals(alphaJob)) {
            if (!e.path().endsWith("/checkpoints") || e.method().equals("GET")) {
                out.add(request(e, "another tenant's job", e.method(), path, "Bearer " + BETA,
                        e.body() == Body.JSON ? "application/json" : null, e.body() == Body.JSON ? body(e) : null));
            }
            if (runEndpoint(e)) {
                out.add(request(e, "a run token of no run of this job", e.method(), path, "Bearer " + FORGED_RUN,
                        e.body() == Body.JSON ? "application/json" : null, e.body() == Body.JSON ? body(e) : null));
                if (e.method().equals("POST")) {
                    out.add(request(e, "a tenant's token where a run token belongs", e.method(), path, "Bearer " + ALPHA,
                            "application/json", body(e)));
                }
            }
        }
        // another method on the path
        for (String m : List.of("PATCH", "TRACE", "PUT", "DELETE")) {
            if (!m.equals(e.method()) && !(m.equals("PUT") && e.path().endsWith("queue-config"))
                    && !(m.equals("DELETE") && e.path().equals("/v1/jobs/{p}"))) {
                out.add(request(e, "method " + m, m, path, "Bearer " + token, null, null));
            }
        }
        // path tricks in the path variable
        if (p != null) {
            for (String id : hostileIds(random)) {
                out.add(request(e, "path variable " + RawHttp.abbreviate(id), e.method(), e.path().replace("{p}", id),
                        "Bearer " + token, e.body() == Body.JSON ? "application/json" : null,
                        e.body() == Body.JSON ? body(e) : null));
            }
        } else {
            for (String tail : List.of("/%00", "/%2e%2e%2fadmin", "/%ff", "/" + "x".repeat(3000), "/\u00e9t\u00e9")) {
                out.add(request(e, "an extra segment", e.method(), e.path() + tail, "Bearer " + token,
                        e.body() == Body.JSON ? "application/json" : null, e.body() == Body.JSON ? body(e) : null));
            }
        }
        // query parameters: a value that means nothing, one at a time
        for (String q : e.query()) {
            for (String v : hostileQueryValues(q, random)) {
                String target = path + "?" + q + "=" + v;
                out.add(request(e, "query " + q + "=" + RawHttp.abbreviate(v), e.method(), target, "Bearer " + token,
                        e.body() == Body.JSON ? "application/json" : null, e.body() == Body.JSON ? body(e) : null));
            }
        }
        // bodies
        if (e.body() == Body.JSON) {
            bodyCases(e, path, "Bearer " + token, random, out);
        }
        return out;
    }

    static boolean runEndpoint(Endpoint e) {
        return e.path().endsWith("/checkpoints") && e.method().equals("POST") || e.path().endsWith("/preemption");
    }

    /** The real value of a path variable, so only the hostile part of a request is wrong. */
    String validParameter(Endpoint e) {
        if (e.path().startsWith("/v1/jobs/")) {
            return alphaJob;
        }
        if (e.path().contains("/nodes/")) {
            return node;
        }
        if (e.path().startsWith("/v1/admin/tenants/")) {
            return "alpha";
        }
        if (e.path().startsWith("/v1/queues/")) {
            return "alpha";
        }
        return "nothing-" + Math.abs(e.label().hashCode());
    }

    List<String> hostileIds(Random random) {
        List<String> ids = new ArrayList<>(List.of("%00", "a%00b", "%2F", "a%2Fb", "%2e%2e", "..%2f..%2fetc%2fpasswd",
                "%252e%252e", "%C0%AF", "%ff%fe", "%ED%A0%80", "%E2%80%AE", "%F0%9F%92%A5", "%20", "%0d%0aX-Injected:%201",
                "*", "%25", "%3B", "x;y=z", "%7B%7D", "'%20OR%201=1--"));
        ids.add("z".repeat(300 + random.nextInt(50)));
        ids.add("%41".repeat(2000));
        ids.add(randomPercentEncoded(random, 8));
        ids.add(randomPercentEncoded(random, 40));
        return ids;
    }

    static String randomPercentEncoded(Random random, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append('%').append(String.format("%02X", random.nextInt(256)));
        }
        return b.toString();
    }

    List<String> hostileQueryValues(String name, Random random) {
        List<String> v = new ArrayList<>(List.of("%00", "%ff", "%ED%A0%80", "-1", "99999999999999999999999", "1e9999",
                "NaN", "%27%20OR%201%3D1", "x".repeat(5000), "2026-13-45", "2026-02-30T25:61:00Z", "%E2%80%AE" + "x",
                randomPercentEncoded(random, 12)));
        if (name.equals("jobId")) {
            // a filter: a job id that names no job finds nothing (200, empty); only bytes no id can hold are wrong
            v.removeIf(x -> !x.contains("%"));
            return v;
        }
        switch (name) {
            case "cursor" -> v.addAll(List.of("bm90LWEtY3Vyc29y", "%2F%2F%2F%2F", "eyJ0IjoiMSJ9", "====", "AAAAAAAAAAAA"));
            case "limit", "offset", "attempt", "replica" -> v.addAll(List.of("0", "2147483648", "1.5", "0x10", "%2B1%2B1"));
            case "tenant" -> v.addAll(List.of("beta", "%00alpha", "ALPHA%00"));
            case "overlap" -> v.addAll(List.of("PT-1H", "P9999999999D", "1h"));
            case "minIdle" -> v.addAll(List.of("PT-1H", "1h"));
            case "force" -> v.addAll(List.of("maybe", "TRUE%00"));
            case "format" -> v.addAll(List.of("xml", "csv%00"));
            case "from", "to" -> v.addAll(List.of("2026-02-30", "2026-11-1", "1e10", "%2B999999999-01-01T00:00:00Z",
                    "%2B999999999-12-31", "-999999999-01-01"));
            case "month" -> v.addAll(List.of("2026-13", "0000-00", "%2B99999-01", "2026-1"));
            case "state" -> v.addAll(List.of("RUNNING,QUEUED", "RUNNINGx"));
            default -> {
            }
        }
        return v;
    }

    void bodyCases(Endpoint e, String path, String auth, Random random, List<Case> out) {
        JsonNode base = base(e);
        boolean yaml = e.path().endsWith("queue-config") || e.path().endsWith("price-book");
        String json = base.toString();
        // content types and charsets
        for (String ct : new String[]{null, "", "text/plain", "application/xml", "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/json; charset=latin1",
                "application/json; charset=nope", "application/octet-stream", "*/*", "application/jsonx"}) {
            if (yaml && "text/plain".equals(ct) && e.path().endsWith("queue-config")) {
                continue; // documented: the queue configuration is YAML, and text/plain is one of its types
            }
            out.add(request(e, "content type " + ct, e.method(), path, auth, ct, utf8(json)));
        }
        String ct = "application/json";
        // the body as a whole
        byte[] nested = nested(20_000 + random.nextInt(1000));
        Map<String, byte[]> whole = new LinkedHashMap<>();
        // documented as valid: no body uncordons every GPU of the node; no body issues a token with the defaults (and
        // alpha, a tenant of the tokens file, may be issued one)
        if (!e.path().endsWith("/gpus/uncordon") && !e.path().equals("/v1/admin/tenants/{p}/tokens")) {
            whole.put("an empty body", new byte[0]);
        }
        whole.put("null", utf8("null"));
        whole.put("an array", utf8("[" + json + "]"));
        whole.put("a string", utf8("\"" + json.replace("\"", "'") + "\""));
        whole.put("a number", utf8("42"));
        whole.put("truncated JSON", utf8(json.substring(0, json.length() / 2)));
        whole.put("trailing garbage", utf8(json + " }"));
        whole.put("two documents", utf8(json + json));
        whole.put("a raw NUL", concat(utf8(json.substring(0, json.length() - 1)), new byte[]{0}, utf8("}")));
        whole.put("invalid UTF-8", concat(utf8(json.substring(0, 2)), new byte[]{(byte) 0xC3, (byte) 0x28}, utf8(json.substring(2))));
        whole.put("UTF-16", json.getBytes(StandardCharsets.UTF_16));
        whole.put("deeply nested arrays", nested);
        whole.put("deeply nested objects in a field", utf8(withField(base, "{\"a\":".repeat(5000) + "1" + "}".repeat(5000))));
        whole.put("a 2 MB unknown field", utf8(withField(base, "\"" + "A".repeat(2 << 20) + "\"")));
        whole.put("a 12 MB body", utf8(withField(base, "\"" + "B".repeat(12 << 20) + "\"")));
        whole.put("100000 keys", utf8(manyKeys(100_000)));
        whole.put("a key given twice", utf8(duplicateFirstKey(json)));
        whole.put("comments", utf8("/* hi */" + json));
        if (!yaml) {
            whole.put("single quotes", utf8(json.replace('"', '\''))); // YAML, a superset of JSON, allows them
        }
        whole.put("NaN", utf8(withField(base, "NaN")));
        if (yaml) {
            whole.put("a YAML alias bomb", utf8("a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n"
                    + "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                    + "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                    + "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"));
            whole.put("a YAML tag", utf8("!!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL [\"http://127.0.0.1:1/\"]]]]"));
            whole.put("YAML tabs", utf8("\tqueues:\n\t\t- x"));
        }
        whole.forEach((what, bytes) -> out.add(request(e, "body: " + what, e.method(), path, auth,
                yaml && what.startsWith("a YAML") ? "application/yaml" : ct, bytes)));
        // one field at a time: the wrong type, out of range, hostile characters
        List<String> fields = new ArrayList<>();
        leaves(base, "", fields);
        for (String field : fields) {
            JsonNode original = at(base, field);
            // a money amount may be a whole JSON number; a queue quota may be fractional or large (GPU thousandths)
            boolean numbersOk = field.endsWith("limit") || e.path().endsWith("queue-config");
            for (JsonNode wrong : wrongValues(original, random, !numbersOk)) {
                JsonNode mutated = replaced(base, field, wrong);
                out.add(request(e, "field " + field + " = " + RawHttp.abbreviate(wrong.toString()), e.method(), path, auth,
                        ct, utf8(mutated.toString())));
            }
            if (original.isTextual()) {
                String raw = replaced(base, field, JsonNodeFactory.instance.textNode("\u0001MARK\u0001")).toString();
                int at = raw.indexOf("\\u0001MARK\\u0001");
                String before = raw.substring(0, at);
                String after = raw.substring(at + 16);
                // written as JSON escapes: a Java string holding a lone surrogate would reach the wire as '?'.
                // Command arguments may hold any control character but NUL (a shell script has newlines).
                boolean argument = field.contains("command");
                for (String escaped : argument ? new String[]{"a\\u0000b", "\\ud800", "x\\udc00y", "\\udfff\\ud800"}
                        : new String[]{"a\\u0000b", "\\ud800", "x\\udc00y", "\\u001b[31m", "\\u0007", "a\\r\\nb"}) {
                    out.add(request(e, "field " + field + " with " + escaped, e.method(), path, auth, ct,
                            utf8(before + original.asText().replace("\"", "\\\"") + escaped + after)));
                }
                out.add(request(e, "field " + field + " with an unescaped NUL", e.method(), path, auth, ct,
                        concat(utf8(before), new byte[]{'a', 0, 'b'}, utf8(after))));
                out.add(request(e, "field " + field + " with a raw lone surrogate", e.method(), path, auth, ct,
                        concat(utf8(before), new byte[]{(byte) 0xED, (byte) 0xA0, (byte) 0x80}, utf8(after))));
                out.add(request(e, "field " + field + " of 100000 characters", e.method(), path, auth, ct,
                        utf8(replaced(base, field, JsonNodeFactory.instance.textNode("q".repeat(100_000))).toString())));
            }
        }
        // an unknown field
        out.add(request(e, "an unknown field", e.method(), path, auth, ct, utf8(withField(base, "\"x\""))));
    }

    /** Values of another JSON type than the original, or numbers out of any range a field here allows. */
    static List<JsonNode> wrongValues(JsonNode original, Random random, boolean ranges) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        List<JsonNode> v = new ArrayList<>();
        if (original.isTextual()) {
            v.addAll(List.of(f.booleanNode(true), f.objectNode(), f.arrayNode().add(original)));
            if (ranges) {
                v.add(f.numberNode(random.nextInt(1000)));
            }
        } else if (original.isNumber()) {
            v.addAll(List.of(f.textNode(original.asText() + "x"), f.booleanNode(false), f.arrayNode().add(original), f.objectNode()));
            if (ranges) {
                v.addAll(List.of(f.numberNode(-1 - random.nextInt(1000)), f.numberNode(new java.math.BigInteger("9223372036854775808")),
                        f.numberNode(new java.math.BigDecimal("1e400")), f.numberNode(2147483648L)));
            }
            if (ranges && original.isIntegralNumber()) {
                v.add(f.numberNode(original.asLong() + 0.5));
            }
        } else if (original.isBoolean()) {
            v.addAll(List.of(f.textNode("yes"), f.numberNode(1), f.arrayNode(), f.objectNode()));
        }
        return v;
    }

    JsonNode base(Endpoint e) {
        String p = e.path();
        if (p.equals("/v1/jobs")) {
            return bases.get("job");
        }
        if (p.endsWith("/checkpoints")) {
            return bases.get("checkpoint");
        }
        if (p.equals("/v1/admin/tenants")) {
            return bases.get("tenant");
        }
        if (p.endsWith("/tokens")) {
            return bases.get("token");
        }
        if (p.endsWith("/budgets")) {
            return bases.get("budgets");
        }
        if (p.endsWith("/faults")) {
            return bases.get("fault");
        }
        if (p.endsWith("/preflight")) {
            return bases.get("preflight");
        }
        if (p.endsWith("/gpus/uncordon")) {
            return bases.get("gpus");
        }
        if (p.endsWith("/price-book")) {
            return bases.get("price-book");
        }
        if (p.endsWith("/queue-config")) {
            return bases.get("queue-config");
        }
        throw new IllegalArgumentException(p);
    }

    byte[] body(Endpoint e) {
        return utf8(base(e).toString());
    }

    Case request(Endpoint e, String what, String method, String target, String authorization, String contentType,
                 byte[] body) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (authorization != null) {
            // %00 in a header stands for a NUL byte, which RawHttp writes as it is
            headers.put("Authorization", authorization.replace("%00", "\u0000"));
        }
        if (contentType != null) {
            headers.put("Content-Type", contentType);
        }
        return new Case(e, what, method, target, headers, body);
    }

    // ------------------------------------------------------------------------------------------------ JSON helpers

    static void leaves(JsonNode n, String path, List<String> out) {
        if (n.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = n.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> f = it.next();
                leaves(f.getValue(), path.isEmpty() ? f.getKey() : path + "." + f.getKey(), out);
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                leaves(n.get(i), path + "[" + i + "]", out);
            }
        } else if (!n.isNull()) {
            out.add(path);
        }
    }

    static JsonNode at(JsonNode root, String path) {
        JsonNode n = root;
        for (String part : path.split("\\.")) {
            String name = part.contains("[") ? part.substring(0, part.indexOf('[')) : part;
            if (!name.isEmpty()) {
                n = n.get(name);
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[(\\d+)]").matcher(part);
            while (m.find()) {
                n = n.get(Integer.parseInt(m.group(1)));
            }
        }
        return n;
    }

    static JsonNode replaced(JsonNode root, String path, JsonNode value) {
        JsonNode copy = root.deepCopy();
        int dot = path.lastIndexOf('.');
        int bracket = path.lastIndexOf('[');
        if (bracket > dot && path.endsWith("]")) {
            ArrayNode parent = (ArrayNode) at(copy, path.substring(0, bracket));
            parent.set(Integer.parseInt(path.substring(bracket + 1, path.length() - 1)), value);
        } else {
            ObjectNode parent = dot < 0 ? (ObjectNode) copy : (ObjectNode) at(copy, path.substring(0, dot));
            parent.set(dot < 0 ? path : path.substring(dot + 1), value);
        }
        return copy;
    }

    static String withField(JsonNode base, String rawValue) {
        String json = base.toString();
        return "{\"fuzzExtra\":" + rawValue + "," + json.substring(1);
    }

    /** Every key of the object twice (the first occurrence wins nowhere: a strict reader refuses it). */
    static String duplicateFirstKey(String json) {
        return "{" + json.substring(1, json.length() - 1) + "," + json.substring(1);
    }

    static String manyKeys(int n) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":").append(i);
        }
        return b.append('}').toString();
    }

    static byte[] nested(int depth) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes("[".repeat(depth).getBytes(StandardCharsets.US_ASCII));
        b.writeBytes("]".repeat(depth).getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    // ------------------------------------------------------------------------------------------------ the stack

    int port(String service) {
        String url = cluster.url(service);
        return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
    }

    String fullQueueConfig() {
        try {
            var http = java.net.http.HttpClient.newHttpClient();
            return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(cluster.url("queue") + "/v1/admin/queue-config"))
                    .header("Authorization", "Bearer " + ADMIN).header("Accept", "application/yaml").build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** End offsets of every event and dead-letter topic, but the timer-driven ones. */
    Map<String, Long> endOffsets() {
        List<TopicPartition> parts = new ArrayList<>();
        for (Topic<?> t : Topics.all()) {
            if (TIMER_TOPICS.contains(t.name())) {
                continue;
            }
            List<PartitionInfo> infos = offsets.partitionsFor(t.name(), Duration.ofSeconds(10));
            if (infos != null) {
                infos.forEach(i -> parts.add(new TopicPartition(i.topic(), i.partition())));
            }
        }
        Map<String, Long> out = new TreeMap<>();
        offsets.endOffsets(parts).forEach((tp, o) -> out.merge(tp.topic(), o, Long::sum));
        return out;
    }

    static String diff(Map<String, Long> before, Map<String, Long> after) {
        Map<String, String> d = new TreeMap<>();
        after.forEach((t, o) -> {
            long b = before.getOrDefault(t, 0L);
            if (o != b) {
                d.put(t, "+" + (o - b));
            }
        });
        return d.toString();
    }

    /** Waits until no topic moves for a few seconds: the target job's last events are written. */
    void awaitQuiet() {
        Map<String, Long>[] last = new Map[]{endOffsets()};
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(3)).until(() -> {
            Map<String, Long> now = endOffsets();
            boolean same = now.equals(last[0]);
            last[0] = now;
            return same;
        });
    }
}
