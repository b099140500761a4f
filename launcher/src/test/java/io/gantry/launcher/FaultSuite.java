package io.gantry.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.embedded.EmbeddedKafkaCluster;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuShare;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobFailed;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TokensFile;
import io.gantry.testkit.TopicClient;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The machinery of a fault suite: the whole system started by {@link DevCluster} with four tenants, a simulated
 * 4 x 8-GPU cluster with time sped up 10x, and at least {@link #jobs()} short jobs (2-6 s of simulated run time),
 * more while the faults are still being inflicted, submitted over HTTP every 50 ms (20 a second) by 8 clients: single GPUs, 2 and 4 GPUs, gangs of 2 x 4 and 2 x 1 GPUs and half
 * GPUs, each with an Idempotency-Key and retried with it (on the next admission instance) on a refused connection or
 * a 5xx. While they flow a subclass's {@link #inflictFaults plan} hits the system, and each fault's recovery is
 * measured: when the part was back, when the service's consumer group had its inputs at a live process again, and
 * when jobs were next seen ending on {@code queue.job-events}.
 *
 * <p>Once every accepted job has ended: each is in exactly one terminal state (admission's read model and one
 * terminal event per job on {@code queue.job-events}, of the same kind); no GPU (device, or its thousandths when
 * shared) was held by two runs at once and no run was granted twice ({@link AllocationAudit} over
 * {@code placement.allocation-events}); and the GPU time billing reports per tenant equals, to the GPU-microseconds,
 * an independent recomputation from the allocation log: for every granted allocation, the thousandths of a GPU its
 * placements hold (1000 per whole GPU, plus each share) times {@code releasedAt - grantedAt} of its release, in the
 * backend's (virtual) milliseconds, which is billing's own time basis; the ledger entries (one per node of an
 * allocation) are counted the same way. The figures (recovery time per fault, totals) are printed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FaultSuite {
    static final Duration SUBMIT_EVERY = Duration.ofMillis(50);
    static final int CLIENTS = 8;
    static final int FIRST_FAULT_AFTER = 100;
    static final Duration KILLED_FOR = Duration.ofSeconds(2);
    static final Duration BETWEEN_FAULTS = Duration.ofSeconds(3);
    static final Duration FLOWING_AGAIN_WITHIN = Duration.ofSeconds(90);
    static final Duration ALL_ENDED_WITHIN = Duration.ofSeconds(300);
    static final Duration CHAOS_WITHIN = Duration.ofSeconds(240);
    static final Duration BROKER_DOWN_FOR = Duration.ofSeconds(10);
    static final Duration LONG = Duration.ofSeconds(180);
    static final Map<String, String> TENANTS = Map.of("alpha", "alpha-token-0001", "beta", "beta-token-0002",
            "gamma", "gamma-token-0003", "delta", "delta-token-0004");
    static final Set<String> TERMINAL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");

    Path dataDir;
    boolean passed;
    DevCluster cluster;
    EmbeddedKafkaCluster kafka;
    /** The tenants' clients, per admission instance. */
    List<List<Api>> tenants;
    Api admin;

    /**
     * One fault: what was done, when (wall clock, ms) it hit, when the part was back (service healthy, PostgreSQL
     * started, broker registered), when the restarted service's consumer group had taken its input partitions over
     * from the killed process (-1 for PostgreSQL and the broker), and when jobs were next seen ending after that
     * (-1: not within the bound).
     */
    record Fault(String what, long hitAt, long backAt, long consumingAt, long flowingAt) {
    }

    interface Step {
        void run() throws Exception;
    }

    /**
     * Inflicts one fault, waits until the part is back and a few seconds more, and returns while the recovery is
     * measured in the background: when the killed service's consumer group is taken over by the restarted process,
     * and when jobs end again after that (both bounded). {@code group}: the consumer group of a killed service, or
     * null; its members before the kill go to {@code killedMembers}.
     */
    CompletableFuture<Fault> inflict(String what, String group, JobEnds ends, ExecutorService watchers,
                                             Map<String, Set<String>> killedMembers, Step fault) throws Exception {
        Set<String> before = group == null ? Set.of() : members(group);
        if (group != null) {
            killedMembers.put(group, before);
        }
        long hit = System.currentTimeMillis();
        fault.run();
        long back = System.currentTimeMillis();
        return measureThenPause(watchers, () -> {
            long consuming = group == null ? -1 : awaitTakenOver(group, before);
            long flowing = ends.awaitOneAtOrAfter(Math.max(back, consuming), FLOWING_AGAIN_WITHIN);
            return new Fault(what, hit, back, consuming, flowing);
        });
    }

    interface Measure {
        Fault run() throws InterruptedException;
    }

    /** Measures a fault's recovery in the background and returns after the pause between faults. */
    static CompletableFuture<Fault> measureThenPause(ExecutorService watchers, Measure measure)
            throws InterruptedException {
        CompletableFuture<Fault> measured = CompletableFuture.supplyAsync(() -> {
            try {
                return measure.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }, watchers);
        TimeUnit.MILLISECONDS.sleep(BETWEEN_FAULTS.toMillis());
        return measured;
    }

    /**
     * When the group is stable again with members that all have partitions and none of which was there before the
     * kill: the restarted process owns its inputs (until then the coordinator waits for the killed member's session
     * to time out). -1 if that does not happen within {@link #FLOWING_AGAIN_WITHIN}.
     */
    long awaitTakenOver(String group, Set<String> before) throws InterruptedException {
        long deadline = System.nanoTime() + FLOWING_AGAIN_WITHIN.toNanos();
        try (Admin admin = admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                            .get(10, TimeUnit.SECONDS).get(group);
                    if (d.state() == ConsumerGroupState.STABLE && !d.members().isEmpty()
                            && d.members().stream().noneMatch(m -> before.contains(m.consumerId()))
                            && d.members().stream().allMatch(m -> !m.assignment().topicPartitions().isEmpty())) {
                        return System.currentTimeMillis();
                    }
                } catch (ExecutionException | TimeoutException e) {
                    // the coordinator is moving; ask again
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        return -1;
    }

    /**
     * One failover: kill -9 of the instance of {@code service} whose consumer holds the service's inputs, then the
     * wait until another instance's consumer holds them (the group waits out the killed member's session; a stateful
     * service's standby then restores the state and owns the work), then a restart of the killed instance, which
     * joins as a standby (or, for admission and billing, an idle member). Measured in the background: when jobs end
     * again after the takeover.
     */
    CompletableFuture<Fault> failOver(String service, JobEnds ends, ExecutorService watchers) throws Exception {
        return failOver(service, "gantry-" + service, ends, watchers);
    }

    /** {@link #failOver(String, JobEnds, ExecutorService)} of the unit of a split service whose group is {@code group}. */
    CompletableFuture<Fault> failOver(String service, String group, JobEnds ends, ExecutorService watchers)
            throws Exception {
        int owner = holder(group, -1);
        long hit = System.currentTimeMillis();
        cluster.service(service, owner).kill();
        long deadline = System.nanoTime() + FLOWING_AGAIN_WITHIN.toNanos();
        long taken = -1;
        while (System.nanoTime() < deadline && taken < 0) {
            if (holder(group, owner) >= 0) {
                taken = System.currentTimeMillis();
            } else {
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        long takenOver = taken;
        cluster.restart(service, owner);
        String what = "kill -9 " + service + " #" + owner + (group.equals("gantry-" + service) ? ""
                : " (" + group.substring(("gantry-" + service + "-").length()) + ")");
        return measureThenPause(watchers, () -> new Fault(what, hit, takenOver,
                takenOver, takenOver < 0 ? -1 : ends.awaitOneAtOrAfter(takenOver, FLOWING_AGAIN_WITHIN)));
    }

    /**
     * The instance whose consumer holds partitions of {@code group}'s inputs in a stable group, other than {@code not};
     * -1 while there is none (a rebalance under way). Waits for one when {@code not} is -1.
     */
    int holder(String group, int not) throws Exception {
        long deadline = System.nanoTime() + LONG.toNanos();
        do {
            try (Admin admin = admin()) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                        .get(10, TimeUnit.SECONDS).get(group);
                if (d.state() == ConsumerGroupState.STABLE) {
                    for (MemberDescription m : d.members()) {
                        String id = m.groupInstanceId().orElse("");
                        if (!m.assignment().topicPartitions().isEmpty() && id.startsWith(group + "-")) {
                            int k = Integer.parseInt(id.substring(group.length() + 1));
                            if (k != not) {
                                return k;
                            }
                        }
                    }
                }
            }
            if (not >= 0) {
                return -1;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("no instance holds the inputs of " + group);
    }

    Admin admin() {
        return Admin.create(Map.of(org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers()));
    }

    Set<String> members(String group) throws Exception {
        try (Admin admin = admin()) {
            return admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group).members()
                    .stream().map(MemberDescription::consumerId).collect(Collectors.toSet());
        }
    }

    /**
     * Tails {@code queue.job-events} as it is committed and keeps when each job ended (the queue's clock, the same
     * machine's as this test's), so the chaos thread can wait for jobs to end again after a fault.
     */
    static final class JobEnds implements AutoCloseable {
        private final ConcurrentSkipListSet<Long> times = new ConcurrentSkipListSet<>();
        private final KafkaConsumer<String, byte[]> consumer;
        private final Thread thread;
        private volatile boolean running = true;

        private JobEnds(String bootstrap) {
            consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(),
                    new ByteArrayDeserializer());
            thread = new Thread(this::run, "job-ends");
            thread.setDaemon(true);
        }

        static JobEnds tail(String bootstrap) {
            JobEnds ends = new JobEnds(bootstrap);
            ends.thread.start();
            return ends;
        }

        private void run() {
            try {
                List<TopicPartition> parts = consumer.partitionsFor(Topics.QUEUE_JOB_EVENTS.name(), Duration.ofSeconds(30))
                        .stream().map(p -> new TopicPartition(p.topic(), p.partition())).toList();
                consumer.assign(parts);
                consumer.seekToBeginning(parts);
                while (running) {
                    for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        QueueJobEvent e = AvroWire.decode(Topics.QUEUE_JOB_EVENTS, r.value());
                        if (terminalState(e) != null) {
                            times.add(e.getOccurredAt().toEpochMilli());
                        }
                    }
                }
            } catch (WakeupException e) {
                // closing
            } finally {
                consumer.close();
            }
        }

        /** The first job end at or after {@code t}, waiting up to {@code within} for one; -1 if none came. */
        long awaitOneAtOrAfter(long t, Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (System.nanoTime() < deadline) {
                Long end = times.ceiling(t);
                if (end != null) {
                    return end;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
            return -1;
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            consumer.wakeup();
            thread.join(10_000);
        }
    }

    /** How many jobs the suite submits. */
    abstract int jobs();

    /** How the system is laid out (brokers, instances per service); {@link #serviceProperties()} for the services. */
    abstract DevCluster.Config config(Path dataDir, Path repo) throws java.io.IOException;

    /**
     * Inflicts the faults, one after another, each with {@link #inflict} (or {@link #failOver}); runs on its own
     * thread once the first jobs are accepted; may record figures in {@code chaos}.
     */
    abstract void inflictFaults(JobEnds ends, ExecutorService watchers, List<CompletableFuture<Fault>> faults,
                                Map<String, Object> chaos) throws Exception;

    /** The simulated 8-GPU nodes of the cluster (4: the simulated backend's default cluster). */
    int nodes() {
        return 4;
    }

    /** More fields of job {@code n}'s JSON (e.g. {@code "pool":"b",}), before its tasks; none by default. */
    String jobFields(int n) {
        return "";
    }

    /** What the suite is, for its report's first line. */
    abstract String title();

    /**
     * Checks of the measured faults beyond the common ones (none by default); {@code lastSubmission}: when the last
     * job was accepted (after it, jobs stop ending once the backlog is done).
     */
    void checkFaults(List<Fault> measured, long lastSubmission) {
    }

    /** Checks of how many jobs ran more than once ({@code requeued}: attempt > 1 at the end; none by default). */
    void checkRequeued(long requeued) {
    }

    /**
     * The services' properties: time sped up 10x, half-second heartbeats, a 64-GPU default quota, and a snapshot of
     * the queue's, placement's and recovery's state every 500 input records (so a restart restores from a snapshot
     * and the history after it, as a long-running system does).
     */
    static Map<String, Map<String, String>> serviceProperties() {
        return Map.of("placement", Map.of("gantry.placement.simulated.speedup", "10",
                        "gantry.placement.simulated.heartbeat-interval", "500ms", SNAPSHOT_EVERY, "500"),
                "recovery", Map.of("gantry.recovery.heartbeat-timeout", "10s", SNAPSHOT_EVERY, "500"),
                "queue", Map.of("gantry.queue.default-gpu-quota", "64", SNAPSHOT_EVERY, "500"));
    }

    static final String SNAPSHOT_EVERY = "gantry.kafka.snapshot-every";

    /** The services whose log says they restored from a snapshot at least once. */
    java.util.Set<String> restoredFromSnapshots() throws java.io.IOException {
        java.util.Set<String> out = new java.util.TreeSet<>();
        for (String service : DevCluster.SERVICES) {
            Path log = cluster.service(service).logFile();
            if (java.nio.file.Files.exists(log)
                    && java.nio.file.Files.readString(log).contains(service + " restored state from a snapshot")) {
                out.add(service);
            }
        }
        return out;
    }

    @BeforeAll
    void startTheWholeSystem() throws Exception {
        dataDir = Files.createTempDirectory("gantry-" + getClass().getSimpleName() + "-");
        TokensFile.write(dataDir.resolve("tokens.yml"), new TreeMap<>(TENANTS), "admin-token-0009");
        Path repo = Path.of("..").toAbsolutePath().normalize();
        cluster = new DevCluster(config(dataDir, repo)).start();
        kafka = cluster.kafkaCluster();
        tenants = new ArrayList<>();
        for (int k = 0; k < cluster.instances(); k++) {
            String api = cluster.url("admission", k);
            tenants.add(new TreeMap<>(TENANTS).values().stream().map(token -> new Api(api, token)).toList());
        }
        admin = new Api(cluster.url("admission"), "admin-token-0009");
        Api nodes = new Api(cluster.url("placement"), "admin-token-0009");
        await().atMost(LONG).until(() -> nodes.get("/v1/nodes").body().size() == nodes());
    }

    @AfterAll
    void stopIt() throws java.io.IOException {
        if (cluster != null) {
            cluster.close();
        }
        if (!passed) {
            System.out.println(title() + ": the services' logs and the data are kept in " + dataDir);
        } else if (dataDir != null) {
            // a few hundred MB of Kafka logs, PostgreSQL and billing state per run
            try (var paths = Files.walk(dataDir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** Submits the jobs while {@link #inflictFaults} runs, waits for every job to end, and checks the outcome. */
    void runSuite(int expectedFaults) throws Exception {
        int jobs = jobs();
        Map<Integer, String> accepted = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> retried = new ConcurrentHashMap<>();
        AtomicInteger gaveUp = new AtomicInteger();
        Map<String, Object> chaos = new ConcurrentHashMap<>();
        long start = System.currentTimeMillis();

        JobEnds jobEnds = JobEnds.tail(cluster.bootstrapServers());
        ExecutorService watchers = Executors.newCachedThreadPool();
        List<CompletableFuture<Fault>> faults = new CopyOnWriteArrayList<>();
        Thread chaosMonkey = new Thread(() -> {
            try {
                while (accepted.size() < FIRST_FAULT_AFTER) {
                    TimeUnit.MILLISECONDS.sleep(20);
                }
                inflictFaults(jobEnds, watchers, faults, chaos);
            } catch (Exception e) {
                chaos.put("error", e);
            }
        }, "chaos-monkey");
        chaosMonkey.start();

        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        long begin = System.nanoTime();
        // at least jobs(), and on until every fault is inflicted: on a slow machine the faults take longer, and each
        // must still hit a system under load (at most 4 x jobs(), should the faults never end)
        int sent = 0;
        for (int i = 0; i < jobs || chaosMonkey.isAlive() && i < 4 * jobs; i++, sent++) {
            long sleep = begin + i * SUBMIT_EVERY.toNanos() - System.nanoTime();
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep);
            }
            int n = i;
            clients.submit(() -> submit(n, accepted, retried, gaveUp));
        }
        jobs = sent;
        clients.shutdown();
        assertThat(clients.awaitTermination(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long submittedAll = System.currentTimeMillis();
        chaosMonkey.join(CHAOS_WITHIN.toMillis());
        assertThat(chaos).doesNotContainKey("error");
        assertThat(faults).hasSize(expectedFaults);

        Set<String> ids = Set.copyOf(accepted.values());
        Map<String, JsonNode> finalState = awaitAllEnded(ids);
        long allEnded = System.currentTimeMillis();
        List<Fault> measured = new ArrayList<>();
        for (CompletableFuture<Fault> f : faults) {
            measured.add(f.get(2 * FLOWING_AGAIN_WITHIN.toSeconds(), TimeUnit.SECONDS));
        }
        jobEnds.close();
        watchers.shutdownNow();
        Map<String, Long> byState = ids.stream().collect(Collectors.groupingBy(
                id -> finalState.get(id).path("state").asText(), TreeMap::new, Collectors.counting()));
        long requeued = ids.stream().filter(id -> finalState.get(id).path("attempt").asInt() > 1).count();

        try (TopicClient topics = new TopicClient(cluster.bootstrapServers())) {
            Set<String> submittedJobs = topics.readAll(Topics.ADMISSION_JOB_EVENTS).stream()
                    .filter(e -> e.getPayload() instanceof JobSubmitted).map(AdmissionJobEvent::getJobId)
                    .collect(Collectors.toSet());

            List<QueueJobEvent> ends = topics.readAll(Topics.QUEUE_JOB_EVENTS).stream()
                    .filter(e -> terminalState(e) != null).toList();
            Map<String, List<String>> endsByJob = ends.stream().collect(Collectors.groupingBy(QueueJobEvent::getJobId,
                    Collectors.mapping(FaultSuite::terminalState, Collectors.toList())));
            List<Long> endTimes = ends.stream().map(e -> e.getOccurredAt().toEpochMilli()).sorted().toList();

            // every grant released (a release follows its run's end, possibly in a later transaction)
            List<AllocationEvent> allocations = topics.readAll(Topics.PLACEMENT_ALLOCATION_EVENTS);
            for (int i = 0; i < 30 && !AllocationAudit.of(allocations).stillHeld().isEmpty(); i++) {
                TimeUnit.SECONDS.sleep(1);
                allocations = topics.readAll(Topics.PLACEMENT_ALLOCATION_EVENTS);
            }
            AllocationAudit.Result audit = AllocationAudit.of(allocations);
            Recomputed recomputed = Recomputed.of(allocations);

            Map<String, long[]> billed = awaitBilling(recomputed.byTenant());

            System.out.printf("""
                            %s: %d jobs, 4 tenants, every %d ms from %d clients (%.1f jobs/s), %d x 8 GPUs, simulated \
                            time x10
                              all submitted %d s after the start; all ended %d s after that; %d s in all
                              retried submissions by answer %s; gave up %d
                              final states %s; requeued %d; terminal events %d for %d jobs
                              allocations granted %d, released %d; at most %d GPUs held at once; violations %d
                            """,
                    title(), jobs, SUBMIT_EVERY.toMillis(), CLIENTS, 1000.0 / SUBMIT_EVERY.toMillis(), nodes(),
                    (submittedAll - start) / 1000, (allEnded - submittedAll) / 1000, (allEnded - start) / 1000,
                    new TreeMap<>(retried), gaveUp.get(), byState, requeued, ends.size(), endsByJob.size(),
                    audit.grants(), audit.releases(), audit.mostGpusHeld(), audit.violations().size());
            System.out.println("  faults (t = seconds after the first submission; job ends from queue.job-events):");
            for (Fault f : measured) {
                System.out.printf("    t=%5.1f %-20s back after %5d ms, consuming again after %6s ms, jobs ending again "
                                + "after %6s ms; longest pause between job ends %d ms%s%n",
                        (f.hitAt() - start) / 1000.0, f.what(), f.backAt() - f.hitAt(), since(f.hitAt(), f.consumingAt()),
                        since(f.hitAt(), f.flowingAt()),
                        longestPause(endTimes, f.hitAt(), f.flowingAt() < 0 ? allEnded : f.flowingAt()),
                        f.backAt() < submittedAll ? "" : " (after the last submission)");
            }
            if (chaos.containsKey("inSyncMs")) {
                System.out.println("  broker back in sync " + chaos.get("inSyncMs") + " ms after its restart");
            }
            System.out.println("  GPU time per tenant, billed (billing's /v1/usage) vs recomputed from the allocation log:");
            Set<String> allTenants = new TreeSet<>(recomputed.byTenant().keySet());
            allTenants.addAll(billed.keySet());
            for (String tenant : allTenants) {
                long[] b = billed.getOrDefault(tenant, new long[2]);
                long[] r = recomputed.byTenant().getOrDefault(tenant, new long[2]);
                System.out.printf("    %-6s billed %s GPU-s in %d entries, recomputed %s GPU-s in %d entries: "
                                + "difference %d GPU-microseconds%n", tenant, seconds(b[0]), b[1], seconds(r[0]), r[1],
                        b[0] - r[0]);
            }
            audit.violations().stream().limit(20).forEach(v -> System.out.println("  VIOLATION " + v));
            audit.jobsInViolation().stream().limit(5).forEach(job -> printHistory(topics, job));
            recomputed.problems().stream().limit(20).forEach(p -> System.out.println("  MISMATCH " + p));

            assertThat(gaveUp.get()).as("submissions never accepted").isZero();
            assertThat(accepted).hasSize(jobs);
            assertThat(ids).as("one job per Idempotency-Key").hasSize(jobs);
            assertThat(submittedJobs).as("no job the clients do not know of").isEqualTo(ids);
            assertThat(endsByJob.keySet()).as("every job ended on the queue's log").isEqualTo(ids);
            assertThat(endsByJob).as("exactly once, in the state admission shows").allSatisfy((job, states) ->
                    assertThat(states).containsExactly(finalState.get(job).path("state").asText()));
            assertThat(audit.violations()).as("GPUs or runs granted twice").isEmpty();
            assertThat(audit.stillHeld()).as("allocations never released").isEmpty();
            assertThat(recomputed.problems()).as("releases that do not match their grant").isEmpty();
            assertThat(billed.keySet()).isEqualTo(recomputed.byTenant().keySet());
            billed.forEach((tenant, b) -> assertThat(b).as("GPU-microseconds and ledger entries billed to %s", tenant)
                    .containsExactly(recomputed.byTenant().get(tenant)));
            checkFaults(measured, submittedAll);
            checkRequeued(requeued);
        }
        passed = true;
    }

    /**
     * A job's records on the allocation log and the queue's job and preemption logs, with partition, offset and
     * broker timestamp: what a violation needs to be explained after the run (the broker's data is gone by then).
     */
    private static void printHistory(TopicClient topics, String job) {
        System.out.println("  history of job " + job + ":");
        for (var topic : List.of(Topics.QUEUE_JOB_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS,
                Topics.PLACEMENT_ALLOCATION_EVENTS)) {
            for (ConsumerRecord<String, byte[]> r : topics.readAllRaw(topic)) {
                if (job.equals(r.key())) {
                    Object value = AvroWire.decode(topic, r.value());
                    System.out.printf("    %s-%d@%d t=%d %s%n", topic.name(), r.partition(), r.offset(), r.timestamp(),
                            value);
                }
            }
        }
    }

    /**
     * What the allocation log says each tenant used, computed here from grants and releases without billing's
     * code: per tenant {GPU-microseconds (thousandths of a GPU x milliseconds), entries (one per node of an
     * allocation)}, and every release that disagrees with its grant.
     */
    record Recomputed(Map<String, long[]> byTenant, List<String> problems) {
        static Recomputed of(List<AllocationEvent> log) {
            Map<String, AllocationGranted> grants = new HashMap<>();
            Map<String, long[]> byTenant = new TreeMap<>();
            List<String> problems = new ArrayList<>();
            for (AllocationEvent e : log) {
                if (e.getPayload() instanceof AllocationGranted g) {
                    grants.put(g.getAllocationId(), g);
                } else if (e.getPayload() instanceof AllocationReleased r) {
                    AllocationGranted g = grants.get(r.getAllocationId());
                    if (g == null) {
                        problems.add("release of " + r.getAllocationId() + " without a grant");
                        continue;
                    }
                    if (!g.getGrantedAt().equals(r.getGrantedAt()) || !g.getTenant().equals(r.getTenant())
                            || g.getAttempt() != r.getAttempt() || !g.getPlacements().equals(r.getPlacements())) {
                        problems.add("release of " + r.getAllocationId() + " (job " + e.getJobId()
                                + ") does not repeat its grant");
                    }
                    long milli = 0;
                    Set<String> nodes = new HashSet<>();
                    for (TaskPlacement p : g.getPlacements()) {
                        milli += 1000L * p.getGpuIndices().size();
                        for (GpuShare s : p.getGpuShares()) {
                            milli += s.getMilli();
                        }
                        nodes.add(p.getNodeId());
                    }
                    long millis = r.getReleasedAt().toEpochMilli() - g.getGrantedAt().toEpochMilli();
                    long[] acc = byTenant.computeIfAbsent(g.getTenant(), t -> new long[2]);
                    acc[0] += milli * millis;
                    acc[1] += nodes.size();
                }
            }
            return new Recomputed(byTenant, problems);
        }
    }

    /**
     * Billing's figures per tenant {GPU-microseconds, entries}, once they equal the recomputation or stop changing
     * (billing consumes the releases on its own time, and catches up after its own and PostgreSQL's crash).
     */
    private Map<String, long[]> awaitBilling(Map<String, long[]> expected) throws InterruptedException {
        Api usage = new Api(cluster.url("billing"), "admin-token-0009");
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        Map<String, long[]> billed = Map.of();
        String previous = null;
        int unchanged = 0;
        while (System.nanoTime() < deadline) {
            billed = billed(usage);
            String now = render(billed);
            if (now.equals(render(expected))) {
                return billed;
            }
            unchanged = now.equals(previous) ? unchanged + 1 : 0;
            if (unchanged >= 15) {
                return billed;
            }
            previous = now;
            TimeUnit.SECONDS.sleep(1);
        }
        return billed;
    }

    private static Map<String, long[]> billed(Api usage) {
        Map<String, long[]> out = new TreeMap<>();
        Api.Response r = usage.get("/v1/usage");
        if (r.status() != 200) {
            return out;
        }
        for (JsonNode row : r.body().path("rows")) {
            long[] acc = out.computeIfAbsent(row.path("tenant").asText(), t -> new long[2]);
            acc[0] += row.path("gpuMicros").asLong();
            acc[1] += row.path("entries").asLong();
        }
        return out;
    }

    private static String render(Map<String, long[]> m) {
        StringBuilder s = new StringBuilder();
        new TreeMap<>(m).forEach((k, v) -> s.append(k).append('=').append(v[0]).append('/').append(v[1]).append(';'));
        return s.toString();
    }

    private static String since(long from, long to) {
        return to < 0 ? "-" : Long.toString(to - from);
    }

    private static String seconds(long gpuMicros) {
        return java.math.BigDecimal.valueOf(gpuMicros, 6).toPlainString();
    }

    private void submit(int n, Map<Integer, String> accepted, Map<String, AtomicInteger> retried, AtomicInteger gaveUp) {
        int attempt = 0;
        String task = switch (n % 10) {
            case 4, 5 -> "\"gpus\":2";
            case 6 -> "\"gpus\":4";
            case 7 -> "\"replicas\":2,\"gpus\":4";
            case 8 -> "\"replicas\":2,\"gpus\":1";
            case 9 -> "\"gpus\":0,\"gpuMilli\":500";
            default -> "\"gpus\":1";
        };
        String body = """
                {"name":"chaos-%d",%s"tasks":[{"name":"w","command":["python","train.py"],%s,"runSeconds":%d}]}
                """.formatted(n, jobFields(n), task, 2 + n % 5);
        long deadline = System.nanoTime() + LONG.toNanos();
        while (System.nanoTime() < deadline) {
            String answer;
            // a client that finds one admission instance down tries the next (a load balancer's retry)
            List<Api> at = tenants.get((n + attempt++) % tenants.size());
            Api api = at.get(n % at.size());
            try {
                Api.Response r = api.post("/v1/jobs", body, Map.of("Idempotency-Key", "chaos-" + n));
                if (r.status() == 202) {
                    accepted.put(n, r.text("jobId"));
                    return;
                }
                if (r.status() < 500) {
                    gaveUp.incrementAndGet();
                    System.out.println("job " + n + " refused: " + r.status() + " " + r.body());
                    return;
                }
                answer = Integer.toString(r.status());
            } catch (IllegalStateException e) {
                if (!(e.getCause() instanceof java.io.IOException)) {
                    gaveUp.incrementAndGet();
                    System.out.println("job " + n + " failed: " + e);
                    return;
                }
                answer = "no connection";
            }
            retried.computeIfAbsent(answer, a -> new AtomicInteger()).incrementAndGet();
            try {
                TimeUnit.MILLISECONDS.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        gaveUp.incrementAndGet();
    }

    /** Every job's final state, once each has one; else (after a bound) fails saying where the others are. */
    private Map<String, JsonNode> awaitAllEnded(Set<String> ids) throws InterruptedException {
        long deadline = System.nanoTime() + ALL_ENDED_WITHIN.toNanos();
        Map<String, JsonNode> jobs = Map.of();
        while (System.nanoTime() < deadline) {
            jobs = allJobs();
            Map<String, JsonNode> seen = jobs;
            if (ids.stream().allMatch(id -> seen.containsKey(id)
                    && TERMINAL.contains(seen.get(id).path("state").asText()))) {
                return jobs;
            }
            TimeUnit.SECONDS.sleep(2);
        }
        Map<String, JsonNode> seen = jobs;
        Map<String, Long> states = ids.stream().collect(Collectors.groupingBy(id -> seen.containsKey(id)
                ? seen.get(id).path("state").asText() : "MISSING", TreeMap::new, Collectors.counting()));
        List<String> examples = ids.stream().filter(id -> !seen.containsKey(id)
                || !TERMINAL.contains(seen.get(id).path("state").asText())).limit(5)
                .map(id -> String.valueOf(seen.get(id))).toList();
        throw new AssertionError("not every job ended within " + ALL_ENDED_WITHIN + ": " + states + ", e.g. " + examples);
    }

    /** Every job of every tenant as the admin lists them, by id. */
    private Map<String, JsonNode> allJobs() {
        return admin.allJobs();
    }

    private static String terminalState(QueueJobEvent e) {
        Object p = e.getPayload();
        return p instanceof JobSucceeded ? "SUCCEEDED" : p instanceof JobFailed ? "FAILED"
                : p instanceof JobCancelled ? "CANCELLED" : null;
    }

    /** The longest time without a job end within [from, to], the interval's own ends counting as edges. */
    private static long longestPause(List<Long> sortedEnds, long from, long to) {
        long last = from;
        long longest = 0;
        for (long e : sortedEnds) {
            if (e < from) {
                continue;
            }
            if (e > to) {
                break;
            }
            longest = Math.max(longest, e - last);
            last = e;
        }
        return Math.max(longest, to - last);
    }
}
