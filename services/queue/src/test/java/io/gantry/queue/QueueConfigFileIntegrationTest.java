package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobWaiting;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.WaitReason;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.MutableHttpRequest;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.http.client.HttpClient;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The queue started with a fair-share configuration file: cohort borrowing and flavour assignment over the real
 * broker, the queue status over HTTP, and a refused start on an invalid file. Contexts are started by hand so the
 * invalid one can fail (never two at once: they share a transactional id).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueConfigFileIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final String tenant = "qf-" + UUID.randomUUID().toString().substring(0, 8);
    private final String neighbour = tenant + "-n";
    private final Wire wire = new Wire();
    private final KafkaProbe probe;

    QueueConfigFileIntegrationTest() {
        EmbeddedKafka.shared().createTopics(Topics.allNames(), 1);
        probe = new KafkaProbe();
    }

    @AfterAll
    void closeClients() {
        wire.close();
        probe.close();
    }

    private Path configFile;

    private Map<String, Object> properties(String configYaml) throws IOException {
        Path config = Files.createTempFile("queues", ".yml");
        Files.writeString(config, configYaml, StandardCharsets.UTF_8);
        config.toFile().deleteOnExit();
        configFile = config;
        Path tokens = TokensFile.write(TokensFile.tenants(tenant, tenant + "-token"), tenant + "-admin");
        Map<String, Object> p = new HashMap<>();
        p.put("kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers());
        p.put("micronaut.server.port", "-1");
        p.put("gantry.auth.tokens-file", tokens.toString());
        p.put("gantry.queue.config-file", config.toString());
        p.put("gantry.queue.config-poll", "1s");
        return p;
    }

    @Test
    void aJobBorrowsItsNeighboursIdleQuotaIsPinnedToItsFlavourAndTheQueueShowsIt() throws Exception {
        String yaml = "flavours: [H100, A100]\n"
                + "cohorts:\n  - name: shared\n"
                + "queues:\n"
                + "  - {name: " + tenant + ", tenant: " + tenant + ", cohort: shared, weight: 2,"
                + " quotas: {H100: {nominal: 4}, A100: {nominal: 8}}}\n"
                + "  - {name: " + neighbour + ", tenant: " + neighbour + ", cohort: shared,"
                + " quotas: {H100: {nominal: 4}}}\n";
        try (EmbeddedServer server = ApplicationContext.run(EmbeddedServer.class, properties(yaml));
             HttpClient http = HttpClient.create(server.getURL())) {
            await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
            wire.submit(tenant + "-j1", tenant, 8, 1);
            wire.submit(tenant + "-j2", tenant, 8, 1);
            wire.submit(tenant + "-j3", tenant, 1, 1);

            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(probe.payloads(tenant, tenant + "-j1", JobDispatched.class)).singleElement()
                        .satisfies(d -> assertThat(d.getSpec().getTasks().get(0).getGpuModel()).isEqualTo("H100"));
                assertThat(probe.payloads(tenant, tenant + "-j2", JobDispatched.class)).singleElement()
                        .satisfies(d -> assertThat(d.getSpec().getTasks().get(0).getGpuModel()).isEqualTo("A100"));
                assertThat(probe.payloads(tenant, tenant + "-j3", JobWaiting.class)).singleElement().satisfies(w -> {
                    assertThat(w.getReason()).isEqualTo(WaitReason.QUOTA);
                    assertThat(w.getMessage()).isEqualTo("waiting for quota: cohort shared needs 1 x H100, 0 free");
                });
            });

            JsonMapper json = server.getApplicationContext().getBean(JsonMapper.class);
            Map<String, Object> queues = json.readValue(http.toBlocking().retrieve(HttpRequest.GET("/v1/queues")
                    .bearerAuth(tenant + "-token"), String.class), Argument.mapOf(String.class, Object.class));
            assertThat((List<?>) queues.get("queues")).singleElement().satisfies(row -> {
                Map<?, ?> q = (Map<?, ?>) row;
                assertThat(q.get("name")).isEqualTo(tenant);
                assertThat(q.get("cohort")).isEqualTo("shared");
                assertThat(q.get("pending")).isEqualTo(1);
                assertThat(q.get("fairShare")).isEqualTo(2.0 / 3);
                assertThat((List<?>) q.get("flavours")).first().satisfies(f -> assertThat(asMap(f))
                        .containsEntry("flavour", "H100").containsEntry("nominal", 4).containsEntry("used", 8)
                        .containsEntry("borrowed", 4).containsEntry("lent", 0));
            });
            Map<String, Object> pending = json.readValue(http.toBlocking().retrieve(
                    HttpRequest.GET("/v1/queues/" + tenant + "/pending").bearerAuth(tenant + "-token"), String.class),
                    Argument.mapOf(String.class, Object.class));
            assertThat((List<?>) pending.get("pending")).singleElement().satisfies(p -> assertThat(asMap(p))
                    .containsEntry("jobId", tenant + "-j3").containsEntry("waitReason", "QUOTA"));
        }
    }

    /** A tenant of its own: the other tests' jobs of {@code tenant} are on the shared broker's topics. */
    private final String solo = tenant + "-solo";

    /**
     * {@code solo}'s queue, and those of the first test's tenants: a configuration that took their queues away while
     * their jobs run or wait would be refused.
     */
    private String oneQueue(int nominal, String extra) {
        return "flavours: [H100]\n"
                + "queues:\n  - {name: " + solo + ", tenant: " + solo + ", quotas: {H100: {nominal: " + nominal
                + extra + "}}}\n"
                + "  - {name: " + tenant + ", tenant: " + tenant + ", quotas: {H100: {nominal: 4}}}\n"
                + "  - {name: " + neighbour + ", tenant: " + neighbour + ", quotas: {H100: {nominal: 4}}}\n";
    }

    @Test
    void theConfigurationChangesWithoutARestartThroughTheAdminApiAndTheFileAndABadOneIsRefusedAndTheOldKept()
            throws Exception {
        try (EmbeddedServer server = ApplicationContext.run(EmbeddedServer.class, properties(oneQueue(4, "")));
             HttpClient http = HttpClient.create(server.getURL());
             TopicClient topics = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
            JsonMapper json = server.getApplicationContext().getBean(JsonMapper.class);
            wire.submit(solo + "-a", solo, 4, 1);
            wire.submit(solo + "-b", solo, 4, 1);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe.payloads(solo, solo + "-b",
                    JobWaiting.class)).isNotEmpty());
            long before = topics.readAll(Topics.QUEUE_CONFIG_EVENTS).size();

            // a tenant may not
            assertThat(status(() -> http.toBlocking().exchange(put(oneQueue(8, "")).bearerAuth(tenant + "-token"))))
                    .isEqualTo(403);
            // an invalid configuration names the path and changes nothing
            HttpClientResponseException bad = org.junit.jupiter.api.Assertions.assertThrows(
                    HttpClientResponseException.class, () -> http.toBlocking().exchange(
                            put(oneQueue(8, ", lendingLimit: 2")).bearerAuth(tenant + "-admin"), String.class));
            assertThat(bad.getStatus().getCode()).isEqualTo(400);
            assertThat(bad.getResponse().getContentType()).hasValueSatisfying(t ->
                    assertThat(t.toString()).isEqualTo("application/problem+json"));
            assertThat(bad.getResponse().getBody(String.class)).hasValueSatisfying(b -> assertThat(b)
                    .contains("\"field\":\"queues[0].quotas.H100\"")
                    .contains("borrowingLimit/lendingLimit need the queue to be in a cohort"));
            assertThat(probe.payloads(solo, solo + "-b", JobDispatched.class)).isEmpty();

            // a valid one is applied at once, published, and admits the waiting job
            String applied = http.toBlocking().retrieve(put(oneQueue(8, "")).bearerAuth(tenant + "-admin"));
            assertThat(asMap(json.readValue(applied, Argument.mapOf(String.class, Object.class))))
                    .containsEntry("source", "admin").containsEntry("appliedBy", "ops");
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe.payloads(solo, solo + "-b",
                    JobDispatched.class)).hasSize(1));
            assertThat(topics.readAll(Topics.QUEUE_CONFIG_EVENTS)).hasSize((int) before + 1).last()
                    .satisfies(e -> assertThat(((QueueConfigApplied) e.getPayload()).getYaml()).contains("nominal: 8"));

            // the file changes: applied within the poll interval; then a broken edit is refused, the live one kept
            Files.writeString(configFile, oneQueue(12, ""), StandardCharsets.UTF_8);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(adminStatus(http, json))
                    .extracting(s -> asMap(s.get("current")).get("source"), s -> asMap(s.get("current")).get("yaml"))
                    .containsExactly("file", oneQueue(12, "")));
            Files.writeString(configFile, "queues: nope\n", StandardCharsets.UTF_8);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(adminStatus(http, json).get("lastRejected"))
                    .satisfies(r -> assertThat(asMap(r).get("problems").toString()).contains("queues: must be a list")));
            assertThat(asMap(adminStatus(http, json).get("current")).get("yaml")).isEqualTo(oneQueue(12, ""));
        }
    }

    @Test
    void afterARestartTheNewestAppliedConfigurationIsLiveUnlessTheFileChangedWhileDown() throws Exception {
        Map<String, Object> props = properties(oneQueue(4, ""));
        try (EmbeddedServer server = ApplicationContext.run(EmbeddedServer.class, props);
             HttpClient http = HttpClient.create(server.getURL())) {
            await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
            http.toBlocking().retrieve(put(oneQueue(8, "")).bearerAuth(tenant + "-admin"));
        }
        // same file: the admin's change survives the restart
        try (EmbeddedServer server = ApplicationContext.run(EmbeddedServer.class, props);
             HttpClient http = HttpClient.create(server.getURL())) {
            await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
            JsonMapper json = server.getApplicationContext().getBean(JsonMapper.class);
            assertThat(asMap(adminStatus(http, json).get("current")))
                    .containsEntry("source", "admin").containsEntry("yaml", oneQueue(8, ""));
        }
        // the file changed while the service was down: the file wins, as a new version
        Files.writeString(configFile, oneQueue(12, ""), StandardCharsets.UTF_8);
        try (EmbeddedServer server = ApplicationContext.run(EmbeddedServer.class, props);
             HttpClient http = HttpClient.create(server.getURL())) {
            await().atMost(TIMEOUT).until(() -> server.getApplicationContext().getBean(QueueProcessor.class).isReady());
            JsonMapper json = server.getApplicationContext().getBean(JsonMapper.class);
            Map<String, Object> current = asMap(adminStatus(http, json).get("current"));
            assertThat(current).containsEntry("source", "file").containsEntry("yaml", oneQueue(12, ""));
        }
    }

    private static MutableHttpRequest<String> put(String yaml) {
        return HttpRequest.PUT("/v1/admin/queue-config", yaml).contentType("application/yaml");
    }

    private Map<String, Object> adminStatus(HttpClient http, JsonMapper json) throws IOException {
        return json.readValue(http.toBlocking().retrieve(HttpRequest.GET("/v1/admin/queue-config")
                .bearerAuth(tenant + "-admin")), Argument.mapOf(String.class, Object.class));
    }

    private static int status(org.junit.jupiter.api.function.Executable call) {
        try {
            call.execute();
            return 200;
        } catch (HttpClientResponseException e) {
            return e.getStatus().getCode();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    @Test
    void anInvalidConfigurationFileStopsTheStartWithAMessageNamingThePath() throws Exception {
        String yaml = "flavours: [H100]\ncohorts: [{name: c}]\n"
                + "queues:\n  - {name: q, tenant: q, cohort: c, quotas: {H100: {nominal: 4, lendingLimit: 6}}}\n";
        assertThatThrownBy(() -> ApplicationContext.run(properties(yaml)))
                .satisfies(e -> {
                    Throwable t = e;
                    StringBuilder messages = new StringBuilder();
                    while (t != null) {
                        messages.append(t.getMessage()).append('\n');
                        t = t.getCause();
                    }
                    assertThat(messages.toString())
                            .contains("queues[0].quotas.H100.lendingLimit: must be <= nominal 4, was 6");
                });
    }
}
