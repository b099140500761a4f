package io.gantry.admission;

import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.GpuDevice;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobQueued;
import io.gantry.events.ReleaseReason;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.JobWaiting;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementConfigApplied;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueEntry;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.events.WaitReason;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The admission service against the real broker and a real PostgreSQL: the API a tenant uses, the event it
 * publishes, and the read model fed by the other services' topics (which this test writes itself).
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdmissionIntegrationTest implements TestPropertyProvider {
    private static final String VISION = "vision-token-123";
    private static final String AUDIO = "audio-token-123";
    private static final String ADMIN = "ops-admin-token";
    private static final String NODE = "it-node-" + UUID.randomUUID();
    private static final String NODE_2 = "it-node-2-" + UUID.randomUUID();

    @Inject
    EmbeddedServer server;
    @Inject
    JsonMapper json;
    @Inject
    AdmissionProcessor processor;
    @Inject
    io.gantry.admission.db.JobStore jobStore;
    @Inject
    io.micronaut.transaction.TransactionOperations<java.sql.Connection> tx;

    private final HttpClient http = HttpClient.newHttpClient();

    @Override
    public Map<String, String> getProperties() {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        // registered before the service starts, so the service must find it by restoring the node topic
        for (String node : List.of(NODE, NODE_2)) {
            send(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setNodeId(node).setOccurredAt(Instant.now())
                    .setPayload(NodeRegistered.newBuilder()
                            .setGpus(IntStream.range(0, 8).mapToObj(i -> GpuDevice.newBuilder().setIndex(i)
                                    .setModel("H100").setMemoryMiB(81920).build()).toList())
                            .setCpuMillis(128_000).setMemoryMiB(1_048_576).setLabels(Map.of()).setBackend("simulated")
                            .build())
                    .build());
        }
        // the queue's and placement's configurations, as they publish them: restored at start
        send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", QueueConfigEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setOccurredAt(Instant.now())
                .setPayload(QueueConfigApplied.newBuilder().setVersion(1).setSource("admin").setAppliedBy("ops")
                        .setSha256("0").setYaml("# test")
                        .setQueues(List.of(new QueueEntry("vision", "vision"), new QueueEntry("vision-batch", "vision"),
                                new QueueEntry("audio", "audio"), new QueueEntry("ops", "ops")))
                        .setPriorityClasses(List.of("high", "normal")).build())
                .build());
        send(Topics.PLACEMENT_CONFIG_EVENTS, "placement-config", PlacementConfigEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setOccurredAt(Instant.now())
                .setPayload(new PlacementConfigApplied(Map.of("training", List.of("H100")),
                        Map.of("default", new io.gantry.events.PlacementPool("simulated"),
                                "k8s", new io.gantry.events.PlacementPool("kubernetes")))).build());
        Map<String, String> props = new HashMap<>(EmbeddedPostgres.shared().newDatasource("admission"));
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", "-1");
        props.put("gantry.auth.tokens-file", tokensFile().toString());
        return props;
    }

    @BeforeEach
    void serviceIsReady() throws InterruptedException {
        assertThat(processor.awaitReady(Duration.ofSeconds(60))).isTrue();
    }

    @Test
    void aSubmittedJobIsPublishedAndShowsAsSubmitted() throws Exception {
        Reply reply = post(VISION, spec("train-resnet", 8), null);

        assertThat(reply.status).isEqualTo(202);
        String jobId = (String) reply.body().get("jobId");
        assertThat(reply.body()).containsEntry("state", "SUBMITTED");
        assertThat(reply.header("Location")).contains("/v1/jobs/" + jobId);

        AdmissionJobEvent event = awaitRecord(Topics.ADMISSION_JOB_EVENTS, jobId,
                e -> e.getPayload() instanceof JobSubmitted);
        JobSubmitted submitted = (JobSubmitted) event.getPayload();
        assertThat(submitted.getTenant()).isEqualTo("vision");
        assertThat(submitted.getSpec().getName()).isEqualTo("train-resnet");
        TaskSpec task = submitted.getSpec().getTasks().get(0);
        assertThat(task.getGpus()).isEqualTo(8);
        assertThat(task.getCpuMillis()).isEqualTo(1500);
        assertThat(task.getReplicas()).isEqualTo(2);

        Reply job = get(VISION, "/v1/jobs/" + jobId);
        assertThat(job.status).isEqualTo(200);
        assertThat(job.body()).containsEntry("state", "SUBMITTED").containsEntry("tenant", "vision")
                .containsEntry("name", "train-resnet");
        assertThat(history(job)).containsExactly("JobSubmitted");
        assertThat(((Map<?, ?>) job.body().get("spec")).get("tasks").toString()).contains("cpus=1.5");
    }

    @Test
    void aJobsPlacementPolicyIsCarriedOntoTheSubmittedSpec() throws Exception {
        Reply reply = post(VISION, spec("spread-me", 8).replaceFirst("\\{\"name\"", "{\"placementPolicy\":\"SPREAD\",\"name\""),
                null);

        assertThat(reply.status).as(reply.raw).isEqualTo(202);
        String jobId = (String) reply.body().get("jobId");
        AdmissionJobEvent event = awaitRecord(Topics.ADMISSION_JOB_EVENTS, jobId,
                e -> e.getPayload() instanceof JobSubmitted);
        assertThat(((JobSubmitted) event.getPayload()).getSpec().getPlacementPolicy()).isEqualTo("spread");
    }

    @Test
    void anInvalidSpecIsRejectedNamingEveryBadFieldAndNothingIsPublished() throws Exception {
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);
        String bad = """
                {"name":"x","colour":"red","placementPolicy":"random",
                 "tasks":[{"name":"w","command":["python",""],"gpus":9,"gpuModel":"B200","cpus":200,
                           "memoryMiB":2000000}]}""";

        Reply reply = post(VISION, bad, null);

        assertThat(reply.status).isEqualTo(400);
        assertThat(reply.header("Content-Type")).contains("application/problem+json");
        assertThat(errorFields(reply)).containsExactlyInAnyOrder("colour", "placementPolicy", "tasks[0].command[1]",
                "tasks[0].gpus", "tasks[0].gpuModel", "tasks[0].cpus", "tasks[0].memoryMiB");
        assertThat(reply.raw).contains("no registered node has more than 8 GPUs",
                "no registered node has more than 128 CPUs on one NUMA socket",
                "no registered node has more than 1048576 MiB of memory");

        Reply unknownRoute = get(VISION, "/v1/no-such-thing");
        assertThat(unknownRoute.status).isEqualTo(404);
        assertThat(unknownRoute.header("Content-Type")).contains("application/problem+json");
        assertThat(unknownRoute.body()).as("no field of the request is wrong").doesNotContainKey("errors")
                .containsEntry("detail", "Page Not Found");

        Reply malformed = post(VISION, "{\"name\": ", null);
        assertThat(malformed.status).isEqualTo(400);
        assertThat(errorFields(malformed)).containsExactly("body");

        Reply tooLarge = post(VISION, "{\"name\":\"" + "x".repeat(70_000) + "\"}", null);
        assertThat(tooLarge.status).isEqualTo(413);
        assertThat(tooLarge.header("Content-Type")).contains("application/problem+json");

        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before);
    }

    @Test
    void aDryRunRunsEveryCheckOfASubmissionAndStoresAndPublishesNothing() throws Exception {
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);
        String key = "dry-" + UUID.randomUUID();
        HttpRequest.Builder ok = request(VISION, "/v1/jobs?dryRun=true").header("Content-Type", "application/json")
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(spec("would-run", 8)));
        Reply would = send(ok.build());
        assertThat(would.status).as(would.raw).isEqualTo(200);
        assertThat(would.body()).containsEntry("dryRun", true).containsEntry("tenant", "vision")
                .containsEntry("queue", "vision").containsEntry("heldByBudget", false).doesNotContainKey("jobId");

        // what only the API knows: the registered nodes' GPU models and sizes
        Reply refused = send(request(VISION, "/v1/jobs?dryRun=true").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"x\",\"tasks\":[{\"name\":"
                        + "\"w\",\"command\":[\"x\"],\"gpus\":9,\"gpuModel\":\"B200\"}]}")).build());
        assertThat(refused.status).as(refused.raw).isEqualTo(400);
        assertThat(refused.header("Content-Type")).contains("application/problem+json");
        assertThat(errorFields(refused)).containsExactlyInAnyOrder("tasks[0].gpus", "tasks[0].gpuModel");

        Reply badFlag = send(request(VISION, "/v1/jobs?dryRun=maybe").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(spec("x", 1))).build());
        assertThat(badFlag.status).isEqualTo(400);
        assertThat(errorFields(badFlag)).containsExactly("dryRun");

        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).as("nothing published").isEqualTo(before);
        assertThat(get(VISION, "/v1/jobs?limit=1000").raw).as("nothing stored").doesNotContain("would-run");
        // the key was not claimed: the same key submits for real afterwards
        Reply real = post(VISION, spec("would-run", 8), key);
        assertThat(real.status).as(real.raw).isEqualTo(202);
    }

    @Test
    void resubmittingWithTheSameIdempotencyKeyAnswersTheSameJobWithoutPublishingAgain() throws Exception {
        String key = "nightly-" + UUID.randomUUID();
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);

        Reply first = post(VISION, spec("nightly", 1), key);
        // the same spec spelled differently (defaults written out, other field order) is the same body
        Reply again = post(VISION, """
                {"tasks":[{"name":"worker","command":["python","train.py"],"gpus":1,"replicas":2,"cpus":1.5,
                 "memoryMiB":1024}],"priority":0,"name":"nightly"}""", key);

        assertThat(first.status).isEqualTo(202);
        assertThat(again.status).isEqualTo(202);
        assertThat(again.body().get("jobId")).isEqualTo(first.body().get("jobId"));
        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before + 1);

        Reply different = post(VISION, spec("nightly", 2), key);
        assertThat(different.status).isEqualTo(422);
        assertThat(errorFields(different)).containsExactly("Idempotency-Key");
        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before + 1);

        Reply otherTenant = post(AUDIO, spec("nightly", 1), key);
        assertThat(otherTenant.status).isEqualTo(202);
        assertThat(otherTenant.body().get("jobId")).isNotEqualTo(first.body().get("jobId"));
    }

    @Test
    void aSubmissionWhoseIdempotencyKeyCannotBeStoredGetsA503AndPublishesNothing() throws Exception {
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);
        sql("ALTER TABLE idempotency_keys RENAME TO idempotency_keys_away");
        Reply refused;
        try {
            refused = post(VISION, spec("while-the-store-is-down", 1), "down-" + UUID.randomUUID());
        } finally {
            sql("ALTER TABLE idempotency_keys_away RENAME TO idempotency_keys");
        }

        assertThat(refused.status).isEqualTo(503);
        assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
        assertThat(String.valueOf(refused.body().get("detail"))).contains("retry with the same Idempotency-Key");
        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before);
    }

    private void sql(String statement) {
        tx.executeWrite(status -> {
            try (java.sql.Statement s = status.getConnection().createStatement()) {
                s.execute(statement);
            }
            return null;
        });
    }

    @Test
    void aTenantCannotSeeAnotherTenantsJobButAnAdminCan() throws Exception {
        String jobId = submit(VISION, "private-job");

        assertThat(get(AUDIO, "/v1/jobs/" + jobId).status).isEqualTo(404);
        assertThat(delete(AUDIO, jobId).status).isEqualTo(404);
        assertThat(jobIds(get(AUDIO, "/v1/jobs"))).doesNotContain(jobId);
        assertThat(get(AUDIO, "/v1/jobs?tenant=vision").status).isEqualTo(403);

        assertThat(get(ADMIN, "/v1/jobs/" + jobId).status).isEqualTo(200);
        assertThat(jobIds(get(ADMIN, "/v1/jobs?tenant=vision"))).contains(jobId);
        assertThat(jobIds(get(VISION, "/v1/jobs"))).contains(jobId);

        assertThat(get(null, "/v1/jobs/" + jobId).status).isEqualTo(401);
    }

    @Test
    void eventsFromTheOtherServicesMoveTheJobAlong() throws Exception {
        String jobId = submit(VISION, "lifecycle");
        Instant t = Instant.now();

        sendQueue(jobId, t.plusMillis(10), JobQueued.newBuilder().setTenant("vision").setAttempt(1)
                .setSpec(avroSpec("lifecycle")).setSubmittedAt(t).setGpus(2).build());
        sendQueue(jobId, t.plusMillis(20), JobWaiting.newBuilder().setTenant("vision").setAttempt(1)
                .setReason(WaitReason.QUOTA).setMessage("vision uses 16 of 16 GPUs")
                .setQuotaWait(io.gantry.events.QuotaWait.OWN_QUOTA).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Reply job = get(VISION, "/v1/jobs/" + jobId);
            assertThat(job.body()).containsEntry("state", "QUEUED").containsEntry("waitReason", "QUOTA")
                    .containsEntry("waitMessage", "vision uses 16 of 16 GPUs").containsEntry("waitCause", "OWN_QUOTA")
                    .containsEntry("waitSince", t.plusMillis(20).truncatedTo(ChronoUnit.MILLIS).toString())
                    .containsEntry("attempt", 1);
        });
        assertThat(jobIds(get(VISION, "/v1/jobs?state=queued"))).contains(jobId);

        // the run start (placement's topic) is produced before the dispatch (queue's topic) it follows
        sendPlacement(jobId, t.plusMillis(40), JobRunStarted.newBuilder().setAllocationId("a1").setTenant("vision")
                .setAttempt(1).setStartedAt(t.plusMillis(40)).build());
        sendPlacement(jobId, t.plusMillis(35), AllocationGranted.newBuilder().setAllocationId("a1")
                .setTenant("vision").setAttempt(1).setGrantedAt(t.plusMillis(35)).setBackend("simulated")
                .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(NODE)
                        .setGpuModel("H100").setGpuIndices(List.of(0, 1)).setCpuMillis(1000).setMemoryMiB(1024)
                        .build()))
                .build());
        sendQueue(jobId, t.plusMillis(30), JobDispatched.newBuilder().setTenant("vision").setAttempt(1)
                .setSpec(avroSpec("lifecycle")).setGpus(2).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Reply job = get(VISION, "/v1/jobs/" + jobId);
            assertThat(job.body()).containsEntry("state", "RUNNING").containsEntry("waitReason", null);
            assertThat(job.body().get("placements").toString()).contains(NODE).contains("gpuIndices=[0, 1]");
            assertThat(job.body().get("pool")).as("granted before pools were named: the pool default").isEqualTo("default");
            assertThat(history(job)).containsExactly("JobSubmitted", "JobQueued", "JobWaiting", "JobDispatched",
                    "AllocationGranted", "JobRunStarted");
        });

        sendQueue(jobId, t.plusMillis(50), JobSucceeded.newBuilder().setTenant("vision").setAttempt(1).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(get(VISION, "/v1/jobs/" + jobId).body()).containsEntry("state", "SUCCEEDED"));

        Reply cancel = delete(VISION, jobId);
        assertThat(cancel.status).isEqualTo(409);
        assertThat(cancel.header("Content-Type")).contains("application/problem+json");
    }

    @Test
    void anotherTenantsJobNamedInAWaitIsHiddenFromTheTenantAndShownToAnAdmin() throws Exception {
        String mine = submit(VISION, "waits-for-quota");
        String theirs = submit(AUDIO, "starving");
        String sentence = "reserved for starving job " + theirs + " (after " + mine + ")";
        sendQueue(mine, Instant.now(), JobWaiting.newBuilder().setTenant("vision").setAttempt(1)
                .setReason(WaitReason.QUOTA).setMessage(sentence)
                .setQuotaWait(io.gantry.events.QuotaWait.HELD_FOR_STARVING_JOB).build());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(get(ADMIN, "/v1/jobs/" + mine).body())
                .containsEntry("waitMessage", sentence));
        assertThat(get(VISION, "/v1/jobs/" + mine).body()).containsEntry("waitMessage",
                "reserved for starving job (another tenant's) (after " + mine + ")");
        assertThat(get(VISION, "/v1/jobs?limit=1000").raw).doesNotContain(theirs);
    }

    @Test
    void cancellingAJobPublishesACancelRequest() throws Exception {
        String jobId = submit(VISION, "to-cancel");

        Reply reply = delete(VISION, jobId);

        assertThat(reply.status).isEqualTo(202);
        assertThat(reply.body()).containsEntry("jobId", jobId).containsEntry("state", "SUBMITTED");
        AdmissionJobEvent event = awaitRecord(Topics.ADMISSION_JOB_EVENTS, jobId,
                e -> e.getPayload() instanceof JobCancelRequested);
        assertThat(((JobCancelRequested) event.getPayload()).getRequestedBy()).isEqualTo("vision");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(history(get(VISION, "/v1/jobs/" + jobId))).contains("JobCancelRequested"));
        assertThat(delete(VISION, UUID.randomUUID().toString()).status).isEqualTo(404);
    }

    @Test
    void aJobMayDependOnlyOnItsTenantsJobsAndTheOwnerOrAnAdminSuspendsAndResumesIt() throws Exception {
        String prep = submit(VISION, "prep");
        String theirs = submit(AUDIO, "theirs");
        Reply refused = post(VISION, spec("train", 2).replace("\"tasks\"", "\"dependencies\":[{\"jobId\":\""
                + prep + "\"},{\"jobId\":\"" + theirs + "\"}],\"tasks\""), null);
        assertThat(refused.status).isEqualTo(400);
        assertThat(errorFields(refused)).containsExactly("dependencies[1].jobId");
        assertThat(refused.raw()).contains("no job " + theirs + " of yours").doesNotContain("audio");

        Reply accepted = post(VISION, spec("train", 2).replace("\"tasks\"", "\"dependencies\":[{\"jobId\":\""
                + prep + "\",\"condition\":\"afterok\"}],\"suspend\":true,\"tasks\""), null);
        assertThat(accepted.status).isEqualTo(202);
        String train = (String) accepted.body().get("jobId");
        AdmissionJobEvent submitted = awaitRecord(Topics.ADMISSION_JOB_EVENTS, train,
                e -> e.getPayload() instanceof io.gantry.events.JobSubmitted);
        io.gantry.events.JobSpec wire = ((io.gantry.events.JobSubmitted) submitted.getPayload()).getSpec();
        assertThat(wire.getDependencies()).extracting(d -> d.getJobId() + ":" + d.getCondition())
                .containsExactly(prep + ":AFTER_OK");
        assertThat(wire.getSuspend()).isTrue();

        assertThat(suspension(AUDIO, train, "suspend").status).as("another tenant").isEqualTo(404);
        Reply already = suspension(VISION, train, "suspend");
        assertThat(already.status).as("submitted suspended").isEqualTo(200);
        assertThat(already.body()).containsEntry("suspended", true);
        Reply resumed = suspension(VISION, train, "resume");
        assertThat(resumed.status).isEqualTo(202);
        assertThat(awaitRecord(Topics.ADMISSION_SUSPENSION_EVENTS, train,
                e -> e.getPayload() instanceof io.gantry.events.JobResumeRequested).getPayload())
                .isEqualTo(new io.gantry.events.JobResumeRequested("vision", "vision"));
        assertThat(suspension(ADMIN, train, "suspend").status).as("an admin").isEqualTo(202);
        Reply view = get(VISION, "/v1/jobs/" + train);
        assertThat(view.body()).containsEntry("suspended", true);
        assertThat(history(view)).contains("JobResumeRequested", "JobSuspendRequested");
        assertThat(suspension(VISION, "no-such-job", "resume").status).isEqualTo(404);
    }

    private Reply suspension(String token, String jobId, String action) throws Exception {
        return send(request(token, "/v1/jobs/" + jobId + "/" + action).POST(HttpRequest.BodyPublishers.noBody())
                .build());
    }

    @Test
    void aPoisonRecordGoesToTheDeadLetterTopicAndLaterEventsStillApply() throws Exception {
        String jobId = submit(VISION, "after-poison");
        byte[] garbage = ("not avro " + jobId).getBytes(StandardCharsets.UTF_8);
        sendRaw(Topics.QUEUE_JOB_EVENTS.name(), jobId, garbage);
        sendQueue(jobId, Instant.now(), JobQueued.newBuilder().setTenant("vision").setAttempt(1)
                .setSpec(avroSpec("after-poison")).setSubmittedAt(Instant.now()).setGpus(1).build());

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<ConsumerRecord<String, byte[]>> dead = readAll(Topics.deadLetter(Service.ADMISSION));
            assertThat(dead).anySatisfy(r -> {
                assertThat(r.key()).isEqualTo(jobId);
                assertThat(r.value()).isEqualTo(garbage);
                assertThat(new String(r.headers().lastHeader("gantry.source.topic").value(), StandardCharsets.UTF_8))
                        .isEqualTo(Topics.QUEUE_JOB_EVENTS.name());
            });
        });
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(get(VISION, "/v1/jobs/" + jobId).body()).containsEntry("state", "QUEUED"));
    }

    /**
     * A record that decodes and passes the handler's checks but that PostgreSQL refuses for good (a NUL character in
     * a job's name: PostgreSQL text cannot hold one) is written in one transaction with the rest of its poll. It must
     * not stop the read model: it goes to the dead letter alone, and the records polled with it are stored.
     */
    @Test
    void aRecordTheDatabaseRefusesGoesToTheDeadLetterAloneAndTheRecordsPolledWithItAreStored() throws Exception {
        String before = submit(VISION, "before-refused");
        String after = submit(VISION, "after-refused");
        String refused = "refused-" + UUID.randomUUID();
        Instant now = Instant.now();
        List<ProducerRecord<String, byte[]>> batch = new ArrayList<>();
        for (String[] job : new String[][]{{before, "before-refused"}, {refused, "bad\u0000name"},
                {after, "after-refused"}}) {
            QueueJobEvent queued = QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                    .setJobId(job[0]).setOccurredAt(now).setPayload(JobQueued.newBuilder().setTenant("vision")
                            .setAttempt(1).setSpec(avroSpec(job[1])).setSubmittedAt(now).setGpus(1).build())
                    .build();
            batch.add(new ProducerRecord<>(Topics.QUEUE_JOB_EVENTS.name(), job[0],
                    AvroWire.encode(Topics.QUEUE_JOB_EVENTS, queued)));
        }
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, EmbeddedKafka.shared().bootstrapServers(),
                ProducerConfig.LINGER_MS_CONFIG, 50), new StringSerializer(), new ByteArraySerializer())) {
            batch.forEach(producer::send);
            producer.flush();
        }

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(get(VISION, "/v1/jobs/" + before).body()).containsEntry("state", "QUEUED");
            assertThat(get(VISION, "/v1/jobs/" + after).body()).containsEntry("state", "QUEUED");
            assertThat(readAll(Topics.deadLetter(Service.ADMISSION))).anySatisfy(r -> {
                assertThat(r.key()).isEqualTo(refused);
                assertThat(new String(r.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                        .contains("0x00");
            });
        });
        assertThat(readAll(Topics.deadLetter(Service.ADMISSION))).filteredOn(r -> !refused.equals(r.key()))
                .noneSatisfy(r -> assertThat(r.key()).isIn(before, after));
        // and the loop goes on: a job submitted afterwards shows up as usual
        String later = submit(VISION, "later");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(get(VISION, "/v1/jobs/" + later).body()).containsEntry("state", "SUBMITTED"));
    }

    /**
     * The read-model consumer writes a poll's events in a few batched statements; what a job then shows must be what
     * writing its events one by one shows, and the same batch written again (a redelivery) must change nothing.
     */
    @Test
    void aJobsHistoryWrittenAsOneBatchShowsWhatWritingItEventByEventShows() {
        io.gantry.admission.db.JobStore store = jobStore;
        Instant t = Instant.parse("2026-03-01T10:00:00Z");
        java.util.function.Function<String, List<io.gantry.admission.kafka.JobEvent>> history = job -> List.of(
                io.gantry.admission.kafka.WireMapping.fromQueue(QueueJobEvent.newBuilder().setEventId(job + "-q")
                        .setJobId(job).setOccurredAt(t).setPayload(JobQueued.newBuilder().setTenant("vision")
                                .setAttempt(1).setSpec(avroSpec("batched")).setSubmittedAt(t).setGpus(2).build())
                        .build(), Topics.QUEUE_JOB_EVENTS.name()),
                io.gantry.admission.kafka.WireMapping.fromQueue(QueueJobEvent.newBuilder().setEventId(job + "-w")
                        .setJobId(job).setOccurredAt(t.plusSeconds(1)).setPayload(JobWaiting.newBuilder()
                                .setTenant("vision").setAttempt(1).setReason(WaitReason.CAPACITY)
                                .setMessage("needs 2 GPUs").build()).build(), Topics.QUEUE_JOB_EVENTS.name()),
                io.gantry.admission.kafka.WireMapping.fromQueue(QueueJobEvent.newBuilder().setEventId(job + "-d")
                        .setJobId(job).setOccurredAt(t.plusSeconds(2)).setPayload(JobDispatched.newBuilder()
                                .setTenant("vision").setAttempt(1).setSpec(avroSpec("batched")).setGpus(2).build())
                        .build(), Topics.QUEUE_JOB_EVENTS.name()),
                io.gantry.admission.kafka.WireMapping.fromQueue(QueueJobEvent.newBuilder().setEventId(job + "-s")
                        .setJobId(job).setOccurredAt(t.plusSeconds(3)).setPayload(JobSucceeded.newBuilder()
                                .setTenant("vision").setAttempt(1).build()).build(), Topics.QUEUE_JOB_EVENTS.name()));
        String oneByOne = "one-by-one-" + UUID.randomUUID();
        String batched = "batched-" + UUID.randomUUID();
        String other = "batched-other-" + UUID.randomUUID();
        history.apply(oneByOne).forEach(store::apply);
        List<io.gantry.admission.db.JobStore.Write> batch = new ArrayList<>();
        // two jobs' events interleaved, as a poll of several topics brings them
        List<io.gantry.admission.kafka.JobEvent> mine = history.apply(batched);
        List<io.gantry.admission.kafka.JobEvent> theirs = history.apply(other);
        for (int i = 0; i < mine.size(); i++) {
            batch.add(new io.gantry.admission.db.JobStore.Apply(mine.get(i)));
            batch.add(new io.gantry.admission.db.JobStore.Apply(theirs.get(i)));
        }
        store.writeAll(batch);
        io.gantry.admission.db.JobRecord expected = store.find(oneByOne).orElseThrow();
        for (String job : List.of(batched, other)) {
            io.gantry.admission.db.JobRecord got = store.find(job).orElseThrow();
            assertThat(got.status().state()).isEqualTo(io.gantry.admission.core.JobState.SUCCEEDED);
            // the same status but for the event ids, which name their job here
            assertThat(got.status().toString().replace(job, "JOB"))
                    .isEqualTo(expected.status().toString().replace(oneByOne, "JOB"));
            assertThat(got.name()).isEqualTo(expected.name());
            assertThat(got.spec()).isEqualTo(expected.spec());
            assertThat(got.submittedAt()).isEqualTo(expected.submittedAt());
            assertThat(got.updatedAt()).isEqualTo(expected.updatedAt());
            assertThat(store.history(job)).hasSameSizeAs(store.history(oneByOne)).hasSize(4);
        }
        store.writeAll(batch);
        assertThat(store.find(batched).orElseThrow().status().toString().replace(batched, "JOB"))
                .isEqualTo(expected.status().toString().replace(oneByOne, "JOB"));
        assertThat(store.history(batched)).hasSize(4);
    }

    @Test
    void aBadStateFilterIsRejected() throws Exception {
        Reply reply = get(VISION, "/v1/jobs?state=SLEEPING&limit=0");

        assertThat(reply.status).isEqualTo(400);
        assertThat(errorFields(reply)).containsExactlyInAnyOrder("state", "limit");
    }

    /** Hostile and careless requests: each gets a 4xx problem+json naming what was wrong, and nothing is published. */
    static Stream<Arguments> refusedRequests() {
        String uuid = UUID.randomUUID().toString();
        String task = "\"tasks\":[{\"name\":\"w\",\"command\":[\"x\"]}]";
        return Stream.of(
                request("a NUL in the job name", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\\u0000b\"," + task + "}", 400, "name"),
                request("a zero-width name", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"\\u200b\"," + task + "}", 400, "name"),
                request("the largest long as a time limit", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"timeLimitSeconds\":9223372036854775807," + task + "}", 400,
                        "timeLimitSeconds"),
                request("1e17 seconds as a time limit", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"timeLimitSeconds\":1e17," + task + "}", 400, "timeLimitSeconds"),
                request("trailing garbage after the JSON", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\"," + task + "} garbage", 400, "body"),
                request("a key given twice", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"name\":\"b\"," + task + "}", 400, "body"),
                request("no Content-Type", "POST", "/v1/jobs", null, "{\"name\":\"a\"," + task + "}", 415,
                        "Content-Type"),
                request("an empty Content-Type", "POST", "/v1/jobs", "", "{\"name\":\"a\"," + task + "}", 415,
                        "Content-Type"),
                request("a UTF-16 label on a UTF-8 body", "POST", "/v1/jobs", "application/json; charset=utf-16",
                        "{\"name\":\"a\"," + task + "}", 415, "Content-Type"),
                request("an unknown GPU tier", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"tasks\":[{\"name\":\"w\",\"command\":[\"x\"],\"gpus\":1,\"gpuTier\":\"nope\"}]}",
                        400, "tasks[0].gpuTier"),
                request("a pool placement does not have", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"pool\":\"tpu\"," + task + "}", 400, "pool"),
                request("an unknown priority class", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"priorityClass\":\"gold\"," + task + "}", 400, "priorityClass"),
                request("another tenant's queue", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"queue\":\"audio\"," + task + "}", 400, "queue"),
                request("a gang bigger than the whole cluster", "POST", "/v1/jobs", "application/json",
                        "{\"name\":\"a\",\"tasks\":[{\"name\":\"w\",\"replicas\":3,\"command\":[\"x\"],\"gpus\":8}]}",
                        400, "tasks"),
                request("a NUL as a job id", "GET", "/v1/jobs/%00", null, null, 400, "id"),
                request("a job id followed by a NUL", "GET", "/v1/jobs/" + uuid + "%00", null, null, 400, "id"),
                request("cancelling a NUL job id", "DELETE", "/v1/jobs/%00", null, null, 400, "id"),
                request("a cursor this API never gave", "GET", "/v1/jobs?cursor=bm90LWEtY3Vyc29y", null, null, 400,
                        "cursor"),
                request("a 6,000-character job id", "GET", "/v1/jobs/" + "a".repeat(6000), null, null, 414, "uri"));
    }

    private static Arguments request(String description, String method, String path, String contentType, String body,
                                     int status, String field) {
        return Arguments.of(description, method, path, contentType, body, status, field);
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refusedRequests")
    void refusesHostileInputWithAProblemNamingTheFieldAndPublishesNothing(String description, String method,
            String path, String contentType, String body, int status, String field) throws Exception {
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);
        HttpRequest.Builder b = request(VISION, path);
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));

        Reply reply = send(b.build());

        assertThat(reply.status).as(reply.raw).isEqualTo(status);
        assertThat(reply.header("Content-Type")).contains("application/problem+json");
        assertThat(errorFields(reply)).as(reply.raw).contains(field);
        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before);
    }

    @Test
    void answersAreNotCachedAndAnAuthorizationThatIsNotOneBearerTokenIsRefusedSayingWhy() throws Exception {
        Reply listed = get(VISION, "/v1/jobs");
        assertThat(listed.header("Cache-Control")).isEqualTo("no-store");
        Reply refused = get(null, "/v1/jobs");
        assertThat(refused.header("Cache-Control")).isEqualTo("no-store");

        Reply twice = send(request(null, "/v1/jobs").header("Authorization", "Bearer " + VISION)
                .header("Authorization", "Bearer " + ADMIN).GET().build());
        assertThat(twice.status).as(twice.raw).isEqualTo(400);
        assertThat(errorFields(twice)).containsExactly("Authorization");

        Reply basic = send(request(null, "/v1/jobs").header("Authorization", "Basic dXNlcjpwYXNz").GET().build());
        assertThat(basic.status).isEqualTo(401);
        assertThat(basic.raw).contains("only `Authorization: Bearer <token>` is accepted, not the Basic scheme");
    }

    @Test
    void headersLargerThanTheServerTakesAreRefusedNamingTheHeaders() throws Exception {
        Reply reply = send(request(null, "/v1/jobs").header("Authorization", "Bearer " + "a".repeat(20_000)).GET()
                .build());
        assertThat(reply.status).as(reply.raw).isEqualTo(431);
        assertThat(reply.header("Content-Type")).contains("application/problem+json");
        assertThat(errorFields(reply)).containsExactly("headers");

        // a body over the server's own limit is still the body's fault
        Reply huge = send(request(VISION, "/v1/jobs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + "x".repeat(11 * 1024 * 1024) + "\"}"))
                .build());
        assertThat(huge.status).as(huge.raw).isEqualTo(413);
        assertThat(errorFields(huge)).containsExactly("body");
    }

    @Test
    void anExhaustedBudgetRefusesNewJobsWithTheReasonOrAcceptsThemForTheQueueToHoldAndAWarningOnlyWarns() throws Exception {
        // the admin's own tenant (ops), so no other test's jobs meet these budgets
        budget("EXHAUSTED", "REJECT", 100);
        Reply refused = await().atMost(Duration.ofSeconds(30)).until(() -> post(ADMIN, spec("over-budget", 1), null),
                r -> r.status == 402);
        assertThat(refused.header("Content-Type")).contains("application/problem+json");
        assertThat(errorFields(refused)).containsExactly("tenant");
        assertThat(refused.raw).contains("exhausted").contains("spent 120.00 of 100.00 EUR");
        long before = endOffset(Topics.ADMISSION_JOB_EVENTS);
        assertThat(post(ADMIN, spec("over-budget-again", 1), null).status).isEqualTo(402);
        assertThat(endOffset(Topics.ADMISSION_JOB_EVENTS)).isEqualTo(before);

        budget("EXHAUSTED", "HOLD", 100);
        Reply held = await().atMost(Duration.ofSeconds(30)).until(() -> post(ADMIN, spec("held", 1), null),
                r -> r.status == 202 && r.header("Gantry-Budget-Hold") != null);
        assertThat(held.header("Gantry-Budget-Hold")).contains("accepted and held in its queue");
        assertThat(held.body()).containsEntry("state", "SUBMITTED");

        budget("WARNING", "REJECT", 80);
        Reply warned = await().atMost(Duration.ofSeconds(30)).until(() -> post(ADMIN, spec("warned", 1), null),
                r -> r.status == 202);
        assertThat(warned.header("Gantry-Budget-Warning")).contains("80%");

        budget("OK", "REJECT", 0);
        Reply fine = await().atMost(Duration.ofSeconds(30)).until(() -> post(ADMIN, spec("fine", 1), null),
                r -> r.status == 202 && r.header("Gantry-Budget-Warning") == null);
        assertThat(fine.body()).containsEntry("state", "SUBMITTED");
    }

    private static void budget(String state, String action, int threshold) {
        java.time.YearMonth month = java.time.YearMonth.now(java.time.ZoneOffset.UTC);
        send(Topics.BILLING_BUDGET_EVENTS, "ops", io.gantry.events.BudgetEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setTenant("ops").setOccurredAt(Instant.now())
                .setPayload(io.gantry.events.BudgetStatusChanged.newBuilder().setTenant("ops").setQueue(null)
                        .setMonth(month.toString())
                        .setPeriodFrom(month.atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant())
                        .setPeriodTo(month.plusMonths(1).atDay(1).atStartOfDay(java.time.ZoneOffset.UTC).toInstant())
                        .setCurrency("EUR").setLimit("100.00").setSpent(state.equals("EXHAUSTED") ? "120.00" : "80.00")
                        .setThresholdPercent(threshold).setState(io.gantry.events.BudgetState.valueOf(state))
                        .setAction(io.gantry.events.BudgetAction.valueOf(action)).build())
                .build());
    }

    @Test
    void aJobWithATimeLimitIsAnsweredWithItsCostEstimate() throws Exception {
        Instant from = Instant.parse("2025-01-01T00:00:00Z");
        send(Topics.BILLING_PRICE_EVENTS, "price-book", io.gantry.events.PriceEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setBook("price-book").setOccurredAt(Instant.now())
                .setPayload(io.gantry.events.PriceBookApplied.newBuilder().setVersion(7).setAppliedAt(Instant.now())
                        .setAppliedBy("ops").setCurrency("EUR")
                        .setGpuPrices(List.of(io.gantry.events.GpuPrice.newBuilder().setModel("H100").setTier(null)
                                .setPerGpuHour("2.50").setEffectiveFrom(from).build()))
                        .build())
                .build());
        String limited = "{\"name\":\"bounded\",\"timeLimitSeconds\":1800,"
                + "\"tasks\":[{\"name\":\"w\",\"command\":[\"x\"],\"gpus\":8,\"cpus\":1}]}";

        Reply reply = await().atMost(Duration.ofSeconds(30)).until(() -> post(VISION, limited, null),
                r -> r.status == 202 && r.body().containsKey("costEstimate"));

        @SuppressWarnings("unchecked")
        Map<String, Object> estimate = (Map<String, Object>) reply.body().get("costEstimate");
        assertThat(estimate).containsEntry("amount", "10.00").containsEntry("currency", "EUR")
                .containsEntry("priceBookVersion", 7);
        assertThat(post(VISION, spec("unbounded", 1), null).body()).doesNotContainKey("costEstimate");
    }

    @Test
    void whatTheConfigurationHasIsAccepted() throws Exception {
        Reply reply = post(VISION, """
                {"name":"configured","queue":"vision-batch","priorityClass":"high",
                 "tasks":[{"name":"w","command":["x"],"gpus":8,"replicas":2,"gpuTier":"training"}]}""", null);

        assertThat(reply.status).as(reply.raw).isEqualTo(202);
    }

    @Test
    void anIdempotentReplayAnswersWhatTheJobIsNow() throws Exception {
        String key = "replay-" + UUID.randomUUID();
        Reply first = post(VISION, spec("replayed", 1), key);
        String jobId = (String) first.body().get("jobId");
        sendQueue(jobId, Instant.now(), JobQueued.newBuilder().setTenant("vision").setAttempt(1)
                .setSpec(avroSpec("replayed")).setSubmittedAt(Instant.now()).setGpus(1).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> "QUEUED".equals(get(VISION, "/v1/jobs/" + jobId).body()
                .get("state")));

        Reply again = post(VISION, spec("replayed", 1), key);

        assertThat(again.status).isEqualTo(202);
        assertThat(again.body()).containsEntry("jobId", jobId).containsEntry("state", "QUEUED");
    }

    @Test
    void listingPagesThroughEveryJobWithACursorNewestFirst() throws Exception {
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Reply r = post(AUDIO, spec("paged-" + i, 1), null);
            mine.add((String) r.body().get("jobId"));
        }
        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            Reply page = get(AUDIO, "/v1/jobs?limit=2" + (cursor == null ? "" : "&cursor=" + cursor));
            List<String> ids = jobIds(page);
            assertThat(ids.size()).isLessThanOrEqualTo(2);
            seen.addAll(ids);
            cursor = (String) page.body().get("nextCursor");
            pages++;
        } while (cursor != null && pages < 1000);

        assertThat(seen).doesNotHaveDuplicates().containsAll(mine);
        List<String> newestFirst = new ArrayList<>(mine);
        java.util.Collections.reverse(newestFirst);
        assertThat(seen.stream().filter(mine::contains).toList()).isEqualTo(newestFirst);
    }

    @Test
    void emptyListsAreAnsweredAsEmptyArrays() throws Exception {
        Reply none = get(ADMIN, "/v1/jobs?tenant=nobody-" + UUID.randomUUID().toString().substring(0, 8));
        assertThat(none.raw).contains("\"jobs\":[]");
        assertThat(none.body()).doesNotContainKey("nextCursor");

        String jobId = submit(VISION, "not-placed");
        assertThat(get(VISION, "/v1/jobs/" + jobId).raw).contains("\"placements\":[]");
    }

    /** A client that stops sending in the middle of a request is cut off, not waited for. */
    @ParameterizedTest(name = "cuts off {0}")
    @MethodSource("stalledClients")
    void aStalledConnectionIsClosedWithinTheReadTimeout(String description, byte[] bytes) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            java.io.InputStream in = socket.getInputStream();
            try {
                while (in.read() >= 0) {
                    // a 4xx answer may come first; what matters is that the connection ends
                }
            } catch (java.net.SocketTimeoutException e) {
                throw new AssertionError("the connection was still open after 30 s", e);
            } catch (java.net.SocketException e) {
                // reset by the server: closed too
            }
        }
    }

    static Stream<Arguments> stalledClients() {
        return Stream.of(
                Arguments.of("a truncated body", ("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                        + VISION + "\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"name\":")
                        .getBytes(StandardCharsets.US_ASCII)),
                Arguments.of("TLS bytes on the plain port", new byte[]{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01,
                        (byte) 0xfc, 0x03, 0x03, 0x11, 0x22, 0x33}));
    }

    /**
     * A running task reports a checkpoint with its run's own token: accepted, published, shown on the job; every
     * other way in is refused and records nothing.
     */
    @Test
    void aRunReportsItsCheckpointsWithItsOwnTokenAndNothingElseCan() throws Exception {
        Running run = runningWithToken("ckpt", """
                {"dir":"/ckpt/resnet","intervalSeconds":1800}""");
        String token = run.token();
        String jobId = run.jobId();
        long before = endOffset(Topics.ADMISSION_CHECKPOINT_EVENTS);
        String report = """
                {"step":1200,"path":"/ckpt/resnet/step-1200.pt","sizeBytes":524288000,"saveSeconds":12.5}""";

        assertThat(postCheckpoint(VISION, jobId, report).status).as("a tenant token is not the run's").isEqualTo(403);
        assertThat(postCheckpoint(io.gantry.runtime.http.RunTokens.newToken(jobId, 2), jobId, report).status)
                .as("a newer run's token, its grant not heard of yet: retry later, nothing recorded").isEqualTo(503);
        assertThat(postCheckpoint(io.gantry.runtime.http.RunTokens.newToken("another-job", 1), jobId, report).status)
                .as("another job's run token").isEqualTo(403);
        assertThat(postCheckpoint("gtr_0123456789abcdef", jobId, report).status).as("a made-up token").isEqualTo(403);
        assertThat(postCheckpoint(token, "no-such-job", report).status).isEqualTo(403);
        Reply outside = postCheckpoint(token, jobId, """
                {"step":1,"path":"/tmp/elsewhere.pt"}""");
        assertThat(outside.status).isEqualTo(400);
        assertThat(errorFields(outside)).containsExactly("path");
        assertThat(get(token, "/v1/jobs/" + jobId).status).as("a run token reads nothing").isEqualTo(401);
        assertThat(endOffset(Topics.ADMISSION_CHECKPOINT_EVENTS)).isEqualTo(before);

        Reply accepted = postCheckpoint(token, jobId, report);

        assertThat(accepted.status).as(accepted.raw).isEqualTo(202);
        assertThat(accepted.body()).containsEntry("attempt", 1).containsEntry("step", 1200);
        io.gantry.events.CheckpointEvent event = awaitRecord(Topics.ADMISSION_CHECKPOINT_EVENTS, jobId, e -> true);
        io.gantry.events.CheckpointCommitted fact = (io.gantry.events.CheckpointCommitted) event.getPayload();
        assertThat(fact.getAttempt()).isEqualTo(1);
        assertThat(fact.getPath()).isEqualTo("/ckpt/resnet/step-1200.pt");
        assertThat(fact.getSaveMillis()).isEqualTo(12_500L);
        assertThat(fact.getTenant()).isEqualTo("vision");
        assertThat(get(VISION, "/v1/jobs/" + jobId).raw).contains("\"step\":1200", "\"path\":\"/ckpt/resnet/step-1200.pt\"");
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/checkpoints").raw).contains("\"step\":1200");
        assertThat(get(AUDIO, "/v1/jobs/" + jobId + "/checkpoints").status).isEqualTo(404);

        // the job runs again (attempt 2, a new token): the first run's token is stale now
        String second = io.gantry.runtime.http.RunTokens.newToken(jobId, 2);
        sendPlacement(jobId, Instant.now(), AllocationGranted.newBuilder().setAllocationId("a2-" + jobId)
                .setTenant("vision").setAttempt(2).setGrantedAt(Instant.now()).setBackend("local")
                .setRunTokenSha256(io.gantry.runtime.http.RunTokens.sha256(second))
                .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(NODE)
                        .setGpuModel("H100").setGpuIndices(List.of(0)).setCpuMillis(1000).setMemoryMiB(1024).build()))
                .build());
        await().atMost(Duration.ofSeconds(30)).until(() -> Integer.valueOf(2).equals(get(VISION, "/v1/jobs/" + jobId)
                .body().get("attempt")));
        assertThat(postCheckpoint(token, jobId, report).status).as("a stale run's token").isEqualTo(403);
        assertThat(postCheckpoint(second, jobId, """
                {"step":1300,"path":"/ckpt/resnet/step-1300.pt"}""").body()).containsEntry("attempt", 2);

        sendQueue(jobId, Instant.now(), JobSucceeded.newBuilder().setTenant("vision").setAttempt(2).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> "SUCCEEDED".equals(get(VISION, "/v1/jobs/" + jobId)
                .body().get("state")));
        assertThat(postCheckpoint(second, jobId, report).status).as("a finished run reports nothing").isEqualTo(409);
        assertThat(postCheckpoint(io.gantry.runtime.http.RunTokens.newToken(jobId, 3), jobId, report).status)
                .as("an unknown token once the job ended").isEqualTo(403);
    }

    /** A task may report before its run's start has reached the API: it is told to retry, then accepted. */
    @Test
    void aRunReportingBeforeItsGrantIsKnownIsAskedToRetryAndThenAccepted() throws Exception {
        Reply submitted = post(VISION, """
                {"name":"early","checkpoint":{"dir":"/ckpt/early"},
                 "tasks":[{"name":"worker","command":["python","train.py"],"gpus":1}]}""", null);
        String jobId = (String) submitted.body().get("jobId");
        String token = io.gantry.runtime.http.RunTokens.newToken(jobId, 1);
        String report = """
                {"step":10,"path":"/ckpt/early/step-10.pt"}""";

        Reply early = postCheckpoint(token, jobId, report);
        assertThat(early.status).as(early.raw).isEqualTo(503);

        grantWithToken(jobId, token, Instant.now());
        await().atMost(Duration.ofSeconds(30)).until(() -> postCheckpoint(token, jobId, report).status == 202);
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/checkpoints").raw).contains("\"step\":10");
    }

    /**
     * Placement asks a run to stop: the job shows the notice, and the run reads it with its own token (the Python
     * helper too) so it can checkpoint before the deadline; nobody else's token reads it, and the preemptor, another
     * tenant's job, is named only to an admin.
     */
    @Test
    void aRunBeingPreemptedReadsItsNoticeWithItsOwnTokenAndTheJobShowsIt() throws Exception {
        Instant t = Instant.now();
        Running run = runningWithToken("noticed", """
                {"dir":"/ckpt/n"}""");
        String token = run.token();
        String jobId = run.jobId();
        String preemptor = submit(AUDIO, "preemptor");
        assertThat(get(token, "/v1/jobs/" + jobId + "/preemption").body()).containsEntry("preempting", false)
                .containsEntry("attempt", 1).doesNotContainKey("deadline");

        Instant asked = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        send(Topics.PLACEMENT_STOP_EVENTS, jobId, io.gantry.events.StopEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(jobId).setOccurredAt(asked)
                .setPayload(io.gantry.events.RunStopRequested.newBuilder().setTenant("vision")
                        .setAllocationId("a-" + jobId).setAttempt(1).setReason(ReleaseReason.PREEMPTED)
                        .setMessage("queue vision reclaims 1 x H100 lent to research for job " + preemptor)
                        .setDeadline(asked.plusSeconds(120)).setGraceSeconds(120).build()).build());

        await().atMost(Duration.ofSeconds(30)).until(() -> get(VISION, "/v1/jobs/" + jobId).body()
                .get("preemption") != null);
        Reply own = get(token, "/v1/jobs/" + jobId + "/preemption");
        assertThat(own.status).as(own.raw).isEqualTo(200);
        assertThat(own.body()).containsEntry("preempting", true).containsEntry("reason", "PREEMPTED")
                .containsEntry("message", "queue vision reclaims 1 x H100 lent to research for job (another tenant's)")
                .containsEntry("deadline", asked.plusSeconds(120).toString());
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/preemption").raw).doesNotContain(preemptor);
        assertThat(get(ADMIN, "/v1/jobs/" + jobId + "/preemption").body()).containsEntry("message",
                "queue vision reclaims 1 x H100 lent to research for job " + preemptor);
        assertThat(((Number) own.body().get("secondsLeft")).longValue()).isBetween(1L, 120L);
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/preemption").body()).containsEntry("preempting", true);
        assertThat(get(VISION, "/v1/jobs/" + jobId).raw).contains("\"type\":\"RunStopRequested\"");
        assertThat(get(AUDIO, "/v1/jobs/" + jobId + "/preemption").status).isEqualTo(404);
        assertThat(get(token, "/v1/jobs/no-such-job/preemption").status).isEqualTo(403);
        assertThat(get(token, "/v1/jobs/" + jobId + "/checkpoints").status).as("a run token reads nothing else")
                .isEqualTo(401);
        if (python3() != null) {
            ProcessResult helper = helper(jobId, token, "--preemption");
            assertThat(helper.exit()).as(helper.output()).isZero();
            assertThat(helper.output()).contains("\"message\": \"queue vision reclaims 1 x H100 lent to research for job (another tenant's)\"");
        }

        // the queue puts the job back (attempt 2): the notice was the first run's
        sendQueue(jobId, Instant.now(), JobQueued.newBuilder().setTenant("vision").setAttempt(2)
                .setSpec(avroSpec("noticed")).setSubmittedAt(t).setGpus(1).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> get(VISION, "/v1/jobs/" + jobId).body()
                .get("preemption") == null);
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/preemption").body()).containsEntry("preempting", false);
        assertThat(get(token, "/v1/jobs/" + jobId + "/preemption").status).as("a stale run's token").isEqualTo(403);
    }

    /** A job of tenant vision with {@code checkpoint}, whose first run holds {@code token} and is running. */
    /** A job placement granted and started, and its run's token. */
    private record Running(String jobId, String token) {
    }

    private Running runningWithToken(String name, String checkpoint) throws Exception {
        Reply submitted = post(VISION, """
                {"name":"%s","checkpoint":%s,
                 "tasks":[{"name":"worker","command":["python","train.py"],"gpus":1}]}""".formatted(name, checkpoint),
                null);
        assertThat(submitted.status).as(submitted.raw).isEqualTo(202);
        String jobId = (String) submitted.body().get("jobId");
        String token = io.gantry.runtime.http.RunTokens.newToken(jobId, 1);
        Instant t = Instant.now();
        grantWithToken(jobId, token, t);
        sendPlacement(jobId, t.plusMillis(5), JobRunStarted.newBuilder().setAllocationId("a-" + jobId)
                .setTenant("vision").setAttempt(1).setStartedAt(t.plusMillis(5)).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> "RUNNING".equals(get(VISION, "/v1/jobs/" + jobId).body()
                .get("state")));
        return new Running(jobId, token);
    }

    /** Placement granted the job's first run, whose tasks hold {@code token}. */
    private static void grantWithToken(String jobId, String token, Instant at) {
        sendPlacement(jobId, at, AllocationGranted.newBuilder().setAllocationId("a-" + jobId).setTenant("vision")
                .setAttempt(1).setGrantedAt(at).setBackend("local")
                .setRunTokenSha256(io.gantry.runtime.http.RunTokens.sha256(token))
                .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(NODE)
                        .setGpuModel("H100").setGpuIndices(List.of(0)).setCpuMillis(1000).setMemoryMiB(1024).build()))
                .build());
    }

    private Reply postCheckpoint(String token, String jobId, String body) throws Exception {
        return send(request(token, "/v1/jobs/" + jobId + "/checkpoints").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    /** The standard-library Python helper that training code calls after saving, against the real API. */
    @Test
    void thePythonHelperReportsACheckpointAndShowsARefusalAsGantrysSentence() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(python3() != null,
                "python3 is not installed on this machine: the helper is not exercised");
        Reply submitted = post(VISION, """
                {"name":"py","checkpoint":{"dir":"/ckpt/py"},"tasks":[{"name":"worker","command":["x"],"gpus":1}]}""",
                null);
        String jobId = (String) submitted.body().get("jobId");
        String token = io.gantry.runtime.http.RunTokens.newToken(jobId, 1);
        grantWithToken(jobId, token, Instant.now());
        await().atMost(Duration.ofSeconds(30)).until(() -> "DISPATCHED".equals(get(VISION, "/v1/jobs/" + jobId)
                .body().get("state")) || "RUNNING".equals(get(VISION, "/v1/jobs/" + jobId).body().get("state")));

        ProcessResult ok = helper(jobId, token, "--step", "7", "--path", "/ckpt/py/step-7.pt", "--size-bytes", "10",
                "--save-seconds", "0.25");
        ProcessResult refused = helper(jobId, token, "--step", "8", "--path", "/elsewhere/step-8.pt");

        assertThat(ok.exit()).as(ok.output()).isZero();
        assertThat(ok.output()).contains("\"step\": 7");
        assertThat(get(VISION, "/v1/jobs/" + jobId + "/checkpoints").raw).contains("\"path\":\"/ckpt/py/step-7.pt\"");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.output()).contains("checkpoint refused (400)", "under the job's checkpoint directory /ckpt/py");
    }

    private record ProcessResult(int exit, String output) {
    }

    private ProcessResult helper(String jobId, String token, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(python3(), Path.of("../../tools/python/gantry_checkpoint.py")
                .toAbsolutePath().normalize().toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("GANTRY_API_URL", server.getURL().toString());
        pb.environment().put("GANTRY_JOB_ID", jobId);
        pb.environment().put("GANTRY_RUN_TOKEN", token);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        return new ProcessResult(p.exitValue(), output);
    }

    private static String python3() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, "python3");
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    private record Reply(int status, String raw, Map<String, Object> body, Map<String, List<String>> headers) {
        String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> String.join(",", e.getValue())).findFirst().orElse(null);
        }
    }

    private static String spec(String name, int gpus) {
        return """
                {"name":"%s","tasks":[{"name":"worker","replicas":2,"command":["python","train.py"],"gpus":%d,
                 "gpuModel":"H100","cpus":1.5}]}""".formatted(name, gpus).replace("\"gpuModel\":\"H100\",",
                gpus == 1 ? "" : "\"gpuModel\":\"H100\",");
    }

    private String submit(String token, String name) throws Exception {
        Reply reply = post(token, spec(name, 2), null);
        assertThat(reply.status).isEqualTo(202);
        return (String) reply.body().get("jobId");
    }

    private Reply post(String token, String body, String idempotencyKey) throws Exception {
        HttpRequest.Builder b = request(token, "/v1/jobs").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (idempotencyKey != null) {
            b.header("Idempotency-Key", idempotencyKey);
        }
        return send(b.build());
    }

    private Reply get(String token, String path) throws Exception {
        return send(request(token, path).GET().build());
    }

    private Reply delete(String token, String jobId) throws Exception {
        return send(request(token, "/v1/jobs/" + jobId).DELETE().build());
    }

    private HttpRequest.Builder request(String token, String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.getURL() + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private Reply send(HttpRequest request) throws Exception {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        Map<String, Object> body = r.body().isEmpty() ? Map.of()
                : json.readValue(r.body(), Argument.mapOf(String.class, Object.class));
        return new Reply(r.statusCode(), r.body(), body, r.headers().map());
    }

    @SuppressWarnings("unchecked")
    private static List<String> errorFields(Reply reply) {
        return ((List<Map<String, Object>>) reply.body().get("errors")).stream()
                .map(e -> (String) e.get("field")).toList();
    }

    @SuppressWarnings("unchecked")
    private static List<String> history(Reply job) {
        return ((List<Map<String, Object>>) job.body().get("history")).stream()
                .map(e -> (String) e.get("type")).toList();
    }

    @SuppressWarnings("unchecked")
    private static List<String> jobIds(Reply list) {
        assertThat(list.status).isEqualTo(200);
        return ((List<Map<String, Object>>) list.body().get("jobs")).stream()
                .map(e -> (String) e.get("jobId")).toList();
    }

    private static io.gantry.events.JobSpec avroSpec(String name) {
        return io.gantry.events.JobSpec.newBuilder().setName(name).setPriority(0).setTimeLimitSeconds(null)
                .setTasks(List.of(TaskSpec.newBuilder().setName("worker").setReplicas(1)
                        .setCommand(List.of("python", "train.py")).setGpus(2).setGpuModel(null).setCpuMillis(1000)
                        .setMemoryMiB(1024).setRunSeconds(null).build()))
                .build();
    }

    private static void sendQueue(String jobId, Instant at, Object payload) {
        send(Topics.QUEUE_JOB_EVENTS, jobId, QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setJobId(jobId).setOccurredAt(at).setPayload(payload).build());
    }

    private static void sendPlacement(String jobId, Instant at, Object payload) {
        send(Topics.PLACEMENT_ALLOCATION_EVENTS, jobId, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(jobId).setOccurredAt(at).setPayload(payload)
                .build());
    }

    private static <V> void send(Topic<V> topic, String key, V value) {
        sendRaw(topic.name(), key, AvroWire.encode(topic, value));
    }

    private static void sendRaw(String topic, String key, byte[] value) {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, EmbeddedKafka.shared().bootstrapServers()),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, key, value)).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static <V> V awaitRecord(Topic<V> topic, String key, java.util.function.Predicate<V> match) {
        List<V> found = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            found.clear();
            readAll(topic).stream().filter(r -> key.equals(r.key()))
                    .map(r -> AvroWire.decode(topic, r.value())).filter(match).forEach(found::add);
            assertThat(found).isNotEmpty();
        });
        return found.get(0);
    }

    private static List<ConsumerRecord<String, byte[]>> readAll(Topic<?> topic) {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(topic);
        }
    }

    private static long endOffset(Topic<?> topic) {
        try (KafkaConsumer<String, byte[]> c = consumer()) {
            TopicPartition tp = new TopicPartition(topic.name(), 0);
            return Optional.ofNullable(c.endOffsets(List.of(tp)).get(tp)).orElse(0L);
        }
    }

    private static KafkaConsumer<String, byte[]> consumer() {
        return new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                EmbeddedKafka.shared().bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                new StringDeserializer(), new ByteArrayDeserializer());
    }

    private static Path tokensFile() {
        try {
            return TokensFile.write(Files.createTempDirectory("admission-tokens-").resolve("tokens.yaml"),
                    TokensFile.tenants("vision", VISION, "audio", AUDIO), ADMIN);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
