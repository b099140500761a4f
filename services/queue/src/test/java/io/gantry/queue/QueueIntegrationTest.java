package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobQueued;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.JobWaiting;
import io.gantry.events.QuotaReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskSpec;
import io.gantry.events.WaitReason;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.json.JsonMapper;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The queue against the real broker: the test plays admission and placement. */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueIntegrationTest implements TestPropertyProvider {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Unique per run: the broker is shared with other test classes and keeps their history. */
    private final String tenant = "qa-" + shortId();
    private final String other = "qb-" + shortId();
    private final Wire wire = new Wire();
    private KafkaProbe probe;

    @Inject
    @Client("/")
    HttpClient http;

    @Inject
    JsonMapper json;

    @Override
    public Map<String, String> getProperties() {
        EmbeddedKafka.shared().createTopics(Topics.allNames(), 1);
        return Map.of(
                "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                "micronaut.server.port", "-1",
                "gantry.auth.tokens-file", tokensFile(),
                "gantry.queue.default-gpu-quota", "64",
                "gantry.queue.quotas." + tenant, "8");
    }

    private String tokensFile() {
        return TokensFile.write(TokensFile.tenants(tenant, tenant + "-token", other, other + "-token"),
                "admin-token-1").toString();
    }

    @AfterAll
    void closeClients() {
        wire.close();
        if (probe != null) {
            probe.close();
        }
    }

    private KafkaProbe probe() {
        if (probe == null) {
            probe = new KafkaProbe();
        }
        return probe;
    }

    @Test
    void dependentJobsWaitForTheirDependencyAndEndWithItAndASuspendedJobRunsOnlyOnceResumed() {
        String t = "qd-" + shortId();
        String prep = t + "-prep";
        String train = t + "-train";
        String eval = t + "-eval";
        String bad = t + "-bad";
        String after = t + "-after-bad";
        String held = t + "-held";
        wire.submit(prep, t, 1, 1);
        wire.submit(train, t, 1, 1, List.of(new io.gantry.events.JobDependency(prep,
                io.gantry.events.DependencyCondition.AFTER_OK)), false);
        wire.submit(eval, t, 1, 1, List.of(new io.gantry.events.JobDependency(train,
                io.gantry.events.DependencyCondition.AFTER_OK)), false);
        wire.submit(bad, t, 1, 1);
        wire.submit(after, t, 1, 1, List.of(new io.gantry.events.JobDependency(bad,
                io.gantry.events.DependencyCondition.AFTER_OK)), false);
        wire.submit(held, t, 1, 1, List.of(), true);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe().payloads(t, train, JobWaiting.class)).singleElement().satisfies(w -> {
                assertThat(w.getReason()).isEqualTo(WaitReason.DEPENDENCY);
                assertThat(w.getMessage()).isEqualTo("waits for " + prep + " to succeed (dispatched)");
            });
            assertThat(probe().payloads(t, held, JobWaiting.class)).singleElement()
                    .satisfies(w -> assertThat(w.getReason()).isEqualTo(WaitReason.SUSPENDED));
            assertThat(probe().payloads(t, bad, JobDispatched.class)).hasSize(1);
        });
        assertThat(probe().payloads(t, train, JobDispatched.class)).isEmpty();
        assertThat(probe().payloads(t, held, JobDispatched.class)).isEmpty();

        wire.runSucceeds(prep, t, 1);
        wire.runFails(bad, t, 1);
        wire.suspension(held, t, false);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe().payloads(t, train, JobDispatched.class)).hasSize(1);
            assertThat(probe().payloads(t, held, JobDispatched.class)).hasSize(1);
            assertThat(probe().payloads(t, after, io.gantry.events.JobCancelled.class)).singleElement()
                    .satisfies(c -> assertThat(c.getMessage())
                            .isEqualTo("dependency " + bad + " failed (afterok): it can never be met"));
        });
        assertThat(probe().payloads(t, eval, JobDispatched.class)).isEmpty();
    }

    /**
     * Idle reclamation through the broker: with an idle timeout in the configuration, placement's utilisation windows
     * make the queue warn at half of it, stop the run at the timeout (JobPreempted IDLE), and end the job when the run
     * is released IDLE, without requeueing it.
     */
    @Test
    void anIdleRunIsWarnedThenStoppedAndItsJobEndsIdle() throws Exception {
        String saved = http.toBlocking().retrieve(HttpRequest.GET("/v1/admin/queue-config")
                .accept("application/yaml").bearerAuth("admin-token-1"), String.class);
        String withTimeout = saved.contains("idleTimeout:")
                ? saved.replaceAll("(?m)^idleTimeout:.*$", "idleTimeout: 2m") : saved + "\nidleTimeout: 2m\n";
        assertThat(http.toBlocking().exchange(HttpRequest.PUT("/v1/admin/queue-config", withTimeout)
                .contentType("application/yaml").bearerAuth("admin-token-1"), String.class).code()).isEqualTo(200);
        try {
            String t = "qi-" + shortId();
            String job = t + "-notebook";
            wire.submit(job, t, 1, 1);
            await().atMost(TIMEOUT).until(() -> !probe().payloads(t, job, JobDispatched.class).isEmpty());
            Instant started = wire.runStarts(job, t, 1);

            wire.utilisation(job, t, 1, started, started.plusSeconds(70), started);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(records(Topics.QUEUE_IDLE_EVENTS, job))
                    .singleElement().satisfies(e -> assertThat(((io.gantry.events.IdleEvent) e).getPayload())
                            .isInstanceOfSatisfying(io.gantry.events.JobIdleWarned.class,
                                    w -> assertThat(w.getMessage()).startsWith("GPUs idle for 70 s; the run is stopped at "))));
            wire.utilisation(job, t, 1, started.plusSeconds(70), started.plusSeconds(125), started);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(records(Topics.QUEUE_PREEMPTION_EVENTS, job))
                    .singleElement().satisfies(e -> assertThat(((io.gantry.events.QueuePreemptionEvent) e).getPayload())
                            .isInstanceOfSatisfying(io.gantry.events.JobPreempted.class, p ->
                                    assertThat(p.getReason()).isEqualTo(io.gantry.events.PreemptionReason.IDLE))));
            wire.released(job, t, 1, started, started.plusSeconds(155), ReleaseReason.IDLE);

            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe().payloads(t, job,
                    io.gantry.events.JobFailed.class)).singleElement().satisfies(f ->
                    assertThat(f.getReason()).isEqualTo(io.gantry.events.FailureReason.IDLE)));
            assertThat(probe().payloads(t, job, JobQueued.class)).as("not requeued").hasSize(1);
        } finally {
            assertThat(http.toBlocking().exchange(HttpRequest.PUT("/v1/admin/queue-config", saved)
                    .contentType("application/yaml").bearerAuth("admin-token-1"), String.class).code()).isEqualTo(200);
        }
    }

    /** The records of {@code topic} keyed {@code jobId} so far. */
    private static List<Object> records(io.gantry.schemas.Topic<?> topic, String jobId) {
        try (io.gantry.testkit.TopicClient topics = new io.gantry.testkit.TopicClient(
                EmbeddedKafka.shared().bootstrapServers())) {
            return topics.readAllRaw(topic).stream().filter(r -> jobId.equals(r.key()))
                    .map(r -> (Object) io.gantry.schemas.AvroWire.decode(topic, r.value())).toList();
        }
    }

    @Test
    void aJobIsQueuedDispatchedWithinQuotaAndSucceedsWhileTheNextWaitsForItsGpus() throws Exception {
        String j1 = tenant + "-j1";
        String j2 = tenant + "-j2";
        wire.submit(j1, tenant, 4, 2);
        wire.submit(j2, tenant, 4, 1);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe().payloads(tenant, j1, JobQueued.class)).singleElement()
                    .satisfies(q -> assertThat(q.getGpus()).isEqualTo(8));
            assertThat(probe().payloads(tenant, j1, JobDispatched.class)).singleElement()
                    .satisfies(d -> assertThat(d.getAttempt()).isEqualTo(1));
            assertThat(probe().payloads(tenant, j2, JobWaiting.class)).singleElement().satisfies(w -> {
                assertThat(w.getReason()).isEqualTo(WaitReason.QUOTA);
                assertThat(w.getMessage()).isEqualTo("waiting for quota: tenant " + tenant
                        + " has 8 of 8 GPUs reserved, job needs 4");
                assertThat(w.getQuotaWait()).isEqualTo(io.gantry.events.QuotaWait.OWN_QUOTA);
            });
        });
        Map<String, Object> pending = get("/v1/queues/" + tenant + "/pending", tenant + "-token");
        assertThat((List<?>) pending.get("pending")).singleElement()
                .satisfies(p -> assertThat(asMap(p)).containsEntry("jobId", j2).containsEntry("waitReason", "QUOTA")
                        .containsEntry("waitCause", "OWN_QUOTA").containsEntry("serviceLevel", 0));

        wire.runSucceeds(j1, tenant, 1);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe().payloads(tenant, j1, JobSucceeded.class)).hasSize(1);
            assertThat(probe().payloads(tenant, j1, QuotaReleased.class)).singleElement().satisfies(r -> {
                assertThat(r.getGpus()).isEqualTo(8);
                assertThat(r.getReason()).isEqualTo("RUN_SUCCEEDED");
            });
            assertThat(probe().payloads(tenant, j2, JobDispatched.class)).hasSize(1);
        });
        assertThat((List<?>) get("/v1/queues", tenant + "-token").get("queues")).singleElement()
                .satisfies(row -> assertThat(asMap(row)).containsAllEntriesOf(Map.of("name", tenant, "tenant", tenant,
                        "quotaGpus", 8, "reservedGpus", 4, "queued", 0, "parked", 0, "dispatched", 1, "pending", 0))
                        .containsEntry("flavours", List.of(flavour("gpu", 8, 4))));
    }

    @Test
    void aPoisonRecordGoesToTheDeadLetterTopicAndTheNextJobIsStillQueued() {
        String garbageKey = other + "-garbage";
        String negativeKey = other + "-negative";
        String good = other + "-good";
        wire.sendRaw(Topics.ADMISSION_JOB_EVENTS, garbageKey, "not avro".getBytes(StandardCharsets.UTF_8));
        wire.send(Topics.ADMISSION_JOB_EVENTS, negativeKey, new AdmissionJobEvent(UUID.randomUUID().toString(),
                negativeKey, Instant.now(), new JobSubmitted(other, new JobSpec("bad", 0, null, List.of(
                new TaskSpec("worker", 1, List.of("x"), -2, null, 100, 64L, null, List.of(), null, null, null, null,
                        java.util.Map.of(), null, null, List.of())), null, null, null, null, null, null, null, List.of(), false, null, true), null)));
        wire.submit(good, other, 1, 1);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(probe().deadLetters()).extracting(ConsumerRecord::key).contains(garbageKey, negativeKey);
            assertThat(probe().payloads(other, good, JobDispatched.class)).hasSize(1);
        });
        assertThat(probe().events(other)).extracting(e -> e.getJobId()).doesNotContain(negativeKey, garbageKey);
        ConsumerRecord<String, byte[]> dead = probe().deadLetters().stream()
                .filter(r -> r.key().equals(negativeKey)).findFirst().orElseThrow();
        assertThat(new String(dead.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                .contains("gpus");
    }

    @Test
    void aTenantSeesOnlyItsOwnQueueAndAnAdminSeesEveryQueue() throws Exception {
        wire.submit(other + "-visible", other, 1, 1);
        await().atMost(TIMEOUT).until(() -> !probe().payloads(other, other + "-visible", JobQueued.class).isEmpty());

        assertThat((List<?>) get("/v1/queues", other + "-token").get("queues")).singleElement()
                .satisfies(row -> assertThat(asMap(row)).containsEntry("tenant", other).containsEntry("quotaGpus", 64));
        assertThat(((List<?>) get("/v1/queues", "admin-token-1").get("queues")).stream()
                .map(row -> asMap(row).get("tenant")).toList()).contains(tenant, other);
        assertThat(get("/v1/queues/" + other + "/pending", "admin-token-1")).containsEntry("tenant", other);
        assertThatThrownBy(() -> get("/v1/queues/" + tenant + "/pending", other + "-token"))
                .isInstanceOfSatisfying(HttpClientResponseException.class,
                        e -> assertThat(e.code()).isEqualTo(404));
        assertThatThrownBy(() -> get("/v1/queues/Not_A_Tenant/pending", "admin-token-1"))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.getResponse().getBody(String.class).orElse("")).contains("\"field\":\"name\"");
                });
        assertThatThrownBy(() -> get("/v1/queues", "wrong-token-123"))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(401));
    }

    /** An implicit queue's only flavour: unlimited borrowing and lending are shown as null, not left out. */
    private static Map<String, Object> flavour(String name, int nominal, int used) {
        Map<String, Object> f = new java.util.LinkedHashMap<>();
        f.put("flavour", name);
        f.put("nominal", nominal);
        f.put("used", used);
        f.put("borrowed", 0);
        f.put("lent", 0);
        f.put("borrowingLimit", null);
        f.put("lendingLimit", null);
        return f;
    }

    @Test
    void aTenantWithoutPendingJobsGetsEmptyListsAndNullFieldsRatherThanMissingOnes() throws Exception {
        String pending = http.toBlocking().retrieve(HttpRequest.GET("/v1/queues/" + other + "/pending")
                .bearerAuth(other + "-token"), String.class);
        assertThat(json.readValue(pending, Argument.mapOf(String.class, Object.class)))
                .containsEntry("queue", other).containsEntry("pending", List.of());
        String queues = http.toBlocking().retrieve(HttpRequest.GET("/v1/queues").bearerAuth(other + "-token"),
                String.class);
        assertThat(queues).contains("\"cohort\":null").contains("\"borrowingLimit\":null");
    }

    @Test
    void whatTheAdminGetReturnsIsAcceptedUnchangedByPutAndTheImplicitCatalogIsPublished() throws Exception {
        String status = http.toBlocking().retrieve(HttpRequest.GET("/v1/admin/queue-config")
                .bearerAuth("admin-token-1"), String.class);
        Map<String, Object> before = asMap(json.readValue(status, Argument.mapOf(String.class, Object.class))
                .get("current"));
        assertThat(before).containsEntry("source", "implicit");

        // the whole JSON answer, as it came
        assertThat(http.toBlocking().exchange(HttpRequest.PUT("/v1/admin/queue-config", status)
                .contentType("application/json").bearerAuth("admin-token-1"), String.class).code()).isEqualTo(200);
        Map<String, Object> after = asMap(get("/v1/admin/queue-config", "admin-token-1").get("current"));
        assertThat(after).containsEntry("source", "admin").containsEntry("yaml", before.get("yaml"))
                .containsEntry("sha256", before.get("sha256"))
                .containsEntry("version", ((Number) before.get("version")).intValue() + 1);

        // the YAML form of the same, as PUT takes it
        String yaml = http.toBlocking().retrieve(HttpRequest.GET("/v1/admin/queue-config")
                .accept("application/yaml").bearerAuth("admin-token-1"), String.class);
        assertThat(yaml).isEqualTo(before.get("yaml"));
        assertThat(http.toBlocking().exchange(HttpRequest.PUT("/v1/admin/queue-config", yaml)
                .contentType("application/yaml").bearerAuth("admin-token-1"), String.class).code()).isEqualTo(200);

        // the quotas still hold: the tenant keeps its 8 GPUs, the others the default
        assertThat((List<?>) get("/v1/queues", tenant + "-token").get("queues")).singleElement()
                .satisfies(row -> assertThat(asMap(row)).containsEntry("quotaGpus", 8));
        try (io.gantry.testkit.TopicClient topics = new io.gantry.testkit.TopicClient(
                EmbeddedKafka.shared().bootstrapServers())) {
            assertThat(topics.readAll(Topics.QUEUE_CONFIG_EVENTS)).last().satisfies(e -> {
                io.gantry.events.QueueConfigApplied a = (io.gantry.events.QueueConfigApplied) e.getPayload();
                assertThat(a.getQueues()).as("implicit: every tenant has one queue named after it").isNull();
                assertThat(a.getPriorityClasses()).containsExactly("normal");
            });
        }
    }

    private Map<String, Object> get(String path, String token) throws IOException {
        String body = http.toBlocking().retrieve(HttpRequest.GET(path).bearerAuth(token), String.class);
        return json.readValue(body, Argument.mapOf(String.class, Object.class));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    private static String shortId() {
        return UUID.randomUUID().toString().substring(0, 8);
    }
}
