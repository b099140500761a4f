package io.gantry.admission;

import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.GpuDevice;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An admission service of a test class's own (its database, tokens and settings) on the shared broker, started and
 * ready: for the classes whose settings or database the shared one of {@link AdmissionIntegrationTest} must not have.
 */
final class AdmissionAlone implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private final ApplicationContext context;
    private final String base;

    private AdmissionAlone(ApplicationContext context) {
        this.context = context;
        this.base = context.getBean(EmbeddedServer.class).getURL().toString();
    }

    /**
     * @param datasource   the {@code datasources.default.*} settings of its database
     * @param tokenByTenant the tenants' tokens; {@code admin} the admin's, or null
     * @param settings     the class's own settings (strings, as a configuration file would give them)
     */
    static AdmissionAlone start(Map<String, ?> datasource, Map<String, String> tokenByTenant, String admin,
                                Map<String, String> settings) throws Exception {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        Map<String, Object> props = new HashMap<>(datasource);
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", "-1");
        props.put("gantry.auth.tokens-file", TokensFile.write(Files.createTempDirectory("admission-alone-")
                .resolve("tokens.yaml"), tokenByTenant, admin).toString());
        props.putAll(settings);
        ApplicationContext context = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        assertThat(context.getBean(AdmissionProcessor.class).awaitReady(Duration.ofSeconds(60))).isTrue();
        return new AdmissionAlone(context);
    }

    /**
     * Registers a node to place the test's one-GPU jobs on. The node topic is shared with the other test classes, so
     * the smallest node that serves: it moves no other class's "largest node" or "whole cluster". Creates the topics
     * first: the broker creates none on its own, and the class may be the first of its JVM.
     */
    static void registerOneGpuNode(String prefix) {
        String node = prefix + "-node-" + UUID.randomUUID();
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        try (TopicClient kafka = new TopicClient(bootstrap)) {
            kafka.send(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setNodeId(node).setOccurredAt(Instant.now())
                    .setPayload(NodeRegistered.newBuilder()
                            .setGpus(List.of(GpuDevice.newBuilder().setIndex(0).setModel("H100").setMemoryMiB(81920)
                                    .build()))
                            .setCpuMillis(4_000).setMemoryMiB(16_384).setLabels(Map.of())
                            .setBackend("simulated").build())
                    .build());
        }
    }

    /** POSTs a job ({@code json}) as the holder of {@code token}, with an {@code Idempotency-Key} when not null. */
    HttpResponse<String> submit(String token, String idempotencyKey, String json) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/jobs"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (idempotencyKey != null) {
            b.header("Idempotency-Key", idempotencyKey);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GETs {@code path} as the holder of {@code token}. */
    HttpResponse<String> get(String path, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer " + token)
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A limit's refusal: 429 problem+json with a Retry-After. */
    static void assertTooMany(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).contains("application/problem+json");
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
    }

    /** Its URL, without a trailing slash. */
    String base() {
        return base;
    }

    ApplicationContext context() {
        return context;
    }

    @Override
    public void close() {
        context.close();
    }
}
