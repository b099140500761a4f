package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.embedded.EmbeddedKafkaCluster;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobFailed;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.QueueJobEvent;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The whole system on a Kafka cluster of three brokers (replication factor 3, min.insync.replicas 2): a stream of
 * short jobs is submitted over HTTP while the broker that coordinates every service's transactions is stopped
 * without warning, kept down, and restarted. Every job submitted must end exactly once, and no GPU may be granted
 * to two runs at once, as the allocation log itself shows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BrokerChaosTest {
    static final int JOBS = 300;
    static final int STOP_AFTER = 90;
    static final Duration SUBMIT_EVERY = Duration.ofMillis(100);
    static final Duration DOWN_FOR = Duration.ofSeconds(12);
    static final Duration LONG = Duration.ofSeconds(120);

    DevCluster cluster;
    EmbeddedKafkaCluster kafka;
    List<Api> tenants;
    Api admin;

    @BeforeAll
    void startTheWholeSystemOnThreeBrokers() throws Exception {
        Path dataDir = Files.createTempDirectory("gantry-chaos-");
        Files.writeString(dataDir.resolve("tokens.yml"), """
                tokens:
                  - tenant: alpha
                    token: alpha-token-0001
                  - tenant: beta
                    token: beta-token-0002
                  - tenant: ops
                    role: admin
                    token: admin-token-0003
                """);
        Path repo = Path.of("..").toAbsolutePath().normalize();
        cluster = new DevCluster(new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(5),
                Map.of("placement", Map.of("gantry.placement.simulated.speedup", "10",
                                "gantry.placement.simulated.heartbeat-interval", "500ms"),
                        "recovery", Map.of("gantry.recovery.heartbeat-timeout", "10s"),
                        "queue", Map.of("gantry.queue.default-gpu-quota", "64")),
                "200m", 3)).start();
        kafka = cluster.kafkaCluster();
        String api = cluster.url("admission");
        tenants = List.of(new Api(api, "alpha-token-0001"), new Api(api, "beta-token-0002"));
        admin = new Api(api, "admin-token-0003");
        Api nodes = new Api(cluster.url("placement"), "admin-token-0003");
        await().atMost(LONG).until(() -> nodes.get("/v1/nodes").body().size() == 4);
    }

    @AfterAll
    void stopIt() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aBrokerStoppedMidFlowAndRestartedLosesNoJobAndGrantsNoGpuTwice() throws Exception {
        assertEveryTopicIsReplicatedThreeTimesWithTwoInSyncRequired();

        Map<Integer, String> accepted = new ConcurrentHashMap<>();
        Map<Integer, Long> waitedMs = new ConcurrentHashMap<>();
        AtomicInteger unavailable = new AtomicInteger();
        AtomicInteger gaveUp = new AtomicInteger();
        AtomicLong stoppedAt = new AtomicLong();
        AtomicLong restartedAt = new AtomicLong();
        Map<String, Object> chaos = new ConcurrentHashMap<>();

        Thread chaosMonkey = new Thread(() -> {
            try {
                while (accepted.size() < STOP_AFTER) {
                    TimeUnit.MILLISECONDS.sleep(20);
                }
                // the transaction coordinator of every transactional id (one partition of the transaction log)
                int victim = kafka.leaderOf("__transaction_state", 0);
                chaos.put("victim", victim);
                chaos.put("roles", roles(victim));
                stoppedAt.set(System.nanoTime());
                kafka.stop(victim);
                TimeUnit.MILLISECONDS.sleep(DOWN_FOR.toMillis());
                restartedAt.set(System.nanoTime());
                kafka.restart(victim);
                chaos.put("restartMs", (System.nanoTime() - restartedAt.get()) / 1_000_000);
                chaos.put("inSyncMs", kafka.awaitFullyReplicated(LONG).toMillis());
            } catch (Exception e) {
                chaos.put("error", e);
            }
        }, "chaos-monkey");
        chaosMonkey.start();

        ExecutorService submitters = Executors.newFixedThreadPool(8);
        long start = System.nanoTime();
        for (int i = 0; i < JOBS; i++) {
            long due = start + i * SUBMIT_EVERY.toNanos();
            long sleep = due - System.nanoTime();
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep);
            }
            int n = i;
            submitters.submit(() -> submit(n, accepted, waitedMs, unavailable, gaveUp));
        }
        submitters.shutdown();
        assertThat(submitters.awaitTermination(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long submittedAll = System.nanoTime();
        chaosMonkey.join(LONG.toMillis());
        assertThat(chaos).doesNotContainKey("error");
        assertThat(chaos).containsKey("inSyncMs");

        // every accepted job ends (the read model's view, as a user sees it)
        Set<String> ids = Set.copyOf(accepted.values());
        Map<String, JsonNode> finalState = await().atMost(LONG).pollInterval(Duration.ofSeconds(1))
                .until(this::allJobs, jobs -> ids.stream().allMatch(id -> jobs.containsKey(id)
                        && Set.of("SUCCEEDED", "FAILED", "CANCELLED").contains(jobs.get(id).path("state").asText())));
        long allEnded = System.nanoTime();

        Map<String, Long> byState = ids.stream().collect(Collectors.groupingBy(
                id -> finalState.get(id).path("state").asText(), TreeMap::new, Collectors.counting()));
        long requeued = ids.stream().filter(id -> finalState.get(id).path("attempt").asInt() > 1).count();

        // the logs: one JobSubmitted job per key, one terminal event per job, no GPU held twice
        try (TopicClient topics = new TopicClient(cluster.bootstrapServers())) {
            List<AdmissionJobEvent> submitted = topics.readAll(Topics.ADMISSION_JOB_EVENTS);
            Set<String> submittedJobs = submitted.stream().filter(e -> e.getPayload() instanceof JobSubmitted)
                    .map(AdmissionJobEvent::getJobId).collect(Collectors.toSet());
            long submittedRecords = submitted.stream().filter(e -> e.getPayload() instanceof JobSubmitted).count();

            List<QueueJobEvent> lifecycle = topics.readAll(Topics.QUEUE_JOB_EVENTS);
            Map<String, Long> terminalEvents = lifecycle.stream().filter(BrokerChaosTest::terminal)
                    .collect(Collectors.groupingBy(QueueJobEvent::getJobId, Collectors.counting()));
            List<Instant> ends = lifecycle.stream().filter(BrokerChaosTest::terminal)
                    .map(QueueJobEvent::getOccurredAt).sorted().toList();

            List<AllocationEvent> allocations = topics.readAll(Topics.PLACEMENT_ALLOCATION_EVENTS);
            AllocationAudit.Result audit = AllocationAudit.of(allocations);

            System.out.printf("""
                            broker chaos: %d jobs submitted (every %d ms, 8 clients) on 3 brokers (RF 3, min ISR 2), 4 x 8 GPUs
                              stopped broker %s (%s) after %d jobs were accepted; down %d ms; restarted in %s ms; \
                            all replicas in sync %s ms later
                              503 answers (retried with the same Idempotency-Key): %d; longest wait for a 202: %d ms; \
                            gave up: %d
                              all submitted after %d ms; all %d jobs ended %d ms later; final states %s; requeued %d
                              longest pause between two job ends: %d ms
                              JobSubmitted records %d for %d jobs; terminal events %d; allocations granted %d, released %d, \
                            at most %d GPUs held at once; violations %d
                            """,
                    JOBS, SUBMIT_EVERY.toMillis(), chaos.get("victim"), chaos.get("roles"), STOP_AFTER,
                    (restartedAt.get() - stoppedAt.get()) / 1_000_000, chaos.get("restartMs"), chaos.get("inSyncMs"),
                    unavailable.get(), Collections.max(waitedMs.values()), gaveUp.get(),
                    (submittedAll - start) / 1_000_000, ids.size(), (allEnded - submittedAll) / 1_000_000, byState,
                    requeued, longestGap(ends).toMillis(), submittedRecords, submittedJobs.size(),
                    terminalEvents.values().stream().mapToLong(Long::longValue).sum(), audit.grants(),
                    audit.releases(), audit.mostGpusHeld(), audit.violations().size());
            audit.violations().stream().limit(20).forEach(v -> System.out.println("  VIOLATION " + v));

            assertThat(gaveUp.get()).as("submissions never accepted").isZero();
            assertThat(accepted).hasSize(JOBS);
            assertThat(ids).as("one job per Idempotency-Key").hasSize(JOBS);
            assertThat(byState).as("every job ran to success").containsOnlyKeys("SUCCEEDED");
            assertThat(submittedJobs).as("no job the clients do not know of").isEqualTo(ids);
            assertThat(terminalEvents.keySet()).as("every job ended on the queue's log").isEqualTo(ids);
            assertThat(terminalEvents).as("and exactly once").allSatisfy((job, n) -> assertThat(n).isOne());
            assertThat(audit.violations()).as("GPUs granted twice").isEmpty();
            assertThat(audit.stillHeld()).as("allocations never released").isEmpty();
            assertThat(audit.grants()).isGreaterThanOrEqualTo(JOBS);
        }
    }

    private void submit(int n, Map<Integer, String> accepted, Map<Integer, Long> waitedMs, AtomicInteger unavailable,
                        AtomicInteger gaveUp) {
        Api api = tenants.get(n % tenants.size());
        String body = """
                {"name":"chaos-%d","tasks":[{"name":"w","command":["python","train.py"],"gpus":%d,"runSeconds":%d}]}
                """.formatted(n, new int[] {1, 2, 4}[n % 3], 3 + n % 5);
        long begin = System.nanoTime();
        long deadline = begin + LONG.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                Api.Response r = api.post("/v1/jobs", body, Map.of("Idempotency-Key", "chaos-" + n));
                if (r.status() == 202) {
                    accepted.put(n, r.text("jobId"));
                    waitedMs.put(n, (System.nanoTime() - begin) / 1_000_000);
                    return;
                }
                if (r.status() != 503) {
                    throw new IllegalStateException("job " + n + ": " + r.status() + " " + r.body());
                }
                unavailable.incrementAndGet();
            } catch (IllegalStateException e) {
                if (!(e.getCause() instanceof java.io.IOException)) {
                    gaveUp.incrementAndGet();
                    System.out.println("job " + n + " refused: " + e.getMessage());
                    return;
                }
            }
            try {
                TimeUnit.MILLISECONDS.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        gaveUp.incrementAndGet();
    }

    /** Every job of every tenant as the admin lists them, by id. */
    private Map<String, JsonNode> allJobs() {
        return admin.allJobs();
    }

    private static boolean terminal(QueueJobEvent e) {
        return e.getPayload() instanceof JobSucceeded || e.getPayload() instanceof JobFailed
                || e.getPayload() instanceof JobCancelled;
    }

    private static Duration longestGap(List<Instant> times) {
        Duration longest = Duration.ZERO;
        for (int i = 1; i < times.size(); i++) {
            Duration gap = Duration.between(times.get(i - 1), times.get(i));
            if (gap.compareTo(longest) > 0) {
                longest = gap;
            }
        }
        return longest;
    }

    /** What the broker about to be stopped does: controller, coordinator, leader of which Gantry topics. */
    private String roles(int broker) throws Exception {
        List<String> roles = new ArrayList<>(List.of("transaction coordinator"));
        if (kafka.activeController() == broker) {
            roles.add("active controller");
        }
        if (kafka.leaderOf("__consumer_offsets", 0) == broker) {
            roles.add("group coordinator");
        }
        List<String> led = new ArrayList<>();
        try (Admin admin = kafka.admin()) {
            Map<String, TopicDescription> topics = admin.describeTopics(Topics.allNames()).allTopicNames()
                    .get(10, TimeUnit.SECONDS);
            topics.values().forEach(t -> t.partitions().forEach(p -> {
                if (p.leader() != null && p.leader().id() == broker) {
                    led.add(t.name());
                }
            }));
        }
        roles.add("leader of " + led.size() + " of " + Topics.allNames().size() + " Gantry topics"
                + (led.contains(Topics.ADMISSION_JOB_EVENTS.name()) ? " incl. admission.job-events" : "")
                + (led.contains(Topics.QUEUE_JOB_EVENTS.name()) ? " incl. queue.job-events" : "")
                + (led.contains(Topics.PLACEMENT_ALLOCATION_EVENTS.name()) ? " incl. placement.allocation-events" : ""));
        return String.join(", ", roles);
    }

    /** Gantry's topics, billing's Kafka Streams topics and Kafka's offset and transaction logs alike. */
    private void assertEveryTopicIsReplicatedThreeTimesWithTwoInSyncRequired() throws Exception {
        try (Admin admin = kafka.admin()) {
            Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names()
                    .get(30, TimeUnit.SECONDS);
            assertThat(names).containsAll(Topics.allNames()).contains("__consumer_offsets", "__transaction_state");
            Map<String, TopicDescription> topics = admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
            Map<ConfigResource, Config> configs = admin.describeConfigs(names.stream()
                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList()).all().get(30, TimeUnit.SECONDS);
            for (String name : names) {
                topics.get(name).partitions().forEach(p -> assertThat(p.replicas()).as(name).hasSize(3));
                assertThat(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, name)).get("min.insync.replicas")
                        .value()).as(name).isEqualTo("2");
            }
            System.out.println("broker chaos: " + names.size() + " topics, each replicated 3 times, min.insync.replicas 2");
        }
    }
}
