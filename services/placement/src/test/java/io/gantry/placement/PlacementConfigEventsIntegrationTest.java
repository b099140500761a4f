package io.gantry.placement;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.PlacementConfigApplied;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskSpec;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Placement tells the other services its GPU tiers on {@code placement.config-events} (admission refuses a tier
 * placement does not know), and only when they changed, so the topic reads like a history of configurations.
 * Restarts placement against the real embedded broker.
 */
class PlacementConfigEventsIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static ApplicationContext startPlacement(Map<String, String> tiers, Map<String, String> more) {
        Map<String, Object> props = new HashMap<>(Map.of(
                "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                "micronaut.server.port", "-1",
                "gantry.placement.simulated.speedup", "100",
                "gantry.placement.tick-interval", "50ms"));
        tiers.forEach((tier, models) -> props.put("gantry.placement.tiers." + tier, models));
        props.putAll(more);
        ApplicationContext ctx = ApplicationContext.run(props);
        await().atMost(TIMEOUT).until(() -> ctx.getBean(PlacementProcessor.class).isReady());
        return ctx;
    }

    private static List<PlacementConfigApplied> published() {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(Topics.PLACEMENT_CONFIG_EVENTS).stream()
                    .peek(r -> assertThat(r.key()).isEqualTo("placement-config"))
                    .map(r -> AvroWire.decode(Topics.PLACEMENT_CONFIG_EVENTS, r.value()))
                    .map(e -> (PlacementConfigApplied) e.getPayload()).toList();
        }
    }

    private static Map<String, List<String>> newestTiers() {
        List<PlacementConfigApplied> all = published();
        return all.isEmpty() ? null : all.get(all.size() - 1).getTiers();
    }

    @Test
    void theConfiguredTiersArePublishedAtStartAndARestartWithTheSameTiersAddsNone() {
        String training = "training-" + UUID.randomUUID();
        int before = published().size();

        try (ApplicationContext first = startPlacement(Map.of(training, "H100,A100", "inference", "L4"), Map.of())) {
            // a transaction's commit returns before its markers reach the partition: a read_committed reader may see
            // the record a moment later
            await().atMost(TIMEOUT).until(() -> published().size() == before + 1);
            assertThat(newestTiers()).isEqualTo(Map.of(training, List.of("H100", "A100"), "inference", List.of("L4")));
        }
        try (ApplicationContext same = startPlacement(Map.of(training, "H100,A100", "inference", "L4"), Map.of())) {
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                    .until(() -> published().size() == before + 1);
        }
        try (ApplicationContext changed = startPlacement(Map.of(training, "H100"), Map.of())) {
            await().atMost(TIMEOUT).until(() -> published().size() >= before + 2);
            assertThat(published()).as("a changed configuration is one more event").hasSize(before + 2);
            assertThat(newestTiers()).isEqualTo(Map.of(training, List.of("H100")));
        }
    }

    @Test
    void aTaskWithoutRunSecondsRunsForTheConfiguredDefaultRunTime() throws Exception {
        String jobId = "job-" + UUID.randomUUID();
        try (ApplicationContext ctx = startPlacement(Map.of(),
                Map.of("gantry.placement.simulated.default-run-seconds", "5"));
             KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                     EmbeddedKafka.shared().bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
            TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("train")).setGpus(1)
                    .setGpuModel("H100").setCpuMillis(1_000).setMemoryMiB(1_024).build();
            QueueJobEvent dispatched = QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                    .setJobId(jobId).setOccurredAt(Instant.now())
                    .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(1)
                            .setSpec(JobSpec.newBuilder().setName("no-run-seconds").setPriority(0)
                                    .setTasks(List.of(task)).build()).build()).build();
            producer.send(new ProducerRecord<>(Topics.QUEUE_JOB_EVENTS.name(), jobId,
                    AvroWire.encode(Topics.QUEUE_JOB_EVENTS, dispatched))).get();

            await().atMost(TIMEOUT).until(() -> allocationPayloads(jobId).size() >= 4);
            List<Object> payloads = allocationPayloads(jobId);
            AllocationGranted granted = (AllocationGranted) payloads.get(0);
            assertThat(payloads.get(3)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
                assertThat(r.getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
                assertThat(r.getReleasedAt()).isEqualTo(granted.getGrantedAt().plusSeconds(5));
            });
        }
    }

    private static List<Object> allocationPayloads(String jobId) {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                    .filter(r -> jobId.equals(r.key()))
                    .map(r -> AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS, r.value()))
                    .map(AllocationEvent::getPayload).toList();
        }
    }
}
