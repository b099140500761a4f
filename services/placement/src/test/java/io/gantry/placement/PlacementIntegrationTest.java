package io.gantry.placement;

import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.DeferralReason;
import io.gantry.events.FailureReason;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobRunFailed;
import io.gantry.events.PreemptionReason;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeFailureReason;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeRecovered;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import io.gantry.events.DeviceFaultDecided;
import io.gantry.events.DeviceFaultKind;
import io.gantry.events.DeviceFaultReported;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.FaultAction;
import io.gantry.events.FaultCategory;
import io.gantry.placement.core.NodeSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlacementIntegrationTest implements TestPropertyProvider {
    private static final String TENANT_TOKEN = "vision-token-123";
    private static final String ADMIN_TOKEN = "admin-token-123";

    @Inject
    @Client("/")
    HttpClient http;

    /** Run seconds of a task meant to run until it is stopped (a task without runSeconds ends after a minute). */
    private static final Long FOREVER = 1_000_000_000L;

    private KafkaProducer<String, byte[]> producer;

    @Override
    public Map<String, String> getProperties() {
        Path tokens = TokensFile.write(TokensFile.tenants("vision", TENANT_TOKEN), ADMIN_TOKEN);
        return Map.of(
                "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                "micronaut.server.port", "-1",
                "gantry.auth.tokens-file", tokens.toString(),
                "gantry.placement.simulated.speedup", "1000",
                "gantry.placement.simulated.heartbeat-interval", "200ms",
                "gantry.placement.tick-interval", "50ms");
    }

    private KafkaProducer<String, byte[]> producer() {
        if (producer == null) {
            producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    EmbeddedKafka.shared().bootstrapServers()), new StringSerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    @AfterAll
    void closeProducer() {
        if (producer != null) {
            producer.close();
        }
    }

    private <V> void produce(Topic<V> topic, String key, V value) throws Exception {
        producer().send(new ProducerRecord<>(topic.name(), key, AvroWire.encode(topic, value))).get();
    }

    /** Every committed record of a topic so far. */
    private static List<ConsumerRecord<String, byte[]>> readAll(Topic<?> topic) {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(topic);
        }
    }

    private static List<Object> payloadsFor(String jobId) {
        return readAll(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                .filter(r -> jobId.equals(r.key()))
                .map(r -> AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS, r.value()))
                .map(AllocationEvent::getPayload)
                .toList();
    }

    private static List<Object> awaitPayloads(String jobId, int count) {
        List<List<Object>> seen = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            List<Object> p = payloadsFor(jobId);
            seen.add(0, p);
            return p.size() >= count;
        });
        return seen.get(0);
    }

    private static QueueJobEvent dispatched(String jobId, int attempt, List<TaskSpec> tasks) {
        return dispatched(jobId, attempt, tasks, null);
    }

    private static QueueJobEvent dispatched(String jobId, int attempt, List<TaskSpec> tasks, Long timeLimitSeconds) {
        JobSpec spec = JobSpec.newBuilder().setName("train").setPriority(0).setTimeLimitSeconds(timeLimitSeconds)
                .setTasks(tasks).build();
        int gpus = tasks.stream().mapToInt(t -> t.getReplicas() * t.getGpus()).sum();
        return QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(jobId)
                .setOccurredAt(Instant.now())
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(attempt).setSpec(spec)
                        .setGpus(gpus).build())
                .build();
    }

    private static TaskSpec task(String name, int replicas, int gpus, Long runSeconds) {
        return TaskSpec.newBuilder().setName(name).setReplicas(replicas).setCommand(List.of("python", "train.py"))
                .setGpus(gpus).setGpuModel("H100").setCpuMillis(4_000).setMemoryMiB(16_384).setRunSeconds(runSeconds)
                .build();
    }

    @Test
    void aDispatchedGangIsGrantedStartedSucceededAndReleasedAfterExactlyItsRunSeconds() throws Exception {
        String jobId = "job-" + UUID.randomUUID();

        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("worker", 2, 4, 30L))));

        List<Object> payloads = awaitPayloads(jobId, 4);
        assertThat(payloads).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("AllocationGranted", "JobRunStarted", "JobRunSucceeded", "AllocationReleased");
        AllocationGranted granted = (AllocationGranted) payloads.get(0);
        assertThat(granted.getBackend()).isEqualTo("simulated");
        assertThat(granted.getRunTokenSha256()).as("the hash of the run's own token, never the token")
                .matches("[0-9a-f]{64}");
        assertThat(granted.getAttempt()).isEqualTo(1);
        assertThat(granted.getPlacements()).hasSize(2).allSatisfy(p -> {
            assertThat(p.getGpuIndices()).hasSize(4);
            assertThat(p.getGpuModel()).isEqualTo("H100");
            assertThat(p.getNodeId()).startsWith("sim-");
        });
        // topology-aware: the two 4-GPU tasks share one node, one NUMA socket each, pinned to its cores
        assertThat(granted.getPlacements()).extracting(TaskPlacement::getNodeId).containsOnly(
                granted.getPlacements().get(0).getNodeId());
        assertThat(granted.getPlacements()).allSatisfy(p -> {
            assertThat(p.getCpuSet()).hasSize(48);
            assertThat(p.getRunSeconds()).isEqualTo(30L);
        });
        Set<String> devices = new HashSet<>();
        for (TaskPlacement p : granted.getPlacements()) {
            p.getGpuIndices().forEach(i -> assertThat(devices.add(p.getNodeId() + "#" + i)).isTrue());
        }
        assertThat(((JobRunStarted) payloads.get(1)).getStartedAt()).isEqualTo(granted.getGrantedAt());
        AllocationReleased released = (AllocationReleased) payloads.get(3);
        assertThat(released.getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
        assertThat(released.getGrantedAt()).isEqualTo(granted.getGrantedAt());
        assertThat(released.getReleasedAt()).isEqualTo(granted.getGrantedAt().plusSeconds(30));
        assertThat(((JobRunSucceeded) payloads.get(2)).getFinishedAt()).isEqualTo(released.getReleasedAt());
        assertThat(released.getPlacements()).isEqualTo(granted.getPlacements());
    }

    @Test
    void aJobWithATimeLimitOrRunTimeTooLargeForAnyClockIsGrantedAndStartedAndNothingIsDeadLettered() throws Exception {
        String maxLimit = "job-" + UUID.randomUUID();
        String hugeRun = "job-" + UUID.randomUUID();

        produce(Topics.QUEUE_JOB_EVENTS, maxLimit, dispatched(maxLimit, 1, List.of(task("w", 1, 1, 30L)),
                Long.MAX_VALUE));
        produce(Topics.QUEUE_JOB_EVENTS, hugeRun, dispatched(hugeRun, 1,
                List.of(task("w", 1, 1, 100_000_000_000_000_000L)), 100_000_000_000_000_000L));

        List<Object> finished = awaitPayloads(maxLimit, 4);
        assertThat(finished).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("AllocationGranted", "JobRunStarted", "JobRunSucceeded", "AllocationReleased");
        assertThat(((AllocationGranted) finished.get(0)).getTimeLimitSeconds()).isEqualTo(Long.MAX_VALUE);
        assertThat(((AllocationReleased) finished.get(3)).getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
        assertThat(awaitPayloads(hugeRun, 2)).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("AllocationGranted", "JobRunStarted");
        assertThat(readAll(Topics.deadLetter(Service.PLACEMENT))).extracting(ConsumerRecord::key)
                .doesNotContain(maxLimit, hugeRun);
        // the processor kept going: a later job is still placed
        String after = "job-" + UUID.randomUUID();
        produce(Topics.QUEUE_JOB_EVENTS, after, dispatched(after, 1, List.of(task("w", 1, 1, 1L))));
        assertThat(awaitPayloads(after, 4)).last().isInstanceOf(AllocationReleased.class);
        assertThat(payloadsFor(hugeRun)).as("still running, not stopped by its limit").hasSize(2);
    }

    @Test
    void aTaskWithoutRunSecondsEndsAfterTheDefaultMinuteOfVirtualTime() throws Exception {
        String jobId = "job-" + UUID.randomUUID();

        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("w", 1, 1, null))));

        List<Object> payloads = awaitPayloads(jobId, 4);
        AllocationGranted granted = (AllocationGranted) payloads.get(0);
        assertThat(payloads.get(3)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
            assertThat(r.getReleasedAt()).isEqualTo(granted.getGrantedAt().plusSeconds(60));
        });
    }

    @Test
    void aPreemptedRunIsReleasedPreemptedAfterItsGracePeriodWithNoOutcomeAndTheFreeCapacity() throws Exception {
        String jobId = "job-" + UUID.randomUUID();
        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("forever", 1, 2, FOREVER))));
        AllocationGranted granted = (AllocationGranted) awaitPayloads(jobId, 2).get(0);

        QueuePreemptionEvent preempted = QueuePreemptionEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setJobId(jobId).setOccurredAt(Instant.now())
                .setPayload(JobPreempted.newBuilder().setTenant("vision").setAttempt(1).setReason(PreemptionReason.RECLAIM)
                        .setGraceSeconds(30).setMessage("queue vision reclaims 2 x H100").build()).build();
        produce(Topics.QUEUE_PREEMPTION_EVENTS, jobId, preempted);
        produce(Topics.QUEUE_PREEMPTION_EVENTS, jobId, preempted); // a repeat changes nothing

        List<Object> payloads = awaitPayloads(jobId, 3);
        assertThat(payloads).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("AllocationGranted", "JobRunStarted", "AllocationReleased");
        assertThat(payloads.get(2)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED);
            assertThat(r.getGrantedAt()).isEqualTo(granted.getGrantedAt());
            assertThat(r.getReleasedAt()).as("held through the 30 s grace period")
                    .isAfterOrEqualTo(granted.getGrantedAt().plusSeconds(30));
            assertThat(r.getFreeCapacity()).extracting(f -> f.getGpuModel()).containsExactly("H100");
            assertThat(r.getFreeCapacity().get(0).getLargestFreeOnNode()).isBetween(2, 8);
        });
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> payloadsFor(jobId).size() == 3);
        // the run was told first, once, with the queue's sentence and the deadline its tasks are killed at
        List<io.gantry.events.StopEvent> notices = readAll(Topics.PLACEMENT_STOP_EVENTS).stream()
                .filter(r -> jobId.equals(r.key())).map(r -> AvroWire.decode(Topics.PLACEMENT_STOP_EVENTS, r.value()))
                .toList();
        assertThat(notices).singleElement().satisfies(n -> {
            io.gantry.events.RunStopRequested stop = (io.gantry.events.RunStopRequested) n.getPayload();
            assertThat(stop.getAllocationId()).isEqualTo(granted.getAllocationId());
            assertThat(stop.getTenant()).isEqualTo("vision");
            assertThat(stop.getAttempt()).isEqualTo(1);
            assertThat(stop.getReason()).isEqualTo(ReleaseReason.PREEMPTED);
            assertThat(stop.getMessage()).isEqualTo("queue vision reclaims 2 x H100");
            assertThat(stop.getGraceSeconds()).isEqualTo(30);
            assertThat(stop.getDeadline()).isEqualTo(n.getOccurredAt().plusSeconds(30));
            assertThat(((AllocationReleased) payloads.get(2)).getReleasedAt()).isAfterOrEqualTo(stop.getDeadline());
        });
    }

    @Test
    void aRunReachingItsTimeLimitFailsWithTimeLimitAndIsReleasedExactlyThen() throws Exception {
        String jobId = "job-" + UUID.randomUUID();

        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("long", 1, 1, 3_600L)), 60L));

        List<Object> payloads = awaitPayloads(jobId, 4);
        assertThat(payloads).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("AllocationGranted", "JobRunStarted", "JobRunFailed", "AllocationReleased");
        AllocationGranted granted = (AllocationGranted) payloads.get(0);
        assertThat(granted.getTimeLimitSeconds()).isEqualTo(60L);
        Instant limit = ((JobRunStarted) payloads.get(1)).getStartedAt().plusSeconds(60);
        assertThat(payloads.get(2)).isInstanceOfSatisfying(JobRunFailed.class, f -> {
            assertThat(f.getReason()).isEqualTo(FailureReason.TIME_LIMIT);
            assertThat(f.getMessage()).isEqualTo("time limit 60 s reached");
            assertThat(f.getFinishedAt()).isEqualTo(limit);
        });
        assertThat(payloads.get(3)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.TIME_LIMIT);
            assertThat(r.getReleasedAt()).isEqualTo(limit);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void aHalfGpuTaskIsGrantedAShareOfOneDeviceShownOnTheNode() throws Exception {
        String jobId = "job-" + UUID.randomUUID();
        TaskSpec half = TaskSpec.newBuilder(task("half", 1, 0, FOREVER)).setGpuMilli(500).build();

        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(half)));

        AllocationGranted granted = (AllocationGranted) awaitPayloads(jobId, 2).get(0);
        TaskPlacement p = granted.getPlacements().get(0);
        assertThat(p.getGpuIndices()).isEmpty();
        assertThat(p.getGpuShares()).singleElement().satisfies(s -> {
            assertThat(s.getMilli()).isEqualTo(500);
            assertThat(s.getMemoryMiB()).isEqualTo(40_960L);
            assertThat(s.getMigProfile()).isNull();
        });
        int index = p.getGpuShares().get(0).getIndex();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            Map<String, Object> gpu = ((List<Map<String, Object>>) node(p.getNodeId()).get("gpus")).get(index);
            assertThat(gpu.get("allocatedTo")).isNull();
            assertThat((List<Map<String, Object>>) gpu.get("shares")).singleElement().satisfies(v -> assertThat(v)
                    .containsEntry("job", jobId).containsEntry("milli", 500).containsEntry("memoryMiB", 40960));
        });
    }

    @Test
    void aGangLargerThanTheClusterIsDeferredHoldingNothing() throws Exception {
        String jobId = "job-" + UUID.randomUUID();

        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("worker", 5, 8, 60L))));

        List<Object> payloads = awaitPayloads(jobId, 1);
        assertThat(payloads).singleElement().isInstanceOfSatisfying(PlacementDeferred.class, d -> {
            assertThat(d.getReason()).isEqualTo(DeferralReason.GANG_LARGER_THAN_CLUSTER);
            assertThat(d.getMessage()).startsWith("needs 40 GPUs as 5 x 8, the cluster has");
        });
    }

    @Test
    void aNodeFailureReleasesTheAllocationsOnItWithNodeFailed() throws Exception {
        String jobId = "job-" + UUID.randomUUID();
        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("forever", 1, 8, FOREVER))));
        AllocationGranted granted = (AllocationGranted) awaitPayloads(jobId, 2).get(0);
        String nodeId = granted.getPlacements().get(0).getNodeId();

        produce(Topics.RECOVERY_NODE_EVENTS, nodeId, NodeHealthEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setNodeId(nodeId).setOccurredAt(Instant.now())
                .setPayload(NodeFailed.newBuilder().setReason(NodeFailureReason.HEARTBEAT_TIMEOUT)
                        .setLastHeartbeatAt(null).setMessage("no heartbeat for 10s").build()).build());

        List<Object> payloads = awaitPayloads(jobId, 3);
        assertThat(payloads.get(2)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.NODE_FAILED);
            assertThat(r.getPlacements()).isEqualTo(granted.getPlacements());
            assertThat(r.getReleasedAt()).isAfterOrEqualTo(r.getGrantedAt());
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> node(nodeId).get("healthy").equals(false));
        assertThat(node(nodeId).get("freeGpus")).isEqualTo(8);

        produce(Topics.RECOVERY_NODE_EVENTS, nodeId, NodeHealthEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setNodeId(nodeId).setOccurredAt(Instant.now())
                .setPayload(NodeRecovered.newBuilder().setMessage("heartbeats resumed").build()).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> node(nodeId).get("healthy").equals(true));
    }

    @Test
    @SuppressWarnings("unchecked")
    void anInjectedFaultIsReportedAndRecoverysHardwareDecisionCordonsTheGpuAndStopsTheRunUntilAnOperatorUncordons()
            throws Exception {
        // the admin API injects a fault; placement reports it on placement.device-events for recovery to decide
        assertThatThrownBy(() -> http.toBlocking().exchange(HttpRequest.POST("/v1/admin/simulation/nodes/sim-1/faults",
                Map.of("gpu", 3, "kind", "XID", "xid", 79)).bearerAuth(TENANT_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(403));
        assertThatThrownBy(() -> http.toBlocking().exchange(HttpRequest.POST("/v1/admin/simulation/nodes/sim-1/faults",
                Map.of("gpu", 3, "kind", "WOBBLE")).bearerAuth(ADMIN_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.getResponse().getBody(String.class).orElse("")).contains("\"kind\"");
                });
        assertThatThrownBy(() -> http.toBlocking().exchange(HttpRequest.POST("/v1/admin/simulation/nodes/sim-1/faults",
                Map.of("gpu", 3, "kind", "XID")).bearerAuth(ADMIN_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(400));
        HttpResponse<Map> injected = http.toBlocking().exchange(HttpRequest.POST(
                "/v1/admin/simulation/nodes/sim-1/faults", Map.of("gpu", 3, "kind", "XID", "xid", 79))
                .bearerAuth(ADMIN_TOKEN), Map.class);
        assertThat(injected.code()).isEqualTo(202);
        DeviceFaultReported reported = await().atMost(Duration.ofSeconds(30)).until(() -> readAll(
                Topics.PLACEMENT_DEVICE_EVENTS).stream().map(r -> AvroWire.decode(Topics.PLACEMENT_DEVICE_EVENTS, r.value()))
                .filter(e -> e.getNodeId().equals("sim-1")).map(e -> (DeviceFaultReported) e.getPayload())
                .filter(f -> Integer.valueOf(79).equals(f.getXid())).findFirst().orElse(null), f -> f != null);
        assertThat(reported.getGpuIndex()).isEqualTo(3);
        assertThat(reported.getSource()).isEqualTo("admin");
        assertThat(http.toBlocking().exchange(HttpRequest.POST("/v1/admin/simulation/nodes/sim-1/preflight",
                Map.of("fail", false)).bearerAuth(ADMIN_TOKEN), Map.class).code()).isEqualTo(200);

        // recovery's decision about a GPU a run holds: the GPU is cordoned and the run released DEVICE_FAULT
        String jobId = "job-" + UUID.randomUUID();
        produce(Topics.QUEUE_JOB_EVENTS, jobId, dispatched(jobId, 1, List.of(task("forever", 1, 1, FOREVER))));
        AllocationGranted granted = (AllocationGranted) awaitPayloads(jobId, 2).get(0);
        String nodeId = granted.getPlacements().get(0).getNodeId();
        int gpu = granted.getPlacements().get(0).getGpuIndices().get(0);
        produce(Topics.RECOVERY_DEVICE_EVENTS, nodeId, DeviceHealthEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setNodeId(nodeId).setOccurredAt(Instant.now())
                .setPayload(DeviceFaultDecided.newBuilder().setFaultEventId(UUID.randomUUID().toString())
                        .setFaultAt(granted.getGrantedAt()).setGpuIndex(gpu).setKind(DeviceFaultKind.XID)
                        .setXid(79).setCategory(FaultCategory.HARDWARE).setAction(FaultAction.CORDON_DEVICE)
                        .setMessage("Xid 79 on GPU " + gpu).build()).build());
        List<Object> payloads = awaitPayloads(jobId, 3);
        assertThat(payloads.get(2)).isInstanceOfSatisfying(AllocationReleased.class,
                r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.DEVICE_FAULT));
        try {
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat((Map<String, String>) node(nodeId)
                    .get("labels")).containsEntry(NodeSpec.CORDONED_GPUS_LABEL, Integer.toString(gpu)));
        } finally {
            HttpResponse<Map> uncordoned = http.toBlocking().exchange(HttpRequest.POST(
                    "/v1/admin/nodes/" + nodeId + "/gpus/uncordon", Map.of()).bearerAuth(ADMIN_TOKEN), Map.class);
            assertThat(uncordoned.code()).isEqualTo(200);
            assertThat((List<Object>) uncordoned.body().get("cordonedGpus")).isEmpty();
        }
    }

    @Test
    void poisonRecordsGoToTheDeadLetterTopic() throws Exception {
        String garbage = "poison-" + UUID.randomUUID();
        String invalid = "job-" + UUID.randomUUID();
        producer().send(new ProducerRecord<>(Topics.QUEUE_JOB_EVENTS.name(), garbage,
                "not avro".getBytes(StandardCharsets.UTF_8))).get();
        produce(Topics.QUEUE_JOB_EVENTS, invalid, dispatched(invalid, 1, List.of(task("worker", 0, 8, 1L))));

        Topic<byte[]> deadLetter = Topics.deadLetter(Service.PLACEMENT);
        await().atMost(Duration.ofSeconds(30)).until(() -> readAll(deadLetter).stream().map(ConsumerRecord::key)
                .toList().containsAll(List.of(garbage, invalid)));
        ConsumerRecord<String, byte[]> r = readAll(deadLetter).stream().filter(x -> invalid.equals(x.key())).findFirst().orElseThrow();
        assertThat(new String(r.headers().lastHeader("gantry.source.topic").value(), StandardCharsets.UTF_8))
                .isEqualTo(Topics.QUEUE_JOB_EVENTS.name());
        assertThat(new String(r.headers().lastHeader("gantry.error").value(), StandardCharsets.UTF_8))
                .contains("replicas must be >= 1");
        assertThat(payloadsFor(invalid)).isEmpty();
    }

    @Test
    void theSimulatedNodesRegisterAndHeartbeat() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<NodeEvent> events = readAll(Topics.PLACEMENT_NODE_EVENTS).stream()
                    .map(r -> AvroWire.decode(Topics.PLACEMENT_NODE_EVENTS, r.value())).toList();
            assertThat(events).filteredOn(e -> e.getPayload() instanceof NodeRegistered).extracting(NodeEvent::getNodeId)
                    .contains("sim-0", "sim-1", "sim-2", "sim-3");
            assertThat(readAll(Topics.PLACEMENT_HEARTBEAT_EVENTS)).extracting(r -> r.key())
                    .contains("sim-0", "sim-1", "sim-2", "sim-3");
            assertThat(events).as("heartbeats are not on the registration topic")
                    .noneMatch(e -> e.getPayload() instanceof NodeHeartbeat);
        });
    }

    @Test
    @SuppressWarnings("unchecked")
    void theClusterSummaryShowsRacksFragmentationAndThePlacer() {
        Map<String, Object> cluster = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(
                () -> http.toBlocking().retrieve(HttpRequest.GET("/v1/cluster").bearerAuth(TENANT_TOKEN), Map.class),
                c -> c != null);
        assertThat(cluster.get("placer")).isEqualTo("topology (binpack)");
        assertThat(cluster.get("nodes")).isEqualTo(4);
        assertThat((List<Map<String, Object>>) cluster.get("racks")).extracting(r -> r.get("rack"))
                .containsExactly("rack-0", "rack-1");
        assertThat(((Number) cluster.get("fragmentation")).doubleValue()).isBetween(0.0, 1.0);
        Map<String, Object> sim0 = node("sim-0");
        assertThat(sim0.get("rack")).isEqualTo("rack-0");
        assertThat((List<Map<String, Object>>) sim0.get("sockets")).hasSize(2);
        // per pool, refreshed with the other inventory gauges
        await().atMost(Duration.ofSeconds(30)).until(() -> http.toBlocking().retrieve(HttpRequest.GET("/prometheus")),
                metrics -> metrics.contains("gantry_placement_fragmentation{pool="));
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> node(String nodeId) {
        List<Map> nodes = http.toBlocking().retrieve(HttpRequest.GET("/v1/nodes").bearerAuth(TENANT_TOKEN),
                Argument.listOf(Map.class));
        return nodes.stream().filter(n -> nodeId.equals(n.get("nodeId"))).findFirst().orElseThrow();
    }

    @Test
    @SuppressWarnings("unchecked")
    void anyAuthenticatedCallerSeesTheNodesAndOnlyAdminsFailSimulatedNodes() {
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            List<Map> nodes = http.toBlocking().retrieve(HttpRequest.GET("/v1/nodes").bearerAuth(TENANT_TOKEN),
                    Argument.listOf(Map.class));
            assertThat(nodes).extracting(n -> n.get("nodeId")).contains("sim-0", "sim-1", "sim-2", "sim-3");
            Map<String, Object> sim0 = nodes.stream().filter(n -> n.get("nodeId").equals("sim-0")).findFirst().orElseThrow();
            assertThat(sim0).containsEntry("backend", "simulated").containsEntry("cpuMillis", 96000);
            assertThat((List<Map<String, Object>>) sim0.get("gpus")).hasSize(8)
                    .allSatisfy(g -> assertThat(g).containsEntry("model", "H100").containsEntry("memoryMiB", 81920)
                            .containsKey("allocatedTo"));
            assertThat(sim0).as("documented as null when nothing is reserved").containsKey("reservedFor");
        });
        assertThatThrownBy(() -> http.toBlocking().exchange(HttpRequest.GET("/v1/nodes")))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(401));
        assertThatThrownBy(() -> http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/simulation/nodes/sim-3/fail", "").bearerAuth(TENANT_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(403));
        assertThatThrownBy(() -> http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/simulation/nodes/nope/fail", "").bearerAuth(ADMIN_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(404));

        // a task name no file can have (a NUL) is a bad field, not a server error
        assertThatThrownBy(() -> http.toBlocking().exchange(
                HttpRequest.GET("/v1/jobs/some-job/logs?task=%00&replica=0").bearerAuth(TENANT_TOKEN), String.class))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> {
                    assertThat(e.code()).isEqualTo(400);
                    assertThat(e.getResponse().getBody(String.class).orElse("")).contains("\"field\":\"task\"");
                });

        HttpResponse<Map> failed = http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/simulation/nodes/sim-3/fail", "").bearerAuth(ADMIN_TOKEN), Map.class);
        assertThat(failed.code()).isEqualTo(200);
        long before = heartbeats("sim-3");
        await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(5))
                .until(() -> heartbeats("sim-3") == before);
        HttpResponse<Map> revived = http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/simulation/nodes/sim-3/revive", "").bearerAuth(ADMIN_TOKEN), Map.class);
        assertThat(revived.code()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(10)).until(() -> heartbeats("sim-3") > before);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aReservationDrainsANodeDefersTheReservedJobDrainingAndGrantsItThereWhenTheBlockingRunEnds() throws Exception {
        // isolate one empty node: cordon the others for the length of the test (which also checks the admin API)
        String target = await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            List<Map> nodes = http.toBlocking().retrieve(HttpRequest.GET("/v1/nodes").bearerAuth(ADMIN_TOKEN),
                    Argument.listOf(Map.class));
            return nodes.stream().filter(n -> Boolean.TRUE.equals(n.get("healthy")) && n.get("freeGpus").equals(8))
                    .map(n -> (String) n.get("nodeId")).findFirst().orElse(null);
        }, t -> t != null);
        List<String> others = new ArrayList<>(List.of("sim-0", "sim-1", "sim-2", "sim-3"));
        others.remove(target);
        assertThatThrownBy(() -> http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/nodes/" + others.get(0) + "/cordon", "").bearerAuth(TENANT_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> assertThat(e.code()).isEqualTo(403));
        assertThatThrownBy(() -> http.toBlocking().exchange(
                HttpRequest.POST("/v1/admin/nodes/nope/cordon", "").bearerAuth(ADMIN_TOKEN)))
                .isInstanceOfSatisfying(HttpClientResponseException.class, e -> {
                    assertThat(e.code()).isEqualTo(404);
                    assertThat(e.getResponse().getContentType().map(Object::toString)).contains("application/problem+json");
                });
        try {
            for (String other : others) {
                HttpResponse<Map> cordoned = http.toBlocking().exchange(
                        HttpRequest.POST("/v1/admin/nodes/" + other + "/cordon", "").bearerAuth(ADMIN_TOKEN), Map.class);
                assertThat(cordoned.body()).containsEntry("cordoned", true);
                assertThat(node(other)).containsEntry("cordoned", true);
            }
            String blocker = "blocker-" + UUID.randomUUID();
            produce(Topics.QUEUE_JOB_EVENTS, blocker, dispatched(blocker, 1, List.of(task("w", 1, 8, 10_000L)), 20_000L));
            AllocationGranted held = (AllocationGranted) awaitPayloads(blocker, 2).get(0);
            assertThat(held.getPlacements().get(0).getNodeId()).isEqualTo(target);

            String starving = "starving-" + UUID.randomUUID();
            QueueJobEvent dispatch = dispatched(starving, 1, List.of(task("w", 1, 8, 1L)));
            produce(Topics.QUEUE_RESERVATION_EVENTS, starving, QueueReservationEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setJobId(starving).setOccurredAt(Instant.now())
                    .setPayload(CapacityReservationRequested.newBuilder().setTenant("vision").setAttempt(1)
                            .setSpec(((JobDispatched) dispatch.getPayload()).getSpec())
                            .setMessage("job waited 47 min (starvation wait 30m): FRAGMENTED").build()).build());
            await().atMost(Duration.ofSeconds(10)).until(() -> starving.equals(node(target).get("reservedFor")));
            Map<String, Object> cluster = http.toBlocking().retrieve(HttpRequest.GET("/v1/cluster")
                    .bearerAuth(TENANT_TOKEN), Map.class);
            assertThat((List<String>) cluster.get("cordonedNodes")).containsExactlyInAnyOrderElementsOf(others);
            assertThat((List<Map<String, Object>>) cluster.get("reservations")).singleElement().satisfies(r -> {
                assertThat(r).containsEntry("job", starving).containsEntry("domain", "node " + target)
                        .containsEntry("nodes", List.of(target));
                assertThat(r.get("estimate")).as("the blocking run's time limit").isNotNull();
            });

            produce(Topics.QUEUE_JOB_EVENTS, starving, dispatch);
            assertThat(awaitPayloads(starving, 1).get(0)).isInstanceOfSatisfying(PlacementDeferred.class, d -> {
                assertThat(d.getReason()).isEqualTo(DeferralReason.DRAINING);
                assertThat(d.getMessage()).startsWith("reserved: waiting for node drain of node " + target + " (est. ");
            });

            List<Object> ended = awaitPayloads(blocker, 4);
            assertThat(ended.get(3)).isInstanceOfSatisfying(AllocationReleased.class, r -> assertThat(
                    r.getFreeCapacity().get(0).getLargestFreeOnNode()).as("drained capacity is reported free").isEqualTo(8));
            produce(Topics.QUEUE_JOB_EVENTS, starving, dispatched(starving, 1, List.of(task("w", 1, 8, 1L))));
            List<Object> payloads = awaitPayloads(starving, 2);
            assertThat(payloads.get(1)).isInstanceOfSatisfying(AllocationGranted.class,
                    g -> assertThat(g.getPlacements().get(0).getNodeId()).isEqualTo(target));
            await().atMost(Duration.ofSeconds(10)).until(() -> node(target).get("reservedFor") == null);
        } finally {
            for (String other : others) {
                http.toBlocking().exchange(HttpRequest.POST("/v1/admin/nodes/" + other + "/uncordon", "")
                        .bearerAuth(ADMIN_TOKEN), Map.class);
            }
        }
        assertThat(node(others.get(0))).containsEntry("cordoned", false);
    }

    private static long heartbeats(String nodeId) {
        return readAll(Topics.PLACEMENT_HEARTBEAT_EVENTS).stream().filter(r -> nodeId.equals(r.key()))
                .map(r -> AvroWire.decode(Topics.PLACEMENT_HEARTBEAT_EVENTS, r.value()))
                .filter(e -> e.getPayload() instanceof NodeHeartbeat).count();
    }
}
