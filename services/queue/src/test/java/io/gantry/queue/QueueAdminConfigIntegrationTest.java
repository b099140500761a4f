package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobWaiting;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueEntry;
import io.gantry.events.WaitReason;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The admin configuration API with a configuration file, over plain HTTP (so a request can go without a
 * Content-Type): what GET shows is a valid PUT body, the published catalog, a configuration that would strand
 * jobs refused unless forced, strict input, and empty lists shown as such.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueAdminConfigIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final String id = "qc-" + UUID.randomUUID().toString().substring(0, 8);
    private final String solo = id + "-solo";
    private final String other = id + "-other";
    private final String leaver = id + "-leaver";
    private final String stranger = id + "-stranger";
    private final String admin = id + "-admin";
    private final Wire wire = new Wire();
    private final KafkaProbe probe;
    private final HttpClient http = HttpClient.newHttpClient();
    private EmbeddedServer server;
    private JsonMapper json;
    private Path configFile;

    QueueAdminConfigIntegrationTest() {
        EmbeddedKafka.shared().createTopics(Topics.allNames(), 1);
        probe = new KafkaProbe();
    }

    private String config(boolean withLeaver) {
        return "flavours: [H100]\n"
                + "priorityClasses: {default: normal, classes: {high: 100, normal: 0}}\n"
                + "queues:\n"
                + "  - {name: " + solo + ", tenant: " + solo + ", quotas: {H100: {nominal: 4}}}\n"
                + "  - {name: " + other + ", tenant: " + other + ", quotas: {H100: {nominal: 4}}}\n"
                + (withLeaver ? "  - {name: " + leaver + ", tenant: " + leaver + ", quotas: {H100: {nominal: 4}}}\n"
                : "");
    }

    @BeforeAll
    void start() throws IOException {
        configFile = Files.createTempFile("queues", ".yml");
        Files.writeString(configFile, config(true), StandardCharsets.UTF_8);
        configFile.toFile().deleteOnExit();
        java.util.Map<String, String> tokenByTenant = new java.util.LinkedHashMap<>();
        for (String tenant : List.of(solo, other, leaver, stranger)) {
            tokenByTenant.put(tenant, tenant + "-token");
        }
        Path tokens = TokensFile.write(tokenByTenant, admin);
        Map<String, Object> p = new HashMap<>();
        p.put("kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers());
        p.put("micronaut.server.port", "-1");
        p.put("gantry.auth.tokens-file", tokens.toString());
        p.put("gantry.queue.config-file", configFile.toString());
        p.put("gantry.queue.config-poll", "1s");
        server = ApplicationContext.run(EmbeddedServer.class, p);
        json = server.getApplicationContext().getBean(JsonMapper.class);
        await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
        wire.close();
        probe.close();
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder at(String path, String token) {
        return HttpRequest.newBuilder(URI.create(server.getURL() + path)).header("Authorization", "Bearer " + token);
    }

    private HttpResponse<String> put(String contentType, byte[] body, String query) throws Exception {
        HttpRequest.Builder r = at("/v1/admin/queue-config" + query, admin)
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            r.header("Content-Type", contentType);
        }
        return send(r);
    }

    private HttpResponse<String> putYaml(String yaml, String query) throws Exception {
        return put("application/yaml", yaml.getBytes(StandardCharsets.UTF_8), query);
    }

    private Map<String, Object> read(String body) throws IOException {
        return json.readValue(body, Argument.mapOf(String.class, Object.class));
    }

    private Map<String, Object> current() throws Exception {
        return asMap(read(send(at("/v1/admin/queue-config", admin).GET()).body()).get("current"));
    }

    @Test
    void whatGetReturnsIsAcceptedUnchangedByPutAndEveryAppliedConfigurationPublishesItsCatalog() throws Exception {
        assertThat(putYaml(config(true), "").statusCode()).isEqualTo(200);
        try (TopicClient topics = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            assertThat(topics.readAll(Topics.QUEUE_CONFIG_EVENTS)).last().satisfies(e -> {
                QueueConfigApplied a = (QueueConfigApplied) e.getPayload();
                assertThat(a.getQueues()).containsExactly(new QueueEntry(solo, solo), new QueueEntry(other, other),
                        new QueueEntry(leaver, leaver));
                assertThat(a.getPriorityClasses()).containsExactly("high", "normal");
            });
        }
        Map<String, Object> before = current();

        HttpResponse<String> status = send(at("/v1/admin/queue-config", admin).GET());
        assertThat(put("application/json", status.body().getBytes(StandardCharsets.UTF_8), "").statusCode())
                .isEqualTo(200);
        HttpResponse<String> yaml = send(at("/v1/admin/queue-config", admin).header("Accept", "application/yaml")
                .GET());
        assertThat(yaml.headers().firstValue("Content-Type")).hasValueSatisfying(t ->
                assertThat(t).startsWith("application/yaml"));
        assertThat(putYaml(yaml.body(), "").statusCode()).isEqualTo(200);

        assertThat(current()).containsEntry("yaml", before.get("yaml")).containsEntry("sha256", before.get("sha256"))
                .containsEntry("version", ((Number) before.get("version")).intValue() + 2);
    }

    @Test
    void aConfigurationThatTakesTheQueueOfATenantsJobsAwayIsRefusedNamingTheTenantUnlessForced() throws Exception {
        assertThat(putYaml(config(true), "").statusCode()).isEqualTo(200);
        wire.submit(leaver + "-run", leaver, 4, 1);
        wire.submit(leaver + "-wait", leaver, 4, 1);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe.payloads(leaver, leaver + "-run", JobDispatched.class)).hasSize(1);
            assertThat(probe.payloads(leaver, leaver + "-wait", JobWaiting.class)).isNotEmpty();
        });
        Object version = current().get("version");

        // the file: refused, logged, shown, the live configuration kept
        Files.writeString(configFile, config(false), StandardCharsets.UTF_8);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(read(send(at("/v1/admin/queue-config", admin).GET())
                .body()).get("lastRejected")).satisfies(r -> {
                    assertThat(asMap(r)).containsEntry("source", "file");
                    assertThat(asMap(r).get("problems").toString()).contains("tenant " + leaver + " has 1 queued and 1"
                            + " running jobs in queue '" + leaver + "'");
                }));
        assertThat(current()).containsEntry("version", version);

        // the admin API: 400 naming the tenant, nothing changed
        HttpResponse<String> refused = putYaml(config(false), "");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat((List<?>) read(refused.body()).get("errors")).singleElement().satisfies(e -> {
            assertThat(asMap(e)).containsEntry("field", "queues");
            assertThat(asMap(e).get("message").toString()).startsWith("tenant " + leaver + " has 1 queued and 1 running")
                    .contains(leaver + " would have no queue");
        });
        assertThat(current()).containsEntry("version", version);
        assertThat(probe.payloads(leaver, leaver + "-wait", JobWaiting.class))
                .noneMatch(w -> w.getReason() == WaitReason.NEVER_FITS);

        // forced: applied; the queued job waits with NEVER_FITS, saying why
        assertThat(putYaml(config(false), "?force=true").statusCode()).isEqualTo(200);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe.payloads(leaver, leaver + "-wait",
                JobWaiting.class)).last().satisfies(w -> {
                    assertThat(w.getReason()).isEqualTo(WaitReason.NEVER_FITS);
                    assertThat(w.getMessage()).isEqualTo("never fits: tenant " + leaver + " has no default queue '"
                            + leaver + "'");
                }));
    }

    @Test
    void emptyListsAreReturnedNotLeftOut() throws Exception {
        HttpResponse<String> none = send(at("/v1/queues", stranger + "-token").GET());
        assertThat(none.statusCode()).isEqualTo(200);
        assertThat(read(none.body())).containsEntry("queues", List.of());

        HttpResponse<String> pending = send(at("/v1/queues/" + other + "/pending", other + "-token").GET());
        assertThat(read(pending.body())).containsEntry("pending", List.of()).containsEntry("tenant", other);

        HttpResponse<String> queues = send(at("/v1/queues", other + "-token").GET());
        assertThat(queues.body()).contains("\"cohort\":null");
    }

    /** One malformed admin PUT: what is sent and what must come back. */
    record BadPut(String name, String contentType, byte[] body, int status, String detail) {
    }

    @Test
    void theAdminPutRefusesWhatIsNotExactlyOneUtf8YamlOrJsonDocument() throws Exception {
        String good = config(true);
        String goodJson = "{\"flavours\": [\"H100\"], \"queues\": [{\"name\": \"" + solo + "\", \"tenant\": \"" + solo
                + "\", \"quotas\": {\"H100\": {\"nominal\": 4}}}, {\"name\": \"" + other + "\", \"tenant\": \""
                + other + "\", \"quotas\": {\"H100\": {\"nominal\": 4}}}, {\"name\": \"" + leaver + "\", \"tenant\": \""
                + leaver + "\", \"quotas\": {\"H100\": {\"nominal\": 4}}}]}";
        byte[] latin1 = (good + "# caf\u00e9\n").getBytes(StandardCharsets.ISO_8859_1);
        List<BadPut> cases = List.of(
                new BadPut("a second YAML document after the first", "application/yaml",
                        utf8(good + "---\nflavours: [A100]\n"), 400, "single document"),
                new BadPut("garbage after the YAML document", "application/yaml", utf8(good + "]] nope\n"), 400,
                        "not valid YAML"),
                new BadPut("garbage after the JSON document", "application/json", utf8(goodJson + " trailing"), 400,
                        "not valid"),
                new BadPut("a key given twice in YAML", "application/yaml", utf8("flavours: [A100]\n" + good), 400,
                        "flavours"),
                new BadPut("a key given twice in JSON", "application/json",
                        utf8(goodJson.replace("{\"flavours\": [\"H100\"],", "{\"flavours\": [\"H100\"], \"flavours\": [\"H100\"],")),
                        400, "flavours"),
                new BadPut("no Content-Type", null, utf8(good), 415, "Content-Type"),
                new BadPut("an empty Content-Type", "", utf8(good), 415, "Content-Type"),
                new BadPut("a charset other than UTF-8", "application/yaml; charset=ISO-8859-1", latin1, 415,
                        "charset"),
                new BadPut("bytes that are not UTF-8", "application/yaml", latin1, 400, "UTF-8"),
                new BadPut("a media type that is neither YAML nor JSON", "application/xml", utf8(good), 415,
                        "Content-Type"));
        assertThat(putYaml(good, "").statusCode()).isEqualTo(200);
        Object version = current().get("version");
        for (BadPut c : cases) {
            HttpResponse<String> r = put(c.contentType(), c.body(), "");
            assertThat(r.statusCode()).as(c.name()).isEqualTo(c.status());
            assertThat(r.headers().firstValue("Content-Type")).as(c.name()).hasValue("application/problem+json");
            assertThat(r.body()).as(c.name()).contains(c.detail());
        }
        assertThat(current()).as("nothing was applied").containsEntry("version", version);
        assertThat(put("application/yaml; charset=utf-8", utf8(good), "").statusCode()).isEqualTo(200);
        assertThat(put("application/json", utf8(goodJson), "").statusCode()).isEqualTo(200);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }
}
