package io.gantry.recovery;

import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.DeviceEvent;
import io.gantry.events.DeviceFaultDecided;
import io.gantry.events.DeviceFaultKind;
import io.gantry.events.DeviceFaultReported;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.FaultAction;
import io.gantry.events.FaultCategory;
import io.gantry.events.JobRecoveryAbandoned;
import io.gantry.events.JobRequeued;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeFailureReason;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRecovered;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.micronaut.http.client.exceptions.HttpClientResponseException;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import io.gantry.recovery.kafka.RecoveryProcessor;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
class RecoveryIntegrationTest implements TestPropertyProvider {
    private static final String TENANT_TOKEN = "vision-token-123";

    private final Instant testStart = Instant.now();
    private final Map<String, String> properties = new HashMap<>();
    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());

    @Inject
    ApplicationContext context;

    @Inject
    @Client("/")
    HttpClient http;

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            Path tokens = TokensFile.write(TokensFile.tenants("vision", TENANT_TOKEN), null);
            properties.putAll(Map.of(
                    "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                    "micronaut.server.port", "-1",
                    "gantry.auth.tokens-file", tokens.toString(),
                    "gantry.recovery.heartbeat-timeout", "3s",
                    "gantry.recovery.check-interval", "200ms",
                    "gantry.recovery.max-restarts", "1",
                    // these tests judge nodes one by one, each alone in its pool (RecoveryDisruptionIntegrationTest
                    // has the hold a pool gets when all its nodes fall silent)
                    "gantry.recovery.disruption-hold", "0s",
                    // a snapshot every few records: the restart below restores from one and the history after it
                    "gantry.kafka.snapshot-every", "20"));
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    @Order(1)
    void aNodeThatStopsHeartbeatingIsDeclaredFailedAndRecoversWithItsNextHeartbeat() {
        String node = "sim-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            kafka.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, node, heartbeat(node, i));
        }

        NodeFailed failed = await().atMost(Duration.ofSeconds(30)).until(() -> nodeFacts(node).stream()
                .map(NodeHealthEvent::getPayload).filter(NodeFailed.class::isInstance).map(NodeFailed.class::cast)
                .findFirst().orElse(null), f -> f != null);
        assertThat(failed.getReason()).isEqualTo(NodeFailureReason.HEARTBEAT_TIMEOUT);
        // measured on recovery's clock when received, not the sender's (2001) timestamps
        assertThat(failed.getLastHeartbeatAt()).isAfterOrEqualTo(testStart.minusSeconds(1));
        assertThat(failed.getMessage()).contains("no heartbeat for").contains("(timeout 3 s)");
        assertThat(healthOf(node)).containsEntry("state", "FAILED").containsKey("failedAt");

        kafka.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, node, heartbeat(node, 4));
        await().atMost(Duration.ofSeconds(30)).until(() -> nodeFacts(node).stream()
                .anyMatch(e -> e.getPayload() instanceof NodeRecovered));
        // declared failed exactly once, however many checks ran during the silence, then recovered
        assertThat(nodeFacts(node).subList(0, 2)).extracting(e -> e.getPayload().getClass().getSimpleName())
                .containsExactly("NodeFailed", "NodeRecovered");
    }

    @Test
    @Order(2)
    void aRunReleasedBecauseItsNodeFailedIsRequeuedOnceAndAbandonedPastTheLimit() {
        String job = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.NODE_FAILED));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.NODE_FAILED));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 2, ReleaseReason.NODE_FAILED));
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 3, ReleaseReason.RUN_SUCCEEDED));

        await().atMost(Duration.ofSeconds(30)).until(() -> jobFacts(job).size() >= 2);
        List<RecoveryJobEvent> facts = jobFacts(job);
        assertThat(facts).hasSize(2);
        JobRequeued requeued = (JobRequeued) facts.get(0).getPayload();
        assertThat(requeued.getTenant()).isEqualTo("vision");
        assertThat(requeued.getInterruptedAttempt()).isEqualTo(1);
        assertThat(requeued.getMessage()).endsWith("restart 1 of 1");
        assertThat(requeued.getResumeFrom()).isNull();
        JobRecoveryAbandoned abandoned = (JobRecoveryAbandoned) facts.get(1).getPayload();
        assertThat(abandoned.getInterruptedAttempt()).isEqualTo(2);
        assertThat(abandoned.getMessage()).isEqualTo("restart limit 1 reached");
    }

    @Test
    @Order(4)
    void aRecordThatCannotBeDecodedGoesToTheDeadLetterTopicAndProcessingGoesOn() {
        String key = "poison-" + UUID.randomUUID();
        kafka.sendRaw(Topics.PLACEMENT_ALLOCATION_EVENTS, key, "not avro".getBytes(StandardCharsets.UTF_8));
        String job = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.NODE_FAILED));

        await().atMost(Duration.ofSeconds(30)).until(() -> kafka.readAllRaw(Topics.deadLetter(Service.RECOVERY))
                .stream().anyMatch(r -> key.equals(r.key())));
        ConsumerRecord<String, byte[]> dead = kafka.readAllRaw(Topics.deadLetter(Service.RECOVERY)).stream()
                .filter(r -> key.equals(r.key())).findFirst().orElseThrow();
        assertThat(new String(dead.value(), StandardCharsets.UTF_8)).isEqualTo("not avro");
        assertThat(new String(dead.headers().lastHeader("gantry.source.topic").value(), StandardCharsets.UTF_8))
                .isEqualTo(Topics.PLACEMENT_ALLOCATION_EVENTS.name());
        await().atMost(Duration.ofSeconds(30)).until(() -> !jobFacts(job).isEmpty());
    }

    @Test
    @Order(5)
    void nodeHealthNeedsAnApiToken() {
        assertThatThrownBy(() -> http.toBlocking().exchange(HttpRequest.GET("/v1/nodes/health")))
                .isInstanceOfSatisfying(HttpClientResponseException.class,
                        e -> assertThat(e.getResponse().code()).isEqualTo(401));
    }

    @Test
    @Order(6)
    void aRestartKeepsFailedNodesAndRestartCountsAndWatchesEveryKnownNodeAgain() {
        String failedNode = "sim-" + UUID.randomUUID();
        String quietNode = "sim-" + UUID.randomUUID();
        String job = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_HEARTBEAT_EVENTS, failedNode, heartbeat(failedNode, 0));
        await().atMost(Duration.ofSeconds(30)).until(() -> !nodeFacts(failedNode).isEmpty());
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.NODE_FAILED));
        await().atMost(Duration.ofSeconds(30)).until(() -> !jobFacts(job).isEmpty());

        // a node recovery has seen register once, then silence: after the restart only the registry can tell it exists
        kafka.send(Topics.PLACEMENT_NODE_EVENTS, quietNode, registration(quietNode));
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> healthOf(quietNode) != null);
        context.getBean(RecoveryProcessor.class).close();
        Instant restartedAt = Instant.now();
        try (ApplicationContext restarted = ApplicationContext.run(EmbeddedServer.class,
                new HashMap<String, Object>(getProperties())).getApplicationContext()) {
            HttpClient client = restarted.createBean(HttpClient.class, restarted.getBean(EmbeddedServer.class).getURL());
            await().atMost(Duration.ofSeconds(30)).until(() -> restarted.getBean(RecoveryProcessor.class).lastRestore() != null);
            assertThat(restarted.getBean(RecoveryProcessor.class).lastRestore().snapshotRecords())
                    .as("restored from a snapshot").isPositive();
            NodeHealthEvent quietFailed = await().atMost(Duration.ofSeconds(30)).until(() -> nodeFacts(quietNode)
                    .stream().filter(e -> e.getPayload() instanceof NodeFailed).findFirst().orElse(null), f -> f != null);
            // declared by the restarted instance, which knew the node only from the registry
            assertThat(quietFailed.getOccurredAt()).isAfter(restartedAt);
            assertThat(healthOf(client, failedNode)).containsEntry("state", "FAILED");
            assertThat(nodeFacts(failedNode)).hasSize(1);

            kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.NODE_FAILED));
            kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 2, ReleaseReason.NODE_FAILED));
            await().atMost(Duration.ofSeconds(30)).until(() -> jobFacts(job).size() >= 2);
            assertThat(jobFacts(job)).extracting(e -> e.getPayload().getClass().getSimpleName())
                    .containsExactly("JobRequeued", "JobRecoveryAbandoned");
        }
    }

    @Test
    @Order(3)
    void aHardwareXidCordonsTheGpuAndStopsTheRunOnItWhichIsRequeuedAndAnApplicationXidOnlyFailsTheRun() {
        String node = "sim-" + UUID.randomUUID();
        String job = "job-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, granted(job, 1, node, List.of(2, 3)));
        DeviceEvent xid79 = fault(node, 3, 79);
        long sent = System.nanoTime();
        kafka.send(Topics.PLACEMENT_DEVICE_EVENTS, node, xid79);
        DeviceFaultDecided hw = await().atMost(Duration.ofSeconds(30)).until(() -> deviceFacts(node).stream()
                .map(e -> (DeviceFaultDecided) e.getPayload()).findFirst().orElse(null), d -> d != null);
        System.out.printf("hardware Xid decided %d ms after it was sent%n", (System.nanoTime() - sent) / 1_000_000);
        assertThat(hw.getAction()).isEqualTo(FaultAction.CORDON_DEVICE);
        assertThat(hw.getCategory()).isEqualTo(FaultCategory.HARDWARE);
        assertThat(hw.getGpuIndex()).isEqualTo(3);
        assertThat(hw.getFaultEventId()).isEqualTo(xid79.getEventId());
        assertThat(hw.getAffectedJobIds()).containsExactly(job);
        assertThat(hw.getMessage()).isEqualTo("Xid 79 (GPU has fallen off the bus) on GPU 3 of " + node
                + ": hardware fault; GPU 3 cordoned; stops job " + job + " attempt 1");

        // the same report redelivered, then a flood of the same fault: nothing more is decided about GPU 3
        kafka.send(Topics.PLACEMENT_DEVICE_EVENTS, node, xid79);
        kafka.send(Topics.PLACEMENT_DEVICE_EVENTS, node, fault(node, 3, 48));
        kafka.send(Topics.PLACEMENT_DEVICE_EVENTS, node, fault(node, 2, 13));
        kafka.send(Topics.PLACEMENT_DEVICE_EVENTS, node, fault(node, 5, 999));
        await().atMost(Duration.ofSeconds(30)).until(() -> deviceFacts(node).size() >= 3);
        assertThat(deviceFacts(node)).extracting(e -> ((DeviceFaultDecided) e.getPayload()).getAction())
                .containsExactly(FaultAction.CORDON_DEVICE, FaultAction.FAIL_RUNS, FaultAction.CORDON_DEVICE);
        DeviceFaultDecided unknown = (DeviceFaultDecided) deviceFacts(node).get(2).getPayload();
        assertThat(unknown.getMessage()).startsWith("Xid 999 (unknown Xid, treated as a hardware fault) on GPU 5");

        List<Map<String, Object>> out = http.toBlocking().retrieve(HttpRequest.GET("/v1/nodes/devices")
                .bearerAuth(TENANT_TOKEN), Argument.listOf(Argument.mapOf(String.class, Object.class)));
        assertThat(out).filteredOn(n -> node.equals(n.get("nodeId"))).singleElement()
                .satisfies(n -> assertThat(n.get("cordonedGpus")).isEqualTo(List.of(3, 5)));

        // placement stopped the run DEVICE_FAULT: an infrastructure failure, requeued with the device named
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, 1, ReleaseReason.DEVICE_FAULT, node));
        RecoveryJobEvent requeued = await().atMost(Duration.ofSeconds(30)).until(() -> jobFacts(job).stream()
                .findFirst().orElse(null), e -> e != null);
        assertThat(((JobRequeued) requeued.getPayload()).getMessage())
                .isEqualTo("GPU 3 of " + node + " failed (Xid 79: GPU has fallen off the bus); restart 1 of 1");
    }

    private List<DeviceHealthEvent> deviceFacts(String node) {
        return kafka.readAll(Topics.RECOVERY_DEVICE_EVENTS).stream().filter(e -> node.equals(e.getNodeId())).toList();
    }

    private static DeviceEvent fault(String node, int gpu, int xid) {
        return DeviceEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.now())
                .setPayload(DeviceFaultReported.newBuilder().setGpuIndex(gpu).setKind(DeviceFaultKind.XID).setXid(xid)
                        .setSource("simulated").setMessage("Xid " + xid).build()).build();
    }

    private static AllocationEvent granted(String job, int attempt, String node, List<Integer> gpus) {
        TaskPlacement placement = TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(node)
                .setGpuModel("H100").setGpuIndices(gpus).setCpuMillis(1000).setMemoryMiB(1024).build();
        return AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job)
                .setOccurredAt(Instant.now().minusSeconds(10))
                .setPayload(AllocationGranted.newBuilder().setAllocationId(job + "-a" + attempt).setTenant("vision")
                        .setAttempt(attempt).setPlacements(List.of(placement)).setGrantedAt(Instant.now().minusSeconds(10))
                        .setBackend("simulated").build())
                .build();
    }

    private Map<String, Object> healthOf(String node) {
        return healthOf(http, node);
    }

    private Map<String, Object> healthOf(HttpClient client, String node) {
        List<Map<String, Object>> nodes = client.toBlocking().retrieve(
                HttpRequest.GET("/v1/nodes/health").bearerAuth(TENANT_TOKEN),
                Argument.listOf(Argument.mapOf(String.class, Object.class)));
        return nodes.stream().filter(n -> node.equals(n.get("nodeId"))).findFirst().orElseThrow();
    }

    private List<NodeHealthEvent> nodeFacts(String node) {
        return kafka.readAll(Topics.RECOVERY_NODE_EVENTS).stream().filter(e -> node.equals(e.getNodeId())).toList();
    }

    private List<RecoveryJobEvent> jobFacts(String job) {
        return kafka.readAll(Topics.RECOVERY_JOB_EVENTS).stream().filter(e -> job.equals(e.getJobId())).toList();
    }

    private static NodeEvent registration(String node) {
        return NodeEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.parse("2001-01-01T00:00:00Z"))
                .setPayload(io.gantry.events.NodeRegistered.newBuilder().setGpus(java.util.List.of()).setCpuMillis(1000)
                        .setMemoryMiB(1024L).setLabels(java.util.Map.of()).setBackend("simulated").build()).build();
    }

    private static NodeHeartbeatEvent heartbeat(String node, long sequence) {
        // the sender's clock is far in the past: liveness must not depend on it
        return NodeHeartbeatEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setNodeId(node)
                .setOccurredAt(Instant.parse("2001-01-01T00:00:00Z"))
                .setPayload(NodeHeartbeat.newBuilder().setSequence(sequence).build()).build();
    }

    private static AllocationEvent released(String job, int attempt, ReleaseReason reason) {
        return released(job, attempt, reason, "sim-2");
    }

    private static AllocationEvent released(String job, int attempt, ReleaseReason reason, String node) {
        TaskPlacement placement = TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(node)
                .setGpuModel("H100").setGpuIndices(List.of(0, 1)).setCpuMillis(1000).setMemoryMiB(1024).build();
        return AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(job)
                .setOccurredAt(Instant.now())
                .setPayload(AllocationReleased.newBuilder().setAllocationId(job + "-a" + attempt).setTenant("vision")
                        .setAttempt(attempt).setReason(reason).setGrantedAt(Instant.now().minusSeconds(60))
                        .setReleasedAt(Instant.now()).setPlacements(List.of(placement)).setBackend("simulated")
                        .build())
                .build();
    }
}
