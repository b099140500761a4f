package io.gantry.admission;

import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.AccessEvent;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueEntry;
import io.gantry.events.TokenChanged;
import io.gantry.runtime.access.AccessView;
import io.gantry.runtime.http.RunTokens;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import io.micronaut.transaction.TransactionOperations;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tenant and token administration against the real broker and PostgreSQL: what an admin does through the API, what
 * the new tokens can then do (authenticated by the service's own view of {@code admission.access-events}), and that
 * the secret is nowhere but in the answer that created it.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessIntegrationTest implements TestPropertyProvider {
    private static final String ADMIN = "access-admin-token";
    private static final String VISION = "access-vision-token";
    private static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
    private static final String ACME = "acme-" + SUFFIX;
    private static final String BETA = "beta-" + SUFFIX;
    private static final Duration SOON = Duration.ofSeconds(15);
    /** A tenant only the tokens file names (as `gantry dev`'s demo tenant). */
    private static final String FILED = "filed-" + SUFFIX;
    private static final String FILED_TOKEN = "filed-token-" + SUFFIX;
    private static final String FILED_2 = "filed2-" + SUFFIX;

    @Inject
    EmbeddedServer server;
    @Inject
    JsonMapper json;
    @Inject
    AdmissionProcessor processor;
    @Inject
    AccessView view;
    @Inject
    TransactionOperations<Connection> tx;

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<String> secrets = new ArrayList<>();

    @Override
    public Map<String, String> getProperties() {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        try (TopicClient topics = new TopicClient(bootstrap)) {
            // the queue configuration assigns tenants to queues: the new tenants get one each (restored at start)
            topics.send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", QueueConfigEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setOccurredAt(Instant.now())
                    .setPayload(QueueConfigApplied.newBuilder().setVersion(1).setSource("admin").setAppliedBy("ops")
                            .setSha256("0").setYaml("# test")
                            .setQueues(List.of(new QueueEntry("vision", "vision"),
                                    new QueueEntry("vision-batch", "vision"), new QueueEntry("audio", "audio"),
                                    new QueueEntry("ops", "ops"), new QueueEntry(ACME, ACME),
                                    new QueueEntry(BETA, BETA)))
                            .setPriorityClasses(List.of("high", "normal")).build())
                    .build());
        }
        Map<String, String> props = new HashMap<>(EmbeddedPostgres.shared().newDatasource("admission"));
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", "-1");
        props.put("gantry.auth.tokens-file", tokensFile().toString());
        return props;
    }

    @BeforeEach
    void serviceIsReady() throws InterruptedException {
        assertThat(processor.awaitReady(Duration.ofSeconds(60))).isTrue();
        assertThat(view.awaitCaughtUp(Duration.ofSeconds(60))).isTrue();
    }

    @Test
    void anAdminCreatesATenantWhoseNewTokenSubmitsAndSeesOnlyItsOwnJobsUntilRevoked() throws Exception {
        Reply created = send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"" + ACME + "\",\"displayName\":\"Acme\"}");
        assertThat(created.status).as(created.raw).isEqualTo(201);
        assertThat(created.body).containsEntry("name", ACME).containsEntry("state", "ACTIVE");
        assertThat(send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"" + ACME + "\"}").status)
                .as("the same tenant again").isEqualTo(409);
        assertThat(tenantNames(send("GET", ADMIN, "/v1/admin/tenants", null))).contains(ACME);

        Reply issued = send("POST", ADMIN, "/v1/admin/tenants/" + ACME + "/tokens", "{\"label\":\"ci\"}");
        assertThat(issued.status).as(issued.raw).isEqualTo(201);
        assertThat(issued.header("Cache-Control")).isEqualTo("no-store");
        String token = secret(issued);
        String tokenId = (String) issued.body.get("tokenId");
        assertThat(token).startsWith("gtn_").hasSizeGreaterThanOrEqualTo(4 + 43);
        assertThat(tokenId).matches("tok_[0-9a-f]{24}");

        String jobId = await().atMost(SOON).until(() -> submit(token), id -> id != null);
        String visionJob = submit(VISION);
        Reply mine = send("GET", token, "/v1/jobs", null);
        assertThat(jobIds(mine)).contains(jobId).doesNotContain(visionJob);
        assertThat(send("GET", token, "/v1/jobs/" + visionJob, null).status).isEqualTo(404);

        Reply listed = send("GET", ADMIN, "/v1/admin/tenants/" + ACME + "/tokens", null);
        assertThat(listed.raw).contains(tokenId, "\"label\":\"ci\"", "\"state\":\"active\"").doesNotContain(token);

        Reply revoked = send("POST", ADMIN, "/v1/admin/tokens/" + tokenId + "/revoke", null);
        assertThat(revoked.status).as(revoked.raw).isEqualTo(200);
        assertThat(revoked.body).containsEntry("state", "revoked");
        await().atMost(SOON).until(() -> send("GET", token, "/v1/jobs", null).status == 401);
        assertThat(send("GET", token, "/v1/jobs", null).raw).contains("was revoked").doesNotContain(token);
    }

    @Test
    void aNonAdminIsForbiddenTheAdminApiAndAnAnonymousCallerIsUnauthorized() throws Exception {
        for (String[] call : List.of(new String[]{"GET", "/v1/admin/tenants"},
                new String[]{"POST", "/v1/admin/tenants"},
                new String[]{"POST", "/v1/admin/tenants/vision/tokens"},
                new String[]{"POST", "/v1/admin/tokens/tok_000000000000000000000000/revoke"})) {
            Reply r = send(call[0], VISION, call[1], call[0].equals("POST") ? "{\"name\":\"x\"}" : null);
            assertThat(r.status).as(call[1]).isEqualTo(403);
            assertThat(r.header("Content-Type")).contains("application/problem+json");
            assertThat(send(call[0], null, call[1], null).status).as(call[1]).isEqualTo(401);
        }
    }

    @Test
    void badRequestsAreRefusedNamingTheField() throws Exception {
        assertThat(fields(send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"Bad_Name\"}"))).containsExactly("name");
        assertThat(fields(send("POST", ADMIN, "/v1/admin/tenants/vision/tokens",
                "{\"expiresIn\":\"P400D\",\"role\":\"root\"}"))).containsExactlyInAnyOrder("expiresIn", "role");
        assertThat(fields(send("POST", ADMIN, "/v1/admin/tokens/nope/revoke", null))).containsExactly("id");
        assertThat(send("POST", ADMIN, "/v1/admin/tenants/no-such-" + SUFFIX + "/tokens", null).status)
                .isEqualTo(404);
        Reply own = send("POST", ADMIN, "/v1/admin/tenants/ops/disable", null);
        assertThat(own.status).as("one's own tenant").isEqualTo(409);
        assertThat(own.raw).contains("\"field\":\"name\"", "cannot disable its own tenant");
    }

    @Test
    void anExpiredTokenADisabledTenantAndARotationAreEnforcedByTheFilter() throws Exception {
        assertThat(send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"" + BETA + "\"}").status).isEqualTo(201);
        String shortLived = secret(send("POST", ADMIN, "/v1/admin/tenants/" + BETA + "/tokens",
                "{\"expiresIn\":\"PT3S\"}"));
        Reply longIssued = send("POST", ADMIN, "/v1/admin/tenants/" + BETA + "/tokens", "{\"role\":\"tenant\"}");
        String longLived = secret(longIssued);
        await().atMost(SOON).until(() -> send("GET", longLived, "/v1/jobs", null).status == 200);
        await().atMost(SOON).until(() -> send("GET", shortLived, "/v1/jobs", null).status == 401);
        assertThat(send("GET", shortLived, "/v1/jobs", null).raw).contains("expired");

        assertThat(send("POST", ADMIN, "/v1/admin/tenants/" + BETA + "/disable", null).status).isEqualTo(200);
        await().atMost(SOON).until(() -> send("GET", longLived, "/v1/jobs", null).status == 403);
        assertThat(send("POST", ADMIN, "/v1/admin/tenants/" + BETA + "/tokens", null).status)
                .as("no token for a disabled tenant").isEqualTo(409);
        assertThat(send("POST", ADMIN, "/v1/admin/tenants/" + BETA + "/enable", null).status).isEqualTo(200);
        await().atMost(SOON).until(() -> send("GET", longLived, "/v1/jobs", null).status == 200);

        Reply rotated = send("POST", ADMIN, "/v1/admin/tokens/" + longIssued.body.get("tokenId")
                + "/rotate?overlap=PT1H", null);
        assertThat(rotated.status).as(rotated.raw).isEqualTo(201);
        String successor = secret(rotated);
        assertThat(rotated.raw).contains("\"replacedBy\":\"" + rotated.body.get("tokenId") + "\"");
        await().atMost(SOON).until(() -> send("GET", successor, "/v1/jobs", null).status == 200);
        assertThat(send("GET", longLived, "/v1/jobs", null).status).as("during the overlap").isEqualTo(200);
        assertThat(send("POST", ADMIN, "/v1/admin/tokens/" + longIssued.body.get("tokenId") + "/rotate", null)
                .status).as("rotated twice").isEqualTo(409);
    }

    @Test
    void aTenantOnlyTheTokensFileNamesIsListedAndDisablingItRefusesItsFileToken() throws Exception {
        Reply listed = send("GET", ADMIN, "/v1/admin/tenants", null);
        assertThat(listed.raw).contains("{\"name\":\"" + FILED + "\",\"displayName\":\"" + FILED
                + "\",\"state\":\"ACTIVE\",\"source\":\"tokens-file\"}");
        assertThat(send("GET", ADMIN, "/v1/admin/tenants/" + FILED, null).status).isEqualTo(200);
        await().atMost(SOON).until(() -> send("GET", FILED_TOKEN, "/v1/jobs", null).status == 200);

        Reply disabled = send("POST", ADMIN, "/v1/admin/tenants/" + FILED + "/disable", null);
        assertThat(disabled.status).as(disabled.raw).isEqualTo(200);
        assertThat(disabled.body).containsEntry("state", "DISABLED");
        await().atMost(SOON).until(() -> send("GET", FILED_TOKEN, "/v1/jobs", null).status == 403);
        String after = send("GET", ADMIN, "/v1/admin/tenants", null).raw;
        assertThat(after.split("\"name\":\"" + FILED + "\"", -1)).as("listed once, from its record").hasSize(2);
        assertThat(after).contains("\"name\":\"" + FILED + "\",\"displayName\":\"" + FILED
                + "\",\"state\":\"DISABLED\"");

        assertThat(send("POST", ADMIN, "/v1/admin/tenants/" + FILED + "/enable", null).status).isEqualTo(200);
        await().atMost(SOON).until(() -> send("GET", FILED_TOKEN, "/v1/jobs", null).status == 200);
        assertThat(send("POST", ADMIN, "/v1/admin/tenants/nobody-" + SUFFIX + "/disable", null).status)
                .isEqualTo(404);
    }

    @Test
    void aTenantOfTheTokensFileExistsSoCreatingItIsAConflictAndItsFirstApiTokenGivesItItsRecord() throws Exception {
        Reply created = send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"" + FILED_2 + "\"}");
        assertThat(created.status).as(created.raw).isEqualTo(409);
        assertThat(created.raw).contains("tenant " + FILED_2 + " already exists (in the tokens file");

        Reply issued = send("POST", ADMIN, "/v1/admin/tenants/" + FILED_2 + "/tokens", null);
        assertThat(issued.status).as(issued.raw).isEqualTo(201);
        String token = secret(issued);
        await().atMost(SOON).until(() -> send("GET", token, "/v1/jobs", null).status == 200);
        String listed = send("GET", ADMIN, "/v1/admin/tenants", null).raw;
        assertThat(listed.split("\"name\":\"" + FILED_2 + "\"", -1)).as("listed once, from its record").hasSize(2);
        assertThat(listed).contains("\"name\":\"" + FILED_2 + "\",\"displayName\":\"" + FILED_2
                + "\",\"state\":\"ACTIVE\"");
    }

    @Test
    void noSecretIsOnTheTopicOrInTheDatabaseOnlyItsHash() throws Exception {
        String tenant = "gamma-" + SUFFIX;
        assertThat(send("POST", ADMIN, "/v1/admin/tenants", "{\"name\":\"" + tenant + "\"}").status).isEqualTo(201);
        Reply issued = send("POST", ADMIN, "/v1/admin/tenants/" + tenant + "/tokens", null);
        String token = secret(issued);
        List<String> all = new ArrayList<>(secrets);

        List<ConsumerRecord<String, byte[]>> records;
        try (TopicClient topics = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            records = topics.readAllRaw(Topics.ADMISSION_ACCESS_EVENTS);
        }
        String tokenHash = null;
        for (ConsumerRecord<String, byte[]> r : records) {
            String bytes = new String(r.value(), StandardCharsets.ISO_8859_1);
            for (String s : all) {
                assertThat(bytes).as("record " + r.key()).doesNotContain(s);
            }
            AccessEvent e = AvroWire.decode(Topics.ADMISSION_ACCESS_EVENTS, r.value());
            if (e.getPayload() instanceof TokenChanged t && t.getTokenId().equals(issued.body.get("tokenId"))) {
                tokenHash = t.getSha256();
            }
        }
        assertThat(tokenHash).isEqualTo(RunTokens.sha256(token));

        List<String> stored = tx.executeRead(status -> {
            List<String> values = new ArrayList<>();
            try (Statement s = status.getConnection().createStatement();
                 ResultSet rs = s.executeQuery("SELECT * FROM api_tokens")) {
                int columns = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    for (int i = 1; i <= columns; i++) {
                        values.add(rs.getString(i));
                    }
                }
            }
            return values;
        });
        assertThat(stored).contains(RunTokens.sha256(token)).doesNotContainAnyElementsOf(all);
        assertThat(String.join(" ", stored.stream().map(String::valueOf).toList())).doesNotContain("gtn_");
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    private record Reply(int status, String raw, Map<String, Object> body, Map<String, List<String>> headers) {
        String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> String.join(",", e.getValue())).findFirst().orElse(null);
        }
    }

    private String secret(Reply issued) {
        assertThat(issued.status).as(issued.raw).isEqualTo(201);
        String token = (String) issued.body.get("token");
        secrets.add(token);
        return token;
    }

    /** The job id, or null while the token is not accepted yet. */
    private String submit(String token) throws Exception {
        Reply r = send("POST", token, "/v1/jobs", """
                {"name":"cpu-only","tasks":[{"name":"w","command":["true"],"gpus":0}]}""");
        if (r.status == 401) {
            return null;
        }
        assertThat(r.status).as(r.raw).isEqualTo(202);
        return (String) r.body.get("jobId");
    }

    private Reply send(String method, String token, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.getURL() + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        Map<String, Object> parsed = r.body().isEmpty() ? Map.of()
                : json.readValue(r.body(), Argument.mapOf(String.class, Object.class));
        return new Reply(r.statusCode(), r.body(), parsed, r.headers().map());
    }

    @SuppressWarnings("unchecked")
    private static List<String> fields(Reply reply) {
        assertThat(reply.status).as(reply.raw).isEqualTo(400);
        return ((List<Map<String, Object>>) reply.body.get("errors")).stream()
                .map(e -> (String) e.get("field")).toList();
    }

    @SuppressWarnings("unchecked")
    private static List<String> jobIds(Reply list) {
        assertThat(list.status).as(list.raw).isEqualTo(200);
        return ((List<Map<String, Object>>) list.body.get("jobs")).stream().map(e -> (String) e.get("jobId")).toList();
    }

    @SuppressWarnings("unchecked")
    private static List<String> tenantNames(Reply list) {
        assertThat(list.status).as(list.raw).isEqualTo(200);
        return ((List<Map<String, Object>>) list.body.get("tenants")).stream().map(e -> (String) e.get("name"))
                .toList();
    }

    private static Path tokensFile() {
        try {
            return TokensFile.write(Files.createTempDirectory("access-tokens-").resolve("tokens.yaml"),
                    TokensFile.tenants("vision", VISION, FILED, FILED_TOKEN, FILED_2,
                            "filed2-token-" + SUFFIX), ADMIN);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
