package io.gantry.billing;

import io.gantry.testkit.TopicClient;
import io.gantry.billing.db.LedgerRepository;
import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.UsageEvent;
import io.gantry.events.UsageRecorded;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BillingIntegrationTest implements TestPropertyProvider {
    private static final String VISION = "vision-token-123";
    private static final String NLP = "nlp-token-12345";
    private static final String ADMIN = "admin-token-123";
    private static final Instant GRANTED = Instant.parse("2026-03-01T10:00:00Z");
    private static final Duration AWAIT = Duration.ofSeconds(60);

    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());
    private final Map<String, String> properties = new HashMap<>();

    @Inject
    ApplicationContext context;

    @Inject
    @Client("/")
    HttpClient http;

    @Inject
    LedgerRepository ledger;

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            properties.putAll(BillingStack.properties(VISION, NLP, ADMIN));
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    @Order(1)
    void aReleasedAllocationBecomesOneLedgerRowPerNodeAndUsageRecordedEvents() {
        String job = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, "vision", "alloc-" + job,
                GRANTED, GRANTED.plusMillis(90_001), node("n1", "H100", 0, 1), node("n2", "H100", 0, 1, 2, 3)));

        await().atMost(AWAIT).until(() -> ledger.countByJobId(job) == 2);
        List<Map<String, Object>> rows = entries(job, VISION);
        assertThat(rows).extracting(r -> r.get("entryId"))
                .containsExactly("alloc-" + job + "/n1", "alloc-" + job + "/n2");
        assertThat(rows).extracting(r -> ((Number) r.get("gpuMillis")).longValue()).containsExactly(180_002L, 360_004L);
        assertThat(rows.get(1)).containsEntry("gpuSeconds", "360.004").containsEntry("gpuCount", 4);

        List<UsageEvent> events = await().atMost(AWAIT).until(() -> usageEvents(job), e -> e.size() == 2);
        UsageRecorded first = (UsageRecorded) events.get(0).getPayload();
        assertThat(events.get(0).getTenant()).isEqualTo("vision");
        assertThat(first.getEntryId()).isEqualTo("alloc-" + job + "/n1");
        assertThat(first.getGpuMillis()).isEqualTo(180_002L);
        assertThat(first.getDurationMillis()).isEqualTo(90_001L);
        assertThat(first.getStartedAt()).isEqualTo(GRANTED);
        assertThat(events.get(0).getEventId())
                .isEqualTo(UUID.nameUUIDFromBytes(("billing.usage-recorded/" + first.getEntryId())
                        .getBytes(StandardCharsets.UTF_8)).toString());
    }

    @Test
    @Order(1)
    void aJobsRowsComeInTheOrderItsRunsHeldTheGpus() {
        String job = "job-" + UUID.randomUUID();
        // entry ids sort the other way round: "a-..." is the second run's
        AllocationEvent first = released(job, "vision", "b-" + job, 1, GRANTED, GRANTED.plusSeconds(10),
                node("n1", "H100", 0));
        AllocationEvent second = released(job, "vision", "a-" + job, 2, GRANTED.plusSeconds(20),
                GRANTED.plusSeconds(30), node("n1", "H100", 0));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, first);
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, second);

        await().atMost(AWAIT).until(() -> ledger.countByJobId(job) == 2);
        assertThat(entries(job, VISION)).extracting(r -> ((Number) r.get("attempt")).intValue()).containsExactly(1, 2);
    }

    @Test
    @Order(1)
    void aGpuShareIsBilledAsItsThousandthsOfAGpuForTheHeldTime() {
        String job = "job-" + UUID.randomUUID();
        TaskPlacement half = TaskPlacement.newBuilder(node("n1", "H100")).setGpuShares(List.of(
                io.gantry.events.GpuShare.newBuilder().setIndex(3).setMilli(500).setMemoryMiB(40_960).build())).build();
        TaskPlacement mig = TaskPlacement.newBuilder(node("n1", "H100")).setReplica(1).setGpuShares(List.of(
                io.gantry.events.GpuShare.newBuilder().setIndex(4).setMilli(142).setMemoryMiB(10_240)
                        .setMigProfile("1g.10gb").setMigSlice(0).build())).build();

        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, "vision", "alloc-" + job,
                GRANTED, GRANTED.plusMillis(3), half, mig));

        await().atMost(AWAIT).until(() -> ledger.countByJobId(job) == 1);
        assertThat(entries(job, VISION)).singleElement().satisfies(r -> assertThat(r)
                .containsEntry("gpuCount", 0).containsEntry("gpuMilli", 642).containsEntry("gpuMicros", 1_926)
                .containsEntry("gpuMillis", 1).containsEntry("gpuSeconds", "0.001926").containsEntry("gpuModel", "H100"));
    }

    @Test
    @Order(1)
    @SuppressWarnings("unchecked")
    void utilisationWindowsShowHeldVersusUsedPerTenantAndTheIdleRunsStillHeld() {
        String busy = "util-busy-" + UUID.randomUUID();
        String idle = "util-idle-" + UUID.randomUUID();
        Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        for (String job : List.of(busy, idle)) {
            kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(now)
                    .setPayload(io.gantry.events.AllocationGranted.newBuilder().setAllocationId("alloc-" + job)
                            .setTenant("nlp").setAttempt(1).setGrantedAt(now.minusSeconds(3600)).setBackend("simulated")
                            .setPlacements(List.of(node("n1", "H100", 0, 1))).build())
                    .build());
        }
        utilisation(busy, now.minusSeconds(600), now.minusSeconds(300), 2000, 1500, null);
        utilisation(idle, now.minusSeconds(600), now.minusSeconds(300), 2000, 0, now.minusSeconds(2400));
        utilisation(idle, now.minusSeconds(600), now.minusSeconds(300), 2000, 0, now.minusSeconds(2400)); // again

        String window = "?from=" + now.minusSeconds(3600) + "&to=" + now.plusSeconds(60);
        // both runs' samples are consumed one after the other: wait for the second, then check every figure
        Map<String, Object> report = await().atMost(AWAIT).until(() -> get("/v1/finops/utilisation" + window, NLP),
                r -> ((List<Map<String, Object>>) r.get("tenants")).stream()
                        .anyMatch(t -> "1200.000".equals(t.get("gpuSecondsSampled"))));
        assertThat((List<Map<String, Object>>) report.get("tenants")).singleElement().satisfies(t -> assertThat(t)
                .containsEntry("tenant", "nlp").containsEntry("gpuSecondsSampled", "1200.000")
                .containsEntry("gpuSecondsUsed", "450.000").containsEntry("usedPercent", "37.50"));
        assertThat((List<?>) get("/v1/finops/utilisation" + window, VISION).get("tenants")).isEmpty();

        List<Map<String, Object>> idleRuns = http.toBlocking().retrieve(HttpRequest.GET("/v1/finops/idle?minIdle=PT30M")
                .bearerAuth(NLP), Argument.listOf(Argument.mapOf(String.class, Object.class)));
        assertThat(idleRuns).singleElement().satisfies(i -> assertThat(i).containsEntry("jobId", idle)
                .containsEntry("gpusHeld", "2.000").containsEntry("gpusUsed", "0.000"));
        assertThat(http.toBlocking().retrieve(HttpRequest.GET("/v1/finops/idle?minIdle=PT1H").bearerAuth(NLP),
                Argument.listOf(Argument.mapOf(String.class, Object.class)))).isEmpty();
        assertProblem(() -> get("/v1/finops/idle?minIdle=soon", NLP), 400, "minIdle");
        assertProblem(() -> get("/v1/finops/utilisation?tenant=vision", NLP), 403, "tenant");

        // the idle run ends: it is no longer an idle allocation, its windows still count as held and unused
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, idle, released(idle, "nlp", "alloc-" + idle,
                now.minusSeconds(3600), now, node("n1", "H100", 0, 1)));
        await().atMost(AWAIT).until(() -> http.toBlocking().retrieve(HttpRequest.GET("/v1/finops/idle")
                .bearerAuth(NLP), Argument.listOf(Argument.mapOf(String.class, Object.class))).isEmpty());
    }

    private void utilisation(String job, Instant from, Instant to, long held, long used, Instant idleSince) {
        kafka.send(Topics.PLACEMENT_UTILISATION_EVENTS, job, io.gantry.events.UtilisationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(to)
                .setPayload(io.gantry.events.RunUtilisationSampled.newBuilder().setTenant("nlp").setAttempt(1)
                        .setAllocationId("alloc-" + job).setWindowFrom(from).setWindowTo(to).setHeldGpuMilli(held)
                        .setUsedGpuMilli(used).setSamples(30).setIdleSince(idleSince).build())
                .build());
    }

    @Test
    @Order(2)
    void aTenantSeesOnlyItsOwnUsageAndAnAdminSeesEveryone() {
        String visionJob = "job-" + UUID.randomUUID();
        String nlpJob = "job-" + UUID.randomUUID();
        Instant t = Instant.parse("2030-01-01T00:00:00Z");
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, visionJob, released(visionJob, "vision", "a-" + visionJob,
                t, t.plusSeconds(10), node("n1", "A100", 0)));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, nlpJob, released(nlpJob, "nlp", "a-" + nlpJob,
                t, t.plusSeconds(20), node("n1", "A100", 1)));
        await().atMost(AWAIT).until(() -> ledger.countByJobId(visionJob) == 1 && ledger.countByJobId(nlpJob) == 1);

        String window = "?from=2030-01-01T00:00:05Z&to=2030-01-02T00:00:00Z";
        Map<String, Object> own = get("/v1/usage" + window, VISION);
        assertThat(rows(own)).containsExactly(
                Map.of("tenant", "vision", "gpuModel", "A100", "gpuSeconds", "5.000", "gpuMillis", 5000, "entries", 1,
                        "gpuMicros", 5_000_000));
        assertThat(own).containsEntry("totalGpuSeconds", "5.000").containsEntry("from", "2030-01-01T00:00:05Z");

        Map<String, Object> all = get("/v1/usage" + window, ADMIN);
        assertThat(rows(all)).extracting(r -> r.get("tenant")).containsExactly("nlp", "vision");
        assertThat(all).containsEntry("totalGpuSeconds", "20.000");
        assertThat(rows(get("/v1/usage" + window + "&tenant=nlp", ADMIN)))
                .extracting(r -> r.get("gpuSeconds")).containsExactly("15.000");

        assertProblem(() -> get("/v1/usage" + window + "&tenant=nlp", VISION), 403, "tenant");
        assertThat(entries(nlpJob, VISION)).isEmpty();
        assertThat(entries(nlpJob, ADMIN)).hasSize(1);
    }

    @Test
    @Order(3)
    void badQueryParametersAreProblemsNamingTheField() {
        assertProblem(() -> get("/v1/usage?from=yesterday", VISION), 400, "from");
        assertProblem(() -> get("/v1/usage?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z", VISION), 400, "to");
        assertProblem(() -> get("/v1/usage/entries", VISION), 400, "jobId");
        assertProblem(() -> get("/v1/usage", null), 401, null);
    }

    /** Queries a careless or hostile client sends: each is a 400 problem naming the field, never a 500. */
    @ParameterizedTest(name = "refuses {0}")
    @CsvSource(delimiter = '|', value = {
            "a NUL job id                       | /v1/usage/entries?jobId=%00                          | jobId",
            "a job id of 65 characters          | /v1/usage/entries?jobId=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | jobId",
            "a start a billion years ago        | /v1/usage?from=-1000000000-01-01T00:00:00Z           | from",
            "a start before the year 1          | /v1/usage?from=-4714-11-24T00:00:00Z                 | from",
            "an end after the year 9999         | /v1/usage?to=%2B294277-01-01T00:00:00Z               | to",
            "a NUL tenant                       | /v1/usage?tenant=%00                                 | tenant"})
    @Order(3)
    void hostileQueriesAreProblemsNamingTheField(String description, String path, String field) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(context.getBean(EmbeddedServer.class).getURL()
                                + path.trim())).header("Authorization", "Bearer " + ADMIN).GET().build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
                t -> assertThat(t).startsWith("application/problem+json"));
        assertThat(r.body()).contains("\"field\":\"" + field.trim() + "\"");
    }

    /**
     * Billing writes each poll's releases in one transaction; a release PostgreSQL refuses for its data (a NUL in a
     * node id: text cannot hold it) must not stop the ledger nor take the releases polled with it down.
     */
    @Test
    @Order(4)
    void aReleaseTheDatabaseRefusesGoesToTheDeadLetterAloneAndTheReleasesAroundItAreBilled() {
        String before = "job-" + UUID.randomUUID();
        String refused = "job-" + UUID.randomUUID();
        String after = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, before, released(before, "vision", "a-" + before,
                GRANTED, GRANTED.plusSeconds(1), node("n1", "H100", 0)));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, refused, released(refused, "vision", "a-" + refused,
                GRANTED, GRANTED.plusSeconds(1), node("n\u00001", "H100", 0)));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, after, released(after, "vision", "a-" + after,
                GRANTED, GRANTED.plusSeconds(1), node("n1", "H100", 0)));

        await().atMost(AWAIT).until(() -> ledger.countByJobId(before) == 1 && ledger.countByJobId(after) == 1);
        await().atMost(AWAIT).until(() -> kafka.readAllRaw(Topics.deadLetter(Service.BILLING)).stream()
                .anyMatch(r -> refused.equals(r.key())));
        assertThat(ledger.countByJobId(refused)).isZero();
        assertThat(kafka.readAllRaw(Topics.deadLetter(Service.BILLING))).noneMatch(r -> before.equals(r.key())
                || after.equals(r.key()));
    }

    @Test
    @Order(4)
    void aPoisonRecordGoesToTheDeadLetterTopicAndBillingGoesOn() {
        String garbage = "poison-" + UUID.randomUUID();
        kafka.sendRaw(Topics.PLACEMENT_ALLOCATION_EVENTS, garbage, "not avro".getBytes(StandardCharsets.UTF_8));
        String backwards = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, backwards, released(backwards, "vision", "a-" + backwards,
                GRANTED, GRANTED.minusSeconds(1), node("n1", "H100", 0)));
        String good = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, good, released(good, "vision", "a-" + good,
                GRANTED, GRANTED.plusSeconds(1), node("n1", "H100", 0)));

        await().atMost(AWAIT).until(() -> ledger.countByJobId(good) == 1);
        await().atMost(AWAIT).until(() -> kafka.readAllRaw(Topics.deadLetter(Service.BILLING)).stream()
                .map(r -> r.key()).toList().containsAll(List.of(garbage, backwards)));
        assertThat(ledger.countByJobId(backwards)).isZero();
    }

    @Test
    @Order(5)
    void aRedeliveredReleaseAndARestartNeitherDuplicateRowsNorChangeTheTotal() throws Exception {
        String job = "job-" + UUID.randomUUID();
        Instant t = Instant.parse("2031-06-01T00:00:00Z");
        AllocationEvent release = released(job, "vision", "a-" + job, t, t.plusMillis(1_500),
                node("n1", "H100", 0, 1), node("n2", "H100", 0));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, release);
        await().atMost(AWAIT).until(() -> ledger.countByJobId(job) == 2);
        String window = "?from=2031-06-01T00:00:00Z&to=2031-06-02T00:00:00Z";
        Map<String, Object> before = get("/v1/usage" + window, VISION);
        assertThat(before).containsEntry("totalGpuSeconds", "4.500");

        // the same event again, as a redelivery would bring it; a marker after it shows it was handled
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, release);
        String marker = sendMarker();
        await().atMost(AWAIT).until(() -> ledger.countByJobId(marker) == 1);
        assertThat(ledger.countByJobId(job)).isEqualTo(2);
        List<UsageEvent> republished = usageEvents(job);
        assertThat(republished).hasSize(4);
        assertThat(republished.stream().map(UsageEvent::getEventId).distinct()).hasSize(2);

        // restart: stop this context's processor, rewind its offsets so every release is redelivered, start anew
        context.getBean(BillingProcessor.class).close();
        rewindBillingGroup();
        try (ApplicationContext restarted = ApplicationContext.run(EmbeddedServer.class, new HashMap<String, Object>(getProperties()))
                .getApplicationContext()) {
            LedgerRepository restartedLedger = restarted.getBean(LedgerRepository.class);
            String after = sendMarker();
            await().atMost(AWAIT).until(() -> restartedLedger.countByJobId(after) == 1);
            assertThat(restartedLedger.countByJobId(job)).isEqualTo(2);
            assertThat(get("/v1/usage" + window, VISION)).isEqualTo(before);
            assertThat(usageEvents(job).stream().map(UsageEvent::getEventId).distinct()).hasSize(2);
        }
    }

    private String sendMarker() {
        String marker = "marker-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, marker, released(marker, "ops", "a-" + marker,
                GRANTED, GRANTED, node("n9", null)));
        return marker;
    }

    private void rewindBillingGroup() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                EmbeddedKafka.shared().bootstrapServers()))) {
            TopicPartition tp = new TopicPartition(Topics.PLACEMENT_ALLOCATION_EVENTS.name(), 0);
            // the closed consumer has left the group; until the broker agrees, the group is not empty
            await().atMost(AWAIT).ignoreExceptions().until(() -> {
                admin.alterConsumerGroupOffsets("gantry-billing", Map.of(tp, new OffsetAndMetadata(0))).all().get();
                return true;
            });
        }
    }

    private Map<String, Object> get(String uri, String token) {
        HttpRequest<?> request = HttpRequest.GET(uri);
        if (token != null) {
            request = HttpRequest.GET(uri).bearerAuth(token);
        }
        return http.toBlocking().retrieve(request, Argument.mapOf(String.class, Object.class));
    }

    private List<Map<String, Object>> entries(String job, String token) {
        return http.toBlocking().retrieve(HttpRequest.GET("/v1/usage/entries?jobId=" + job).bearerAuth(token),
                Argument.listOf(Argument.mapOf(String.class, Object.class)));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rows(Map<String, Object> usage) {
        return (List<Map<String, Object>>) usage.get("rows");
    }

    @SuppressWarnings("unchecked")
    private static void assertProblem(Runnable call, int status, String field) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(HttpClientResponseException.class, e -> {
            HttpResponse<?> response = e.getResponse();
            assertThat(response.code()).isEqualTo(status);
            assertThat(response.getContentType()).hasValueSatisfying(
                    t -> assertThat(t.toString()).isEqualTo("application/problem+json"));
            if (field != null) {
                Map<String, Object> body = response.getBody(Argument.mapOf(String.class, Object.class)).orElseThrow();
                assertThat((List<Map<String, Object>>) body.get("errors"))
                        .extracting(m -> m.get("field")).contains(field);
            }
        });
    }

    private List<UsageEvent> usageEvents(String job) {
        return kafka.readAll(Topics.BILLING_USAGE_EVENTS).stream()
                .filter(e -> job.equals(((UsageRecorded) e.getPayload()).getJobId())).toList();
    }

    private static TaskPlacement node(String node, String model, Integer... gpus) {
        return TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(node).setGpuModel(model)
                .setGpuIndices(List.of(gpus)).setCpuMillis(1000).setMemoryMiB(1024).build();
    }

    private static AllocationEvent released(String job, String tenant, String allocationId, Instant granted,
                                            Instant releasedAt, TaskPlacement... placements) {
        return released(job, tenant, allocationId, 1, granted, releasedAt, placements);
    }

    private static AllocationEvent released(String job, String tenant, String allocationId, int attempt,
                                            Instant granted, Instant releasedAt, TaskPlacement... placements) {
        return AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job)
                .setOccurredAt(releasedAt)
                .setPayload(AllocationReleased.newBuilder().setAllocationId(allocationId).setTenant(tenant)
                        .setAttempt(attempt).setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(granted)
                        .setReleasedAt(releasedAt).setPlacements(List.of(placements)).setBackend("simulated")
                        .build())
                .build();
    }
}
