package io.gantry.placement;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSucceeded;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Placement restarts from a snapshot of its state and the history after it, against the real embedded broker: the
 * runs live at the restart go on (not granted again, their GPUs not given to others), the jobs that ended before it
 * are gone, and a new dispatch is placed on what is free.
 */
class PlacementSnapshotIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Long FOREVER = 1_000_000_000L;

    private static ApplicationContext startPlacement() {
        Map<String, Object> props = new HashMap<>(Map.of(
                "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                "micronaut.server.port", "-1",
                "gantry.placement.simulated.speedup", "100",
                "gantry.placement.tick-interval", "50ms",
                // a snapshot every few records: the restart below restores from one and the history after it
                "gantry.kafka.snapshot-every", "10"));
        ApplicationContext ctx = ApplicationContext.run(props);
        await().atMost(TIMEOUT).until(() -> ctx.getBean(PlacementProcessor.class).isReady());
        return ctx;
    }

    @Test
    void aRestartFromASnapshotKeepsTheLiveRunsForgetsTheEndedJobsAndPlacesOnWhatIsFree() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> longJobs = List.of("long-" + run + "-0", "long-" + run + "-1");
        List<String> shortJobs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            shortJobs.add("short-" + run + "-" + i);
        }
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                EmbeddedKafka.shared().bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
            try (ApplicationContext first = startPlacement()) {
                for (String job : longJobs) {
                    send(producer, Topics.QUEUE_JOB_EVENTS, job, dispatched(job, 8, FOREVER));
                }
                for (String job : shortJobs) {
                    send(producer, Topics.QUEUE_JOB_EVENTS, job, dispatched(job, 1, 1L));
                }
                for (String job : shortJobs) {
                    await().atMost(TIMEOUT).until(() -> payloads(job).stream().anyMatch(p -> p instanceof AllocationReleased));
                    // the queue ends each job once its run succeeded
                    send(producer, Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder()
                            .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(Instant.now())
                            .setPayload(JobSucceeded.newBuilder().setTenant("vision").setAttempt(1).build()).build());
                }
                for (String job : longJobs) {
                    await().atMost(TIMEOUT).until(() -> payloads(job).size() >= 2); // granted, started
                }
                await().atMost(TIMEOUT).until(() -> snapshots() > 0);
            }

            String next = "next-" + run;
            try (ApplicationContext restarted = startPlacement()) {
                try {
                    restartedKeepsTheLiveRuns(restarted, producer, longJobs, shortJobs, next);
                } finally {
                    // the broker is shared with the module's other tests: leave the cluster free
                    for (String job : List.of(longJobs.get(0), longJobs.get(1), next)) {
                        send(producer, Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder()
                                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(Instant.now())
                                .setPayload(JobCancelled.newBuilder().setTenant("vision").setAttempt(1)
                                        .setRequestedBy("test").build()).build());
                    }
                    for (String job : List.of(longJobs.get(0), longJobs.get(1), next)) {
                        await().atMost(TIMEOUT).until(() -> payloads(job).isEmpty()
                                || payloads(job).stream().anyMatch(p -> p instanceof AllocationReleased));
                    }
                }
            }
        }
    }

    private static void restartedKeepsTheLiveRuns(ApplicationContext restarted, KafkaProducer<String, byte[]> producer,
                                                  List<String> longJobs, List<String> shortJobs, String next)
            throws Exception {
        PlacementProcessor placement = restarted.getBean(PlacementProcessor.class);
        assertThat(placement.lastRestore().snapshotRecords()).as("restored from a snapshot").isPositive();
        List<Allocation> live = placement.query(r -> r.fallback().state().liveAllocations()).get();
        assertThat(live).extracting(Allocation::jobId).contains(longJobs.get(0), longJobs.get(1))
                .doesNotContainAnyElementsOf(shortJobs);
        assertThat(placement.query(r -> shortJobs.stream()
                .filter(j -> r.fallback().state().grantedAttempt(j).isPresent()).toList()).get())
                .as("ended jobs are forgotten").isEmpty();

        // a dispatch read again of a live run is stale; a new gang gets GPUs the live runs do not hold
        send(producer, Topics.QUEUE_JOB_EVENTS, longJobs.get(0), dispatched(longJobs.get(0), 8, FOREVER));
        send(producer, Topics.QUEUE_JOB_EVENTS, next, dispatched(next, 8, FOREVER));
        await().atMost(TIMEOUT).until(() -> !payloads(next).isEmpty());
        AllocationGranted granted = (AllocationGranted) payloads(next).get(0);
        Set<String> held = new java.util.HashSet<>();
        for (String job : longJobs) {
            AllocationGranted g = (AllocationGranted) payloads(job).get(0);
            g.getPlacements().forEach(p -> p.getGpuIndices().forEach(i -> held.add(p.getNodeId() + "#" + i)));
        }
        for (TaskPlacement p : granted.getPlacements()) {
            p.getGpuIndices().forEach(i -> assertThat(held).doesNotContain(p.getNodeId() + "#" + i));
        }
        assertThat(payloads(longJobs.get(0)).stream().filter(p -> p instanceof AllocationGranted))
                .as("a live run is granted once").hasSize(1);
    }

    private static <V> void send(KafkaProducer<String, byte[]> producer, Topic<V> topic, String key, V value)
            throws Exception {
        producer.send(new ProducerRecord<>(topic.name(), key, AvroWire.encode(topic, value))).get();
    }

    private static QueueJobEvent dispatched(String jobId, int gpus, Long runSeconds) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("train")).setGpus(gpus)
                .setGpuModel("H100").setCpuMillis(1_000).setMemoryMiB(1_024).setRunSeconds(runSeconds).build();
        return QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(jobId)
                .setOccurredAt(Instant.now())
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(gpus)
                        .setSpec(JobSpec.newBuilder().setName(jobId).setPriority(0).setTasks(List.of(task)).build())
                        .build()).build();
    }

    private static List<Object> payloads(String jobId) {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                    .filter(r -> jobId.equals(r.key()))
                    .map(r -> AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS, r.value()))
                    .map(AllocationEvent::getPayload).toList();
        }
    }

    private static int snapshots() {
        try (TopicClient client = new TopicClient(EmbeddedKafka.shared().bootstrapServers())) {
            return client.readAllRaw(Topics.snapshots(Service.PLACEMENT)).size();
        }
    }
}
