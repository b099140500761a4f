package io.gantry.placement;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskSpec;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Placement split by pool ({@code gantry.placement.shard-by-pool}) on a broker of its own: two instances, two pools,
 * each instance owns one pool's unit and places that pool's jobs; when one instance stops, the other takes its pool
 * over (its live runs kept, not granted again, its GPUs not given twice) and places there; when the instance comes
 * back, the pool moves back to it.
 */
class PlacementShardIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Long FOREVER = 1_000_000_000L;
    private static final String ADMIN_TOKEN = "shard-admin-token-123";
    private static final String TENANT_TOKEN = "shard-vision-token-123";
    private static EmbeddedKafka broker;
    private static java.nio.file.Path tokens;
    private static final Map<String, Integer> PORTS = new HashMap<>();
    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

    @BeforeAll
    static void startBroker() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        tokens = TokensFile.write(TokensFile.tenants("vision", TENANT_TOKEN), ADMIN_TOKEN);
        InstanceProperties.freePorts(PORTS, "1", "2");
    }

    @AfterAll
    static void stopBroker() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static ApplicationContext instance(String id) {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), PORTS.get(id), tokens, id);
        props.put("gantry.placement.simulated.speedup", "100");
        props.put("gantry.placement.tick-interval", "50ms");
        props.put("gantry.placement.shard-by-pool", "true");
        props.put("gantry.placement.pools.a.backend", "simulated");
        props.put("gantry.placement.pools.b.backend", "simulated");
        props.put("gantry.placement.pools.b.simulated.cluster-file", "src/test/resources/pools-b.yaml");
        // with its HTTP server: the instances route requests to each other
        return ApplicationContext.run(io.micronaut.runtime.server.EmbeddedServer.class, props).getApplicationContext();
    }

    private static List<EventProcessor> units(ApplicationContext ctx) {
        return ctx.getBean(PlacementProcessor.class).processors();
    }

    @Test
    void twoInstancesEachOwnAPoolAndTheSurvivorTakesTheOtherOver() throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()), new StringSerializer(), new ByteArraySerializer());
             ApplicationContext one = instance("1")) {
            ApplicationContext two = instance("2");
            try {
                // unit 0 (pool a) belongs to instance 1, unit 1 (pool b) to instance 2
                await().atMost(TIMEOUT).until(() -> units(one).get(0).isOwner() && units(two).get(1).isOwner());
                assertThat(units(one).get(1).isOwner()).isFalse();
                assertThat(units(two).get(0).isOwner()).isFalse();

                String liveA = "a-live-" + run;
                String liveB = "b-live-" + run;
                send(producer, liveA, dispatched(liveA, "a", 8, FOREVER));
                send(producer, liveB, dispatched(liveB, "b", 4, FOREVER));
                await().atMost(TIMEOUT).until(() -> grants(liveA).size() == 1 && grants(liveB).size() == 1);
                assertThat(nodes(grants(liveB).get(0))).containsOnly("b-0");
                assertThat(nodes(grants(liveA).get(0))).doesNotContain("b-0");
                await().atMost(TIMEOUT).until(() -> snapshots("pool-b/") > 0);
                everyInstanceAnswersOverEveryPool();
            } finally {
                two.close();
            }

            // instance 2 left: instance 1 takes pool b over, keeps its live run and places on what is free
            await().atMost(TIMEOUT).until(() -> units(one).get(1).isOwner());
            assertThat(units(one).get(1).lastRestore().snapshotRecords()).as("pool b's unit restored from its snapshot")
                    .isPositive();
            String nextB = "b-next-" + run;
            send(producer, nextB, dispatched(nextB, "b", 4, FOREVER));
            await().atMost(TIMEOUT).until(() -> grants(nextB).size() == 1);
            assertThat(nodes(grants(nextB).get(0))).containsOnly("b-0");
            assertThat(gpus(grants(nextB).get(0))).doesNotContainAnyElementsOf(gpus(grants("b-live-" + run).get(0)));
            String overB = "b-over-" + run;
            send(producer, overB, dispatched(overB, "b", 4, FOREVER)); // b-0 is full: deferred, not granted
            await().atMost(TIMEOUT).until(() -> !payloads(overB).isEmpty());
            assertThat(grants(overB)).isEmpty();
            assertThat(payloads(overB)).allSatisfy(p -> assertThat(p).isInstanceOfSatisfying(
                    io.gantry.events.PlacementDeferred.class, d -> {
                        assertThat(d.getPool()).isEqualTo("b");
                        assertThat(d.getMessage()).doesNotContain("not configured");
                    }));

            // instance 2 comes back: pool b moves back to it
            try (ApplicationContext back = instance("2")) {
                await().atMost(TIMEOUT).until(() -> units(back).get(1).isOwner() && !units(one).get(1).isOwner());
                assertThat(units(one).get(0).isOwner()).isTrue();
                // what no unit can use goes to the dead letter once (the fallback pool's unit sends it)
                String garbage = "garbage-" + run;
                producer.send(new ProducerRecord<>(Topics.QUEUE_JOB_EVENTS.name(), garbage,
                        "not avro".getBytes(java.nio.charset.StandardCharsets.UTF_8))).get();
                String malformed = "malformed-" + run;
                send(producer, malformed, dispatched(malformed, "b", -1, FOREVER));
                String nextA = "a-next-" + run;
                send(producer, nextA, dispatched(nextA, "a", 8, FOREVER));
                await().atMost(TIMEOUT).until(() -> grants(nextA).size() == 1);
                try (TopicClient client = new TopicClient(broker.bootstrapServers())) {
                    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.readAllRaw(
                            Topics.deadLetter(io.gantry.schemas.Service.PLACEMENT)).stream().map(r -> r.key()))
                            .containsExactlyInAnyOrder(garbage, malformed));
                }
            }
            for (String job : List.of("a-live-" + run, "b-live-" + run, nextB, "a-next-" + run)) {
                assertThat(grants(job)).as("%s granted once", job).hasSize(1);
                assertThat(payloads(job)).as("%s never deferred by a unit without its pool", job)
                        .noneMatch(p -> p instanceof io.gantry.events.PlacementDeferred);
            }
            assertThat(grants(overB)).isEmpty();
        }
    }

    /** Reads over both pools from either instance; a command on a node of the other instance's pool reaches it. */
    private static void everyInstanceAnswersOverEveryPool() throws Exception {
        for (String id : List.of("1", "2")) {
            // an instance whose group rebalanced just now (a session lapsed on a loaded machine) restores its units
            // first and says so (503 "restoring"): it must answer once that is over, not at this very instant
            await().atMost(TIMEOUT).until(() -> call(id, "GET", "/v1/nodes", ADMIN_TOKEN).statusCode() != 503);
            for (String token : List.of(ADMIN_TOKEN, TENANT_TOKEN)) {
                java.net.http.HttpResponse<String> nodes = call(id, "GET", "/v1/nodes", token);
                assertThat(nodes.statusCode()).as(nodes.body()).isEqualTo(200);
                assertThat(nodes.body()).contains("\"nodeId\":\"b-0\"").contains("\"pool\":\"a\"")
                        .contains("\"pool\":\"b\"");
            }
            java.net.http.HttpResponse<String> cluster = call(id, "GET", "/v1/cluster", ADMIN_TOKEN);
            assertThat(cluster.statusCode()).as(cluster.body()).isEqualTo(200);
            assertThat(cluster.body()).contains("\"pool\":\"a\"").contains("\"pool\":\"b\"");
        }
        // b-0 is instance 2's (pool b): cordoned through instance 1, then returned to service through instance 1
        java.net.http.HttpResponse<String> cordon = call("1", "POST", "/v1/admin/nodes/b-0/cordon", ADMIN_TOKEN);
        assertThat(cordon.statusCode()).as(cordon.body()).isEqualTo(200);
        assertThat(cordon.body()).contains("\"cordoned\":true");
        assertThat(cordon.headers().firstValue("Gantry-Served-By")).hasValue("http://127.0.0.1:" + PORTS.get("2"));
        assertThat(call("2", "GET", "/v1/cluster", ADMIN_TOKEN).body()).contains("\"cordonedNodes\":[\"b-0\"]");
        assertThat(call("1", "POST", "/v1/admin/nodes/b-0/uncordon", ADMIN_TOKEN).statusCode()).isEqualTo(200);
        assertThat(call("1", "POST", "/v1/admin/nodes/nowhere-9/cordon", ADMIN_TOKEN).statusCode()).isEqualTo(404);
    }

    private static java.net.http.HttpResponse<String> call(String instance, String method, String path, String token)
            throws Exception {
        return HTTP.send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + PORTS.get(instance) + path))
                .header("Authorization", "Bearer " + token)
                .method(method, java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    private static void send(KafkaProducer<String, byte[]> producer, String key, QueueJobEvent value) throws Exception {
        Topic<QueueJobEvent> topic = Topics.QUEUE_JOB_EVENTS;
        producer.send(new ProducerRecord<>(topic.name(), key, AvroWire.encode(topic, value))).get();
    }

    private static QueueJobEvent dispatched(String jobId, String pool, int gpus, Long runSeconds) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("train")).setGpus(gpus)
                .setGpuModel("H100").setCpuMillis(1_000).setMemoryMiB(1_024).setRunSeconds(runSeconds).build();
        return QueueJobEvent.newBuilder().setEventId(UUID.randomUUID().toString()).setJobId(jobId)
                .setOccurredAt(Instant.now())
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(gpus).setPool(pool)
                        .setSpec(JobSpec.newBuilder().setName(jobId).setPriority(0).setTasks(List.of(task)).build())
                        .build()).build();
    }

    private static List<Object> payloads(String jobId) {
        try (TopicClient client = new TopicClient(broker.bootstrapServers())) {
            return client.readAllRaw(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                    .filter(r -> jobId.equals(r.key()))
                    .map(r -> AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS, r.value()))
                    .map(AllocationEvent::getPayload).toList();
        }
    }

    private static List<AllocationGranted> grants(String jobId) {
        return payloads(jobId).stream().filter(p -> p instanceof AllocationGranted).map(p -> (AllocationGranted) p)
                .toList();
    }

    private static Set<String> nodes(AllocationGranted g) {
        Set<String> out = new HashSet<>();
        g.getPlacements().forEach(p -> out.add(p.getNodeId()));
        return out;
    }

    private static Set<String> gpus(AllocationGranted g) {
        Set<String> out = new HashSet<>();
        g.getPlacements().forEach(p -> p.getGpuIndices().forEach(i -> out.add(p.getNodeId() + "#" + i)));
        return out;
    }

    private static long snapshots(String keyPrefix) {
        try (TopicClient client = new TopicClient(broker.bootstrapServers())) {
            return client.readAllRaw(Topics.snapshots(io.gantry.schemas.Service.PLACEMENT)).stream()
                    .filter(r -> r.key() != null && r.key().startsWith(keyPrefix)).count();
        }
    }
}
