package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.CapacityReservationCancelled;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.DeviceFaultDecided;
import io.gantry.events.DeviceFaultKind;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.FaultAction;
import io.gantry.events.FaultCategory;
import io.gantry.events.GpuDevice;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobFailed;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSucceeded;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeFailureReason;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeRecovered;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PreemptionReason;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Placement's snapshots: restoring a snapshot taken anywhere in a history and then the history after it leaves the
 * state a restore of the whole history leaves — the same next snapshot, the same nodes, allocations, reservations and
 * inventory in every pool, the same clock, the same decisions on what comes next — from far fewer records. Histories
 * are random walks over two pools, driven through the router as the running service is: dispatches (placed, deferred,
 * stale), runs ending on the simulated backend, time limits, preemptions, cancellations, requeues and job ends, node
 * failures and recoveries, device faults, operator cordons, capacity reservations and their drains (bounded ones
 * stopping checkpointed runs), inputs handled twice; and, from before, legacy heartbeats and invalid registrations.
 */
class PlacementSnapshotTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Set<Topic<?>> RESTORED = Set.copyOf(PlacementProcessor.loop(
            new SimulatedBackend(List.of()), new VirtualClock(new MutableClock(T0), 1), new TopologyPlacer(),
            Duration.ofSeconds(1), true, List.of(8), Duration.ofMillis(200)).restoreFrom());
    private static final Map<String, List<String>> POOLS = Map.of("a", List.of("a0", "a1", "a2"), "b", List.of("b0", "b1"));
    private static final List<String> NODES = List.of("a0", "a1", "a2", "b0", "b1");

    /** The history (and the live snapshot) under test, written next to the dumps when a case fails. */
    private static String failureContext = "";

    private record Rec(Topic<?> topic, String key, Object value) {
    }

    /** A router over pools a and b (simulated, 8 x H100 per node) on one clock, as placement builds it. */
    private static PoolRouter router(VirtualClock clock) {
        List<PlacementHandler> handlers = new ArrayList<>();
        for (String pool : List.of("a", "b")) {
            ClusterState state = new ClusterState("simulated", new TopologyPlacer());
            handlers.add(new PlacementHandler(state, new SimulatedBackend(nodes(POOLS.get(pool)), 0), clock,
                    Duration.ofSeconds(5)).inPool(pool));
        }
        return new PoolRouter(handlers).restoring(RESTORED);
    }

    private static List<NodeSpec> nodes(List<String> ids) {
        NodeSpec n = ClusterFile.defaultCluster().get(0);
        return ids.stream().map(id -> new NodeSpec(id, n.backend(), n.gpus(), n.cpuMillis(), n.memoryMiB(), Map.of(),
                n.numaCpuMillis(), List.of(), n.numaMemoryMiB())).toList();
    }

    /** Collects what the router publishes on its restore topics into the history, and everything into {@code all}. */
    private static Output into(List<Rec> history, List<Rec> all) {
        return new Output() {
            @Override
            public <V> void send(Topic<V> topic, String key, V value) {
                all.add(new Rec(topic, key, value));
                if (RESTORED.contains(topic)) {
                    history.add(new Rec(topic, key, value));
                }
            }
        };
    }

    @Test
    void aSnapshotAnywhereInAHistoryThenTheRestRebuildsTheStateOfTheWholeHistoryFromFewerRecords() {
        long historyRecords = 0;
        long snapshotRecords = 0;
        for (long seed = 1; seed <= 120; seed++) {
            Random r = new Random(seed);
            MutableClock wall = new MutableClock(T0);
            VirtualClock clock = new VirtualClock(wall, 1);
            PoolRouter live = router(clock);
            Generator g = new Generator(live, wall, clock, r);
            List<Rec> history = g.history(500);
            PoolRouter whole = restored(history).router();
            List<Rec> wholeSnapshot = snapshot(whole);
            String expected = dumpAfterProbe(restored(history), g.jobs());
            failureContext = lines(history);

            // anywhere; and between an input and what handling it published (a cancellation and its release)
            List<Integer> cuts = new ArrayList<>(List.of(r.nextInt(history.size() + 1)));
            List<Integer> cancelled = new ArrayList<>();
            for (int i = 0; i < history.size(); i++) {
                if (history.get(i).value() instanceof QueueJobEvent e && e.getPayload() instanceof JobCancelled) {
                    cancelled.add(i + 1);
                }
            }
            if (!cancelled.isEmpty()) {
                cuts.add(cancelled.get(r.nextInt(cancelled.size())));
            }
            for (int cut : cuts) {
                List<Rec> snapshot = snapshot(restored(history.subList(0, cut)).router());
                List<Rec> fromSnapshot = new ArrayList<>(snapshot);
                fromSnapshot.addAll(history.subList(cut, history.size()));
                Restored resumed = restored(fromSnapshot);
                String why = "seed " + seed + ", snapshot after " + cut + " of " + history.size() + " records";
                same(lines(snapshot(resumed.router())), lines(wholeSnapshot), why + ", the next snapshot");
                same(dumpAfterProbe(resumed, g.jobs()), expected, why);
            }
            String why = "seed " + seed;
            // the running service's own snapshot (it handled the inputs, published the rest)
            failureContext = lines(history) + "\n---- live snapshot\n" + lines(snapshot(live));
            Restored fromLive = restored(snapshot(live));
            same(dumpAfterProbe(fromLive, g.jobs()), expected, why + ", the live service's snapshot");
            historyRecords += history.size();
            snapshotRecords += wholeSnapshot.size();
        }
        assertThat(snapshotRecords).as("records in the snapshots of the whole histories, of " + historyRecords)
                .isLessThan(historyRecords / 4);
    }

    @Test
    void withoutTheQueuesJobEventsToRestoreTheSnapshotHoldsNoneOfThemEvenOfAJobEndedWhileItsRunIsLive() {
        Set<Topic<?>> restored = Set.copyOf(PlacementProcessor.loop(new SimulatedBackend(List.of()),
                new VirtualClock(new MutableClock(T0), 1), new TopologyPlacer(), Duration.ofSeconds(1), false, List.of(8),
                Duration.ofMillis(200)).restoreFrom());
        assertThat(restored).doesNotContain(Topics.QUEUE_JOB_EVENTS);
        MutableClock wall = new MutableClock(T0);
        PoolRouter r = router(new VirtualClock(wall, 1)).restoring(restored);
        List<Rec> all = new ArrayList<>();
        Output out = into(new ArrayList<>(), all);
        r.restored(out);
        r.handle(Topics.QUEUE_JOB_EVENTS, "j", dispatch("j", "a", 2, 1, 8, 600L, null, T0), out);
        // a cancellation of an earlier attempt: the run of attempt 2 goes on, the job is over for the queue
        r.handle(Topics.QUEUE_JOB_EVENTS, "j", QueueJobEvent.newBuilder().setEventId("c-j").setJobId("j")
                .setOccurredAt(T0).setPayload(JobCancelled.newBuilder().setTenant("vision").setAttempt(1)
                        .setRequestedBy("user").build()).build(), out);
        assertThat(r.pools().get("a").state().liveAllocation("j")).isPresent();

        List<Topic<?>> topics = new ArrayList<>();
        r.snapshot(new SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                topics.add(topic);
            }
        });

        assertThat(topics).isNotEmpty().allSatisfy(t -> assertThat(restored).contains(t));
    }

    private record Restored(PoolRouter router, VirtualClock clock, MutableClock wall) {
    }

    /**
     * A fresh placement (new backends) that restored {@code records}, its wall clock behind what was written (so
     * its time goes on from the newest time read back).
     */
    private static Restored restored(List<Rec> records) {
        MutableClock wall = new MutableClock(T0);
        VirtualClock clock = new VirtualClock(wall, 1);
        PoolRouter r = router(clock);
        records.forEach(rec -> r.restore(rec.topic(), rec.key(), rec.value()));
        return new Restored(r, clock, wall);
    }

    private static List<Rec> snapshot(PoolRouter r) {
        List<Rec> out = new ArrayList<>();
        assertThat(r.snapshot(new SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                assertThat(RESTORED).contains(topic);
                out.add(new Rec(topic, key, value));
            }
        })).isTrue();
        assertThat(r.snapshotRecords()).isEqualTo(out.size());
        return out;
    }

    private static String lines(List<Rec> records) {
        StringBuilder out = new StringBuilder();
        records.forEach(rec -> out.append(rec.topic().name()).append(' ').append(rec.key()).append(' ')
                .append(rec.value()).append('\n'));
        return out.toString();
    }

    /** Equal dumps; else the first line that differs (the whole dumps go to the temporary directory). */
    private static void same(String actual, String expected, String why) {
        if (actual.equals(expected)) {
            return;
        }
        String[] a = actual.split("\n");
        String[] e = expected.split("\n");
        int i = 0;
        while (i < a.length && i < e.length && a[i].equals(e[i])) {
            i++;
        }
        try {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("placement-snapshot-");
            java.nio.file.Files.writeString(dir.resolve("actual.txt"), actual);
            java.nio.file.Files.writeString(dir.resolve("expected.txt"), expected);
            java.nio.file.Files.writeString(dir.resolve("history.txt"), failureContext);
            why += " (dumps in " + dir + ")";
        } catch (java.io.IOException ignored) {
            // the first difference is enough
        }
        assertThat(i < a.length ? a[i] : "<end>").as(why + ", line " + (i + 1))
                .isEqualTo(i < e.length ? e[i] : "<end>");
    }

    /**
     * What a restored placement holds and decides next: its state once restored (the backend's nodes registered,
     * live runs adopted), then the decisions on further inputs — every job dispatched again at its attempt and the
     * next, a node failing, an hour passing — and the state after them.
     */
    private static String dumpAfterProbe(Restored s, List<String> jobs) {
        List<Rec> all = new ArrayList<>();
        Output out = into(new ArrayList<>(), all);
        StringBuilder dump = new StringBuilder();
        s.router().restored(out);
        dump.append("clock ").append(s.clock().instant()).append('\n');
        dump(s.router, jobs, dump);
        for (String job : jobs) {
            for (String pool : List.of("a", "b")) {
                int attempt = s.router().pools().get(pool).state().grantedAttempt(job).orElse(0);
                for (int a = Math.max(1, attempt); a <= attempt + 1; a++) {
                    QueueJobEvent d = dispatch(job, pool, a, 1, 2, 60L, null, T0);
                    s.router().handle(Topics.QUEUE_JOB_EVENTS, job, d, out);
                }
            }
        }
        s.router().handle(Topics.RECOVERY_NODE_EVENTS, "a0", failed("a0", T0), out);
        s.wall().advance(Duration.ofHours(1));
        s.router().tick(s.wall().instant(), out);
        dump.append("decided\n");
        all.stream().map(rec -> canonical(rec.value())).sorted().forEach(p -> dump.append("  ").append(p).append('\n'));
        dump(s.router, jobs, dump);
        return dump.toString();
    }

    /** A published record without what differs between two runs of the same decision (ids, run tokens). */
    private static String canonical(Object value) {
        if (!(value instanceof SpecificRecord rec) || rec.getSchema().getField("payload") == null) {
            return String.valueOf(value);
        }
        Object payload = rec.get(rec.getSchema().getField("payload").pos());
        if (payload instanceof AllocationGranted g) {
            payload = AllocationGranted.newBuilder(g).setRunTokenSha256(null).build();
        }
        Object key = rec.getSchema().getField("jobId") != null ? rec.get(rec.getSchema().getField("jobId").pos())
                : rec.getSchema().getField("nodeId") != null ? rec.get(rec.getSchema().getField("nodeId").pos()) : "";
        return rec.getSchema().getName() + " " + key + " " + payload;
    }

    private static void dump(PoolRouter r, List<String> jobs, StringBuilder out) {
        for (Map.Entry<String, PlacementHandler> p : new TreeMap<>(r.pools()).entrySet()) {
            ClusterState state = p.getValue().state();
            out.append("pool ").append(p.getKey()).append('\n');
            state.nodes().forEach(n -> out.append("  node ").append(n).append(" healthy=")
                    .append(state.isHealthy(n.nodeId())).append('\n'));
            for (Allocation a : state.liveAllocations()) {
                out.append("  live ").append(a).append(" started=").append(state.isStarted(a.allocationId()))
                        .append(" stop=").append(state.stopDeadline(a.allocationId()).orElse(null)).append(" env=")
                        .append(p.getValue().backend() instanceof SimulatedBackend b
                                ? new TreeMap<>(b.environment(a.allocationId(), "w", 0)) : Map.of()).append('\n');
            }
            out.append("  deadlines ").append(state.pendingDeadlines()).append('\n');
            out.append("  reservations ").append(state.reservations()).append('\n');
            out.append("  inventory ").append(state.snapshot()).append('\n');
            out.append("  free ").append(state.freeCapacity()).append('\n');
            for (String job : jobs) {
                out.append("  job ").append(job).append(" granted=").append(state.grantedAttempt(job))
                        .append(" avoiding=").append(state.avoiding(job)).append('\n');
            }
            out.append("  avoidingJobs ").append(state.avoidingJobs()).append('\n');
            out.append("  rejected ").append(new TreeMap<>(p.getValue().rejectedRegistrations())).append('\n');
            out.append("  heartbeats ").append(new TreeMap<>(p.getValue().heartbeatSequences())).append('\n');
            out.append("  running ").append(new java.util.TreeSet<>(p.getValue().backend() instanceof SimulatedBackend b
                    ? b.running() : Set.of())).append('\n');
        }
    }

    /** Drives a router as the running service is driven, recording the history of its restore topics. */
    private static final class Generator {
        private final PoolRouter router;
        private final MutableClock wall;
        private final VirtualClock clock;
        private final Random r;
        private final List<Rec> history = new ArrayList<>();
        private final Output out;
        /** Job id to [pool, attempt, gpus per task, tasks, run seconds, time limit or -1]; ended jobs removed. */
        private final Map<String, long[]> open = new LinkedHashMap<>();
        private final Map<String, String> poolOf = new LinkedHashMap<>();
        private final List<String> all = new ArrayList<>();
        /** Inputs of jobs not ended yet, for handling one again. */
        private final List<Rec> inputs = new ArrayList<>();
        private final Map<String, Object> newestHealth = new java.util.HashMap<>();
        private int next;

        Generator(PoolRouter router, MutableClock wall, VirtualClock clock, Random r) {
            this.router = router;
            this.wall = wall;
            this.clock = clock;
            this.r = r;
            this.out = into(history, new ArrayList<>());
        }

        List<String> jobs() {
            return all;
        }

        List<Rec> history(int steps) {
            legacy();
            router.restored(out);
            for (int step = 0; step < steps; step++) {
                int i = step;
                wall.advance(Duration.ofMillis(r.nextInt(15_000)));
                Instant now = clock.instant();
                int op = r.nextInt(100);
                String node = NODES.get(r.nextInt(NODES.size()));
                String job = open.isEmpty() ? null : new ArrayList<>(open.keySet()).get(r.nextInt(open.size()));
                if (op < 18 || job == null) {
                    submit(now);
                } else if (op < 36) {
                    router.tick(wall.instant(), out);
                } else if (op < 54) {
                    settle(job, now);
                } else if (op < 60) {
                    live(job).ifPresent(a -> input(Topics.QUEUE_PREEMPTION_EVENTS, job, QueuePreemptionEvent
                            .newBuilder().setEventId("p-" + job + "-" + i).setJobId(job).setOccurredAt(now)
                            .setPayload(JobPreempted.newBuilder().setTenant("vision").setAttempt(a.attempt())
                                    .setReason(PreemptionReason.values()[r.nextInt(PreemptionReason.values().length)])
                                    .setGraceSeconds(r.nextBoolean() ? r.nextInt(60) : r.nextInt(7200)).setMessage("make room").build()).build()));
                } else if (op < 63) {
                    input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("c-" + job)
                            .setJobId(job).setOccurredAt(now).setPayload(JobCancelled.newBuilder().setTenant("vision")
                                    .setAttempt((int) open.get(job)[1]).setRequestedBy("user").build()).build());
                    end(job);
                } else if (op < 67) {
                    input(Topics.RECOVERY_NODE_EVENTS, node, failed(node, now));
                } else if (op < 72) {
                    input(Topics.RECOVERY_NODE_EVENTS, node, NodeHealthEvent.newBuilder().setEventId("ok-" + node + i)
                            .setNodeId(node).setOccurredAt(now).setPayload(NodeRecovered.newBuilder()
                                    .setMessage("back").build()).build());
                } else if (op < 75) {
                    FaultAction action = FaultAction.values()[r.nextInt(FaultAction.values().length)];
                    router.handle(Topics.RECOVERY_DEVICE_EVENTS, node, DeviceHealthEvent.newBuilder()
                            .setEventId("dev-" + i).setNodeId(node).setOccurredAt(now)
                            .setPayload(DeviceFaultDecided.newBuilder().setFaultEventId("f-" + i).setFaultAt(now)
                                    .setGpuIndex(r.nextBoolean() ? r.nextInt(8) : null).setKind(DeviceFaultKind.XID)
                                    .setXid(79).setCategory(action == FaultAction.FAIL_RUNS ? FaultCategory.APPLICATION
                                            : FaultCategory.HARDWARE).setAction(action).setMessage("Xid 79").build())
                            .build(), out);
                } else if (op < 79) {
                    if (r.nextBoolean()) {
                        router.cordon(node, r.nextBoolean(), out);
                    } else {
                        router.uncordonGpus(node, Set.of(), out);
                    }
                } else if (op < 84) {
                    long[] j = open.get(job);
                    if (live(job).isEmpty()) {
                        router.handle(Topics.QUEUE_RESERVATION_EVENTS, job, QueueReservationEvent.newBuilder()
                                .setEventId("r-" + job + i).setJobId(job).setOccurredAt(now)
                                .setPayload(CapacityReservationRequested.newBuilder().setTenant("vision")
                                        .setAttempt((int) j[1]).setSpec(spec(job, j)).setMessage("starving")
                                        .setMaxDrainSeconds(r.nextBoolean() ? null : 60L).build()).build(), out);
                    }
                } else if (op < 86) {
                    router.handle(Topics.QUEUE_RESERVATION_EVENTS, job, QueueReservationEvent.newBuilder()
                            .setEventId("rc-" + job + i).setJobId(job).setOccurredAt(now)
                            .setPayload(CapacityReservationCancelled.newBuilder().setTenant("vision")
                                    .setAttempt((int) open.get(job)[1]).setReason("no longer starving").build()).build(), out);
                } else if (op < 92) {
                    // an input handled again (redelivered after a restart): on its topic once, seen twice; a
                    // dispatch or preemption of a job placement has not seen end (its run did not succeed), or a
                    // node's newest health (what follows a commit)
                    List<Rec> again = inputs.stream().filter(rec -> rec.value() instanceof NodeHealthEvent
                            ? newestHealth.get(rec.key()) == rec.value() : open.containsKey(rec.key())
                            && !(rec.value() instanceof QueueJobEvent e && !(e.getPayload() instanceof JobDispatched))
                            && !forgotten(rec.key())).toList();
                    if (!again.isEmpty()) {
                        Rec rec = again.get(r.nextInt(again.size()));
                        router.handle(rec.topic(), rec.key(), rec.value(), out);
                    }
                } else if (op < 96) {
                    // a checkpoint (not restored): a run in a bounded drain's way may be stopped now, by a stop that
                    // only placement.stop-events records
                    live(job).ifPresent(a -> router.handle(Topics.ADMISSION_CHECKPOINT_EVENTS, job, CheckpointEvent
                            .newBuilder().setEventId("ck-" + job + "-" + i).setJobId(job).setOccurredAt(now)
                            .setPayload(CheckpointCommitted.newBuilder().setTenant("vision").setAttempt(a.attempt())
                                    .setStep(i).setPath("/ckpt/" + i).setReportedVia("api").setCommittedAt(now)
                                    .build()).build(), out));
                } else {
                    router.tick(wall.instant(), out);
                }
            }
            // the queue ends what ran: the newest records are of jobs that are over
            wall.advance(Duration.ofSeconds(30));
            router.tick(wall.instant(), out);
            for (String job : new ArrayList<>(open.keySet())) {
                ClusterState state = router.pools().get(poolOf.get(job)).state();
                if (live(job).isEmpty() && (state.grantedAttempt(job).orElse(0) >= open.get(job)[1]
                        || granted(job, open.get(job)[1]))) {
                    input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("s-" + job)
                            .setJobId(job).setOccurredAt(clock.instant()).setPayload(JobSucceeded.newBuilder()
                                    .setTenant("vision").setAttempt((int) open.get(job)[1]).build()).build());
                    end(job);
                }
            }
            return history;
        }

        /** Records from before (old releases): heartbeats on the node topic and registrations that do not read. */
        private void legacy() {
            for (String node : NODES) {
                if (r.nextBoolean()) {
                    for (int k = 0; k < 1 + r.nextInt(3); k++) {
                        history.add(new Rec(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder()
                                .setEventId("hb-" + node + k).setNodeId(node).setOccurredAt(T0.minusSeconds(100 - k))
                                .setPayload(NodeHeartbeat.newBuilder().setSequence(r.nextInt(50)).build()).build()));
                    }
                }
            }
            for (int k = 0; k < 1 + r.nextInt(3); k++) {
                String node = r.nextBoolean() ? "bad-" + k : NODES.get(r.nextInt(NODES.size()));
                List<GpuDevice> gpus = List.of(
                        GpuDevice.newBuilder().setIndex(0).setModel("H100").setMemoryMiB(81_920).build(),
                        GpuDevice.newBuilder().setIndex(0).setModel("H100").setMemoryMiB(81_920).build());
                history.add(new Rec(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder().setEventId("bad-" + k)
                        .setNodeId(node).setOccurredAt(T0.minusSeconds(50 - k)).setPayload(NodeRegistered.newBuilder()
                                .setGpus(gpus).setCpuMillis(64_000).setMemoryMiB(512_000L).setLabels(Map.of())
                                .setBackend("simulated").setPool(r.nextBoolean() ? "a" : "b").build()).build()));
            }
            history.forEach(rec -> router.restore(rec.topic(), rec.key(), rec.value()));
        }

        private java.util.Optional<Allocation> live(String job) {
            return router.pools().get(poolOf.get(job)).state().liveAllocation(job);
        }

        private void submit(Instant now) {
            String job = "j" + next++;
            String pool = r.nextBoolean() ? "a" : "b";
            long gpus = List.of(1L, 2L, 4L, 8L).get(r.nextInt(4));
            long tasks = gpus == 8 && r.nextInt(3) == 0 ? 2 : 1;
            long run = 20 + r.nextInt(400);
            long limit = r.nextInt(4) == 0 ? run / 2 + r.nextInt((int) run) : -1;
            long[] j = {pool.equals("a") ? 0 : 1, 1, gpus, tasks, run, limit};
            open.put(job, j);
            poolOf.put(job, pool);
            all.add(job);
            input(Topics.QUEUE_JOB_EVENTS, job, dispatch(job, pool, 1, (int) tasks, (int) gpus, run,
                    limit < 0 ? null : limit, now));
        }

        /** The queue's next step for a job not running: a retry of a deferred gang, a requeue, or its end. */
        private void settle(String job, Instant now) {
            if (live(job).isPresent()) {
                return;
            }
            long[] j = open.get(job);
            ClusterState state = router.pools().get(poolOf.get(job)).state();
            if (state.grantedAttempt(job).isEmpty() && granted(job, j[1])) {
                // its run succeeded or it was cancelled: placement forgot it, the queue ends it
                input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("s-" + job).setJobId(job)
                        .setOccurredAt(now).setPayload(JobSucceeded.newBuilder().setTenant("vision")
                                .setAttempt((int) j[1]).build()).build());
                end(job);
                return;
            }
            boolean ran = state.grantedAttempt(job).orElse(0) >= j[1];
            int choice = r.nextInt(5);
            if (!ran && choice == 4) {
                input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("c-" + job).setJobId(job)
                        .setOccurredAt(now).setPayload(JobCancelled.newBuilder().setTenant("vision")
                                .setAttempt((int) j[1]).setRequestedBy("user").build()).build());
                end(job);
            } else if (!ran || choice == 0) {
                if (ran) {
                    j[1]++; // requeued
                }
                input(Topics.QUEUE_JOB_EVENTS, job, dispatch(job, poolOf.get(job), (int) j[1], (int) j[3], (int) j[2],
                        j[4], j[5] < 0 ? null : j[5], now));
            } else if (choice <= 2) {
                input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("s-" + job).setJobId(job)
                        .setOccurredAt(now).setPayload(JobSucceeded.newBuilder().setTenant("vision")
                                .setAttempt((int) j[1]).build()).build());
                end(job);
            } else {
                input(Topics.QUEUE_JOB_EVENTS, job, QueueJobEvent.newBuilder().setEventId("f-" + job).setJobId(job)
                        .setOccurredAt(now).setPayload(JobFailed.newBuilder().setTenant("vision")
                                .setAttempt((int) j[1]).setMessage("out of retries").build()).build());
                end(job);
            }
        }

        /** Whether placement forgot the job (its run succeeded, or it was cancelled) though the queue did not end it yet. */
        private boolean forgotten(String job) {
            return router.pools().get(poolOf.get(job)).state().grantedAttempt(job).isEmpty()
                    && granted(job, open.get(job)[1]);
        }

        /** Whether the attempt of the job was ever granted. */
        private boolean granted(String job, long attempt) {
            return history.stream().anyMatch(rec -> rec.value() instanceof AllocationEvent e && e.getJobId().equals(job)
                    && e.getPayload() instanceof AllocationGranted g && g.getAttempt() == attempt);
        }

        private void end(String job) {
            open.remove(job);
        }

        private void input(Topic<?> topic, String key, Object value) {
            if (value instanceof NodeHealthEvent e) {
                newestHealth.put(key, e);
            }
            history.add(new Rec(topic, key, value)); // on its topic before what handling it publishes
            inputs.add(new Rec(topic, key, value));
            router.handle(topic, key, value, out);
        }

        private static JobSpec spec(String job, long[] j) {
            return PlacementSnapshotTest.spec(job, (int) j[3], (int) j[2], j[4], j[5] < 0 ? null : j[5]);
        }
    }

    private static JobSpec spec(String job, int tasks, int gpus, long runSeconds, Long limit) {
        return JobSpec.newBuilder().setName(job).setPriority(0).setTimeLimitSeconds(limit)
                .setTasks(List.of(TaskSpec.newBuilder().setName("w").setReplicas(tasks).setCommand(List.of("train"))
                        .setEnv(Map.of("RUN_OF", job))
                        .setGpus(gpus).setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024)
                        .setRunSeconds(runSeconds).build())).build();
    }

    private static QueueJobEvent dispatch(String job, String pool, int attempt, int tasks, int gpus, long runSeconds,
                                          Long limit, Instant at) {
        return QueueJobEvent.newBuilder().setEventId("d-" + job + "-" + attempt + "-" + at.toEpochMilli()).setJobId(job)
                .setOccurredAt(at).setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(attempt)
                        .setGpus(tasks * gpus).setPool(pool).setSpec(spec(job, tasks, gpus, runSeconds, limit)).build())
                .build();
    }

    private static NodeHealthEvent failed(String node, Instant at) {
        return NodeHealthEvent.newBuilder().setEventId("down-" + node + at.toEpochMilli()).setNodeId(node)
                .setOccurredAt(at).setPayload(NodeFailed.newBuilder().setReason(NodeFailureReason.HEARTBEAT_TIMEOUT)
                        .setMessage("silent").build()).build();
    }
}
