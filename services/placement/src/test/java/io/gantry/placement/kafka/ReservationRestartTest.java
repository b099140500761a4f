package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.DeferralReason;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.RunStopRequested;
import io.gantry.events.StopEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A drain under way, a cordon and the stops of a bounded drain survive a placement restart, whatever order the topics
 * are read back in.
 */
class ReservationRestartTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    /** Records what the handler sends, with the topic. */
    static final class Log implements Output {
        record Sent(Topic<?> topic, String key, Object value) {
        }

        final List<Sent> sent = new ArrayList<>();

        @Override
        public <V> void send(Topic<V> topic, String key, V value) {
            sent.add(new Sent(topic, key, value));
        }

        List<Object> payloads(Topic<?> topic) {
            return sent.stream().filter(s -> s.topic() == topic).map(s -> s.value() instanceof AllocationEvent e
                    ? e.getPayload() : s.value() instanceof NodeEvent n ? n.getPayload() : s.value()).toList();
        }
    }

    private static JobSpec spec(int gpus, Long runSeconds, Long limit) {
        return JobSpec.newBuilder().setName("train").setPriority(0).setTimeLimitSeconds(limit)
                .setTasks(List.of(TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("true"))
                        .setGpus(gpus).setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024)
                        .setRunSeconds(runSeconds).build())).build();
    }

    private static QueueJobEvent dispatched(String job, JobSpec spec) {
        return QueueJobEvent.newBuilder().setEventId(job + "-d").setJobId(job).setOccurredAt(T0)
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(8).setSpec(spec)
                        .build()).build();
    }

    private static PlacementHandler handler(MutableClock wall) {
        return new PlacementHandler(new ClusterState("simulated", new TopologyPlacer()),
                new SimulatedBackend(ClusterFile.defaultCluster()), new VirtualClock(wall, 1), Duration.ofHours(1));
    }

    @Test
    void aDrainAndACordonUnderWayAtARestartAreRebuiltExactlyAndTheDrainStillEndsInAGrant() {
        MutableClock wall = new MutableClock(T0);
        PlacementHandler first = handler(wall);
        Log log = new Log();
        first.restored(log);
        // sim-0 runs 300 s under a 600 s limit; sim-1..3 run without a limit
        first.handle(Topics.QUEUE_JOB_EVENTS, "blocker", dispatched("blocker", spec(8, 300L, 600L)), log);
        for (int i = 1; i <= 3; i++) {
            first.handle(Topics.QUEUE_JOB_EVENTS, "open-" + i, dispatched("open-" + i, spec(8, 100_000L, null)), log);
        }
        first.handle(Topics.QUEUE_RESERVATION_EVENTS, "R", QueueReservationEvent.newBuilder().setEventId("r1")
                .setJobId("R").setOccurredAt(T0).setPayload(CapacityReservationRequested.newBuilder()
                        .setTenant("vision").setAttempt(1).setSpec(spec(8, 60L, null)).setMessage("starving").build())
                .build(), log);
        first.cordon("sim-3", true, log);
        assertThat(first.state().reservations()).hasSize(1);
        assertThat(first.state().reservations().get(0).nodes()).containsExactly("sim-0");

        // restart: the allocation topic is read back before the node topic (cross-topic order is not kept)
        PlacementHandler second = handler(wall);
        log.sent.stream().filter(s -> s.topic() == Topics.PLACEMENT_ALLOCATION_EVENTS)
                .forEach(s -> second.restore(s.topic(), s.key(), s.value()));
        log.sent.stream().filter(s -> s.topic() == Topics.PLACEMENT_NODE_EVENTS)
                .forEach(s -> second.restore(s.topic(), s.key(), s.value()));
        Log after = new Log();
        second.restored(after);

        assertThat(second.state().reservations()).isEqualTo(first.state().reservations());
        assertThat(second.state().isCordoned("sim-3")).isTrue();
        assertThat(second.state().snapshot()).isEqualTo(first.state().snapshot());
        assertThat(after.payloads(Topics.PLACEMENT_NODE_EVENTS)).as("the backend's re-registration keeps the labels")
                .allSatisfy(p -> assertThat(((NodeRegistered) p).getLabels()).isNotEmpty())
                .filteredOn(p -> ((NodeRegistered) p).getLabels().containsKey(NodeSpec.RESERVED_FOR_LABEL)).hasSize(1);

        second.handle(Topics.QUEUE_JOB_EVENTS, "R", dispatched("R", spec(8, 60L, null)), after);
        assertThat(after.payloads(Topics.PLACEMENT_ALLOCATION_EVENTS)).last()
                .isInstanceOfSatisfying(PlacementDeferred.class, d -> {
                    assertThat(d.getReason()).isEqualTo(DeferralReason.DRAINING);
                    assertThat(d.getMessage()).isEqualTo("reserved: waiting for node drain of node sim-0 (est. 10 min)");
                });

        wall.advance(Duration.ofSeconds(301));
        second.tick(wall.instant(), after);
        QueueJobEvent again = QueueJobEvent.newBuilder(dispatched("R", spec(8, 60L, null))).setEventId("R-d2").build();
        second.handle(Topics.QUEUE_JOB_EVENTS, "R", again, after);

        assertThat(after.payloads(Topics.PLACEMENT_ALLOCATION_EVENTS)).filteredOn(p -> p instanceof AllocationGranted)
                .singleElement().satisfies(g -> assertThat(((AllocationGranted) g).getPlacements())
                        .extracting(TaskPlacement::getNodeId).containsExactly("sim-0"));
        assertThat(second.state().reservations()).isEmpty();
        assertThat(after.payloads(Topics.PLACEMENT_NODE_EVENTS)).last()
                .satisfies(p -> assertThat(((NodeRegistered) p).getLabels()).doesNotContainKey(NodeSpec.RESERVED_FOR_LABEL));
    }

    /** The topics placement restores from, as its event loop declares them. */
    private static final Set<Topic<?>> RESTORED = Set.copyOf(PlacementProcessor.loop(
            new SimulatedBackend(List.of()), new VirtualClock(new MutableClock(T0), 1), new TopologyPlacer(),
            Duration.ofSeconds(1), true, List.of(8), Duration.ofMillis(200)).restoreFrom());

    /**
     * The simulated backend (it outlives a placement restart, as a cluster does) whose runs can also end the way a
     * real backend reports them: a task failed (the pod deleted, exit 137), or saved and exited 0.
     */
    static final class Cluster implements ExecutionBackend {
        final SimulatedBackend sim = new SimulatedBackend(ClusterFile.defaultCluster());
        final List<RunOutcome> ending = new ArrayList<>();

        @Override
        public String name() {
            return sim.name();
        }

        @Override
        public List<NodeSpec> nodes() {
            return sim.nodes();
        }

        @Override
        public boolean heartbeating(String nodeId) {
            return sim.heartbeating(nodeId);
        }

        @Override
        public Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now) {
            return sim.start(allocation, plan, now);
        }

        @Override
        public void stop(String allocationId) {
            sim.stop(allocationId);
        }

        @Override
        public List<RunOutcome> poll(Instant now) {
            List<RunOutcome> out = new ArrayList<>(sim.poll(now));
            ending.stream().filter(o -> !o.result().finishedAt().isAfter(now)).forEach(out::add);
            ending.removeIf(o -> !o.result().finishedAt().isAfter(now));
            return out;
        }

        @Override
        public List<RunOutcome> adopt(List<LiveRun> live, Instant now) {
            return sim.adopt(live, now);
        }
    }

    /**
     * A placement on {@code cluster} (one pool, driven through its router as the service is), with what it read and
     * published on its restore topics.
     */
    private record Placement(PoolRouter router, List<Log.Sent> history, Log log) {
        void input(Topic<?> topic, String key, Object value) {
            if (RESTORED.contains(topic)) {
                history.add(new Log.Sent(topic, key, value)); // on its topic before what handling it publishes
            }
            router.handle(topic, key, value, log);
        }

        void tick(Instant wallNow) {
            router.tick(wallNow, log);
        }

        /** What a restart reads back: the whole history, or the snapshot of the state now. */
        List<Log.Sent> restoreRecords(boolean fromSnapshot) {
            List<Log.Sent> out = new ArrayList<>();
            if (fromSnapshot) {
                router.snapshot(new io.gantry.runtime.kafka.SnapshotWriter() {
                    @Override
                    public <V> void add(Topic<V> topic, String key, V value) {
                        out.add(new Log.Sent(topic, key, value));
                    }
                });
                return out;
            }
            out.addAll(history);
            log.sent.stream().filter(s -> RESTORED.contains(s.topic())).forEach(out::add);
            return out;
        }
    }

    private static Placement placement(MutableClock wall, Cluster cluster, List<Log.Sent> restore) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer());
        state.drainGrace(30);
        PoolRouter router = new PoolRouter(List.of(new PlacementHandler(state, cluster, new VirtualClock(wall, 1),
                Duration.ofHours(1)))).restoring(RESTORED);
        // cross-topic order is not kept: the stops are read back before the grants they are about
        restore.stream().sorted(Comparator.comparing((Log.Sent s) -> s.topic() != Topics.PLACEMENT_STOP_EVENTS))
                .forEach(s -> router.restore(s.topic(), s.key(), s.value()));
        Placement p = new Placement(router, new ArrayList<>(restore), new Log());
        router.restored(p.log());
        return p;
    }

    /**
     * Four runs without time limits fill the cluster; job R, deferred, gets a reservation whose drain is bounded to
     * 10 min; every run then commits a checkpoint, so the run on the drained node is asked to stop (30 s grace).
     * Returns the stop.
     */
    private static StopEvent drainStopped(Placement p, MutableClock wall) {
        for (int i = 0; i < 4; i++) {
            p.input(Topics.QUEUE_JOB_EVENTS, "blocker-" + i, dispatched("blocker-" + i, spec(8, 100_000L, null)));
        }
        p.input(Topics.QUEUE_JOB_EVENTS, "R", dispatched("R", spec(8, 60L, null)));
        p.input(Topics.QUEUE_RESERVATION_EVENTS, "R", QueueReservationEvent.newBuilder().setEventId("r1")
                .setJobId("R").setOccurredAt(wall.instant()).setPayload(CapacityReservationRequested.newBuilder()
                        .setTenant("vision").setAttempt(1).setSpec(spec(8, 60L, null)).setMessage("starving")
                        .setMaxDrainSeconds(600L).build()).build());
        assertThat(p.log().payloads(Topics.PLACEMENT_STOP_EVENTS)).as("no checkpoint yet: nothing is stopped").isEmpty();
        wall.advance(Duration.ofSeconds(60));
        for (int i = 0; i < 4; i++) {
            p.input(Topics.ADMISSION_CHECKPOINT_EVENTS, "blocker-" + i, CheckpointEvent.newBuilder()
                    .setEventId("c" + i).setJobId("blocker-" + i).setOccurredAt(wall.instant())
                    .setPayload(CheckpointCommitted.newBuilder().setTenant("vision").setAttempt(1).setStep(100)
                            .setPath("/ckpt/100").setReportedVia("api").setCommittedAt(wall.instant()).build())
                    .build());
        }
        List<StopEvent> stops = p.log().sent.stream().filter(s -> s.topic() == Topics.PLACEMENT_STOP_EVENTS)
                .map(s -> (StopEvent) s.value()).toList();
        assertThat(stops).as("the run on the drained node, and only it").hasSize(1);
        return stops.get(0);
    }

    /** A placement whose bounded drain asked a run to stop ({@link #drainStopped}), with what the tests need of it. */
    private record DrainStop(MutableClock wall, Cluster cluster, Placement first, StopEvent notice) {
        String job() {
            return notice.getJobId();
        }

        RunStopRequested stop() {
            return (RunStopRequested) notice.getPayload();
        }
    }

    private static DrainStop drainStop() {
        MutableClock wall = new MutableClock(T0);
        Cluster cluster = new Cluster();
        Placement first = placement(wall, cluster, List.of());
        return new DrainStop(wall, cluster, first, drainStopped(first, wall));
    }

    private static List<Object> releasesAndOutcomes(Log log, String job) {
        return log.sent.stream().filter(s -> s.topic() == Topics.PLACEMENT_ALLOCATION_EVENTS)
                .map(s -> (AllocationEvent) s.value()).filter(e -> e.getJobId().equals(job))
                .map(AllocationEvent::getPayload).filter(v -> v instanceof AllocationReleased
                        || v instanceof io.gantry.events.JobRunFailed || v instanceof io.gantry.events.JobRunSucceeded)
                .toList();
    }

    @ParameterizedTest(name = "restored from {0}")
    @ValueSource(strings = {"the whole history", "a snapshot taken in the grace period"})
    void aRunStoppedForABoundedDrainThatFailsOnItsSigtermAfterARestartIsPreemptedNotFailed(String from) {
        DrainStop d = drainStop();

        // placement is killed within the grace period and comes back; then the backend reports the pod deleted
        d.wall().advance(Duration.ofSeconds(10));
        Placement second = placement(d.wall(), d.cluster(), d.first().restoreRecords(from.startsWith("a snapshot")));
        d.wall().advance(Duration.ofSeconds(5));
        d.cluster().ending.add(RunOutcome.failed(d.stop().getAllocationId(), 137, "pod deleted", d.wall().instant()));
        second.tick(d.wall().instant());

        assertThat(releasesAndOutcomes(second.log(), d.job())).as("stopped for the drain: requeued from its "
                + "checkpoint, no failure charged to the job").singleElement()
                .isInstanceOfSatisfying(AllocationReleased.class,
                        r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED));
    }

    @Test
    void aRunStoppedForABoundedDrainThatSavedAndExitedZeroWhilePlacementWasDownIsPreemptedNotSucceeded() {
        DrainStop d = drainStop();

        d.wall().advance(Duration.ofSeconds(5));
        d.cluster().ending.add(RunOutcome.succeeded(d.stop().getAllocationId(), d.wall().instant()));
        d.wall().advance(Duration.ofSeconds(10));
        Placement second = placement(d.wall(), d.cluster(), d.first().restoreRecords(false));

        assertThat(releasesAndOutcomes(second.log(), d.job())).as("saved on the notice and exited: not done")
                .singleElement().isInstanceOfSatisfying(AllocationReleased.class,
                        r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED));
    }

    @Test
    void aRunStoppedForABoundedDrainThatIgnoresItsSigtermIsStillPreemptedAtItsDeadlineAfterARestart() {
        DrainStop d = drainStop();

        d.wall().advance(Duration.ofSeconds(10));
        Placement second = placement(d.wall(), d.cluster(), d.first().restoreRecords(false));
        d.wall().advance(Duration.ofSeconds(25));
        second.tick(d.wall().instant());

        assertThat(releasesAndOutcomes(second.log(), d.job())).as("released at the deadline it was told, not a new one")
                .singleElement().isInstanceOfSatisfying(AllocationReleased.class, r -> {
                    assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED);
                    assertThat(r.getReleasedAt()).isEqualTo(d.stop().getDeadline());
                });
    }

    @Test
    void aRunStoppedToGiveBackDrainingGpusItBorrowedThatSavedAndExitedWhilePlacementWasDownIsPreempted() {
        MutableClock wall = new MutableClock(T0);
        Cluster cluster = new Cluster();
        Placement first = placement(wall, cluster, List.of());
        // "old" (4 GPUs, 300 s) on sim-0, the other nodes full: R's drain is sim-0's, and its other 4 GPUs are lent
        first.input(Topics.QUEUE_JOB_EVENTS, "old", dispatched("old", spec(4, 300L, 600L)));
        for (int i = 1; i <= 3; i++) {
            first.input(Topics.QUEUE_JOB_EVENTS, "full-" + i, dispatched("full-" + i, spec(8, 100_000L, null)));
        }
        first.input(Topics.QUEUE_JOB_EVENTS, "R", dispatched("R", spec(8, 60L, null)));
        first.input(Topics.QUEUE_RESERVATION_EVENTS, "R", QueueReservationEvent.newBuilder().setEventId("r1")
                .setJobId("R").setOccurredAt(wall.instant()).setPayload(CapacityReservationRequested.newBuilder()
                        .setTenant("vision").setAttempt(1).setSpec(spec(8, 60L, null)).setMessage("starving").build())
                .build());
        wall.advance(Duration.ofSeconds(60));
        JobSpec saver = JobSpec.newBuilder(spec(4, 100_000L, null))
                .setCheckpoint(io.gantry.events.CheckpointPolicy.newBuilder().setDir("/ckpt").build()).build();
        first.input(Topics.QUEUE_JOB_EVENTS, "saver", dispatched("saver", saver));
        assertThat(first.router().pools().get("default").state().liveAllocation("saver")).as("it borrows sim-0")
                .hasValueSatisfying(a -> assertThat(a.placements()).allSatisfy(t -> assertThat(t.nodeId())
                        .isEqualTo("sim-0")));
        wall.advance(Duration.ofSeconds(241));
        first.tick(wall.instant()); // old ends: R is due, the borrower gives the GPUs back
        assertThat(first.log().sent).filteredOn(s -> s.topic() == Topics.PLACEMENT_STOP_EVENTS)
                .singleElement().satisfies(s -> assertThat(s.key()).isEqualTo("saver"));

        wall.advance(Duration.ofSeconds(5));
        cluster.ending.add(RunOutcome.succeeded(ClusterState.allocationId("saver", 1), wall.instant()));
        wall.advance(Duration.ofSeconds(10));
        Placement second = placement(wall, cluster, first.restoreRecords(false));

        assertThat(releasesAndOutcomes(second.log(), "saver")).as("saved on the notice and exited: not done")
                .singleElement().isInstanceOfSatisfying(AllocationReleased.class,
                        r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED));
    }
}
