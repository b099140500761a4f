package io.gantry.placement.kafka;

import io.gantry.testkit.MutableClock;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobPreempted;
import io.gantry.events.FailureReason;
import io.gantry.events.PreemptionReason;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobRunStarted;
import io.gantry.events.JobRunSucceeded;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.LocalBackend;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.FirstFitPlacer;
import io.gantry.placement.core.NodeSpec;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What a restarted placement does with the runs that were live when it stopped. */
class PlacementHandlerRestartTest {
    static final Instant GRANTED = Instant.parse("2030-01-01T00:00:00Z");

    /** Records what the handler sends. */
    static final class Recorded implements Output {
        final List<Object> values = new ArrayList<>();

        @Override
        public <V> void send(Topic<V> topic, String key, V value) {
            values.add(value);
        }

        List<Object> allocationPayloads() {
            return values.stream().filter(v -> v instanceof AllocationEvent).map(v -> ((AllocationEvent) v).getPayload()).toList();
        }
    }


    private static void restoreLiveRun(PlacementHandler h, String backend, String nodeId) {
        TaskPlacement p = TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId(nodeId).setGpuModel("H100")
                .setGpuIndices(List.of(0, 1)).setCpuMillis(1000).setMemoryMiB(1024).build();
        String id = ClusterState.allocationId("job-1", 1);
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e1")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(AllocationGranted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setPlacements(List.of(p)).setGrantedAt(GRANTED).setBackend(backend).build()).build());
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e2")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(JobRunStarted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setStartedAt(GRANTED).build()).build());
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("sleep", "1")).setGpus(2)
                .setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(600L).build();
        h.restore(Topics.QUEUE_JOB_EVENTS, "job-1", QueueJobEvent.newBuilder().setEventId("q1").setJobId("job-1")
                .setOccurredAt(GRANTED.minusSeconds(1))
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(2)
                        .setSpec(JobSpec.newBuilder().setName("train").setPriority(0).setTasks(List.of(task)).build())
                        .build()).build());
    }

    @Test
    void aSimulatedRunLiveAtRestartIsRecreatedAndStillEndsAtGrantedAtPlusRunSeconds() {
        MutableClock wall = new MutableClock(GRANTED.minus(Duration.ofDays(1))); // the wall clock is behind what was written
        VirtualClock clock = new VirtualClock(wall, 1);
        SimulatedBackend backend = new SimulatedBackend(ClusterFile.defaultCluster());
        PlacementHandler h = new PlacementHandler(new ClusterState("simulated", new FirstFitPlacer()), backend, clock,
                Duration.ofSeconds(1));
        restoreLiveRun(h, "simulated", "sim-0");
        Recorded out = new Recorded();

        h.restored(out);

        assertThat(clock.instant()).as("time never goes back before the newest restored event").isAfterOrEqualTo(GRANTED);
        assertThat(out.values).filteredOn(v -> v instanceof NodeEvent).hasSize(4);
        assertThat(out.allocationPayloads()).isEmpty();
        assertThat(h.state().snapshot().nodes().get(0).allocatedTo()).containsOnlyKeys(0, 1);

        wall.advance(Duration.ofSeconds(601));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).hasSize(2);
        assertThat(out.allocationPayloads().get(0)).isInstanceOfSatisfying(JobRunSucceeded.class,
                s -> assertThat(s.getFinishedAt()).isEqualTo(GRANTED.plusSeconds(600)));
        assertThat(out.allocationPayloads().get(1)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
            assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(600));
        });
        assertThat(h.state().liveAllocations()).isEmpty();
    }

    @Test
    void aSimulatedRunLiveAtRestartKeepsItsSuccessPolicyAndEndsWithItsLeader() {
        MutableClock wall = new MutableClock(GRANTED);
        PlacementHandler h = simulatedHandler(wall);
        String id = ClusterState.allocationId("job-1", 1);
        List<TaskPlacement> placements = List.of(
                TaskPlacement.newBuilder().setTask("launcher").setReplica(0).setNodeId("sim-0").setGpuIndices(List.of())
                        .setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(60L).build(),
                TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId("sim-1").setGpuModel("H100")
                        .setGpuIndices(List.of(0)).setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(6000L).build());
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e1")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(AllocationGranted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setPlacements(placements).setGrantedAt(GRANTED).setBackend("simulated").build()).build());
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e2")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(JobRunStarted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setStartedAt(GRANTED).build()).build());
        List<TaskSpec> tasks = List.of(
                TaskSpec.newBuilder().setName("launcher").setReplicas(1).setCommand(List.of("mpirun")).setGpus(0)
                        .setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(60L).build(),
                TaskSpec.newBuilder().setName("worker").setReplicas(1).setCommand(List.of("sleep", "infinity"))
                        .setGpus(1).setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(6000L)
                        .build());
        h.restore(Topics.QUEUE_JOB_EVENTS, "job-1", QueueJobEvent.newBuilder().setEventId("q1").setJobId("job-1")
                .setOccurredAt(GRANTED.minusSeconds(1))
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(1)
                        .setSpec(JobSpec.newBuilder().setName("mpi").setPriority(0).setTasks(tasks)
                                .setSuccessPolicy(new io.gantry.events.SuccessPolicy("launcher")).build())
                        .build()).build());
        Recorded out = new Recorded();

        h.restored(out);
        wall.advance(Duration.ofSeconds(61));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).first().isInstanceOfSatisfying(JobRunSucceeded.class,
                s -> assertThat(s.getFinishedAt()).isEqualTo(GRANTED.plusSeconds(60)));
    }

    @Test
    void aLocalRunLiveAtRestartIsReportedLost(@TempDir Path work) {
        VirtualClock clock = new VirtualClock(new MutableClock(GRANTED.plusSeconds(5)), 1);
        ExecutionBackend backend = new LocalBackend(new NodeSpec("local", "local", List.of(), 1000, 1024, Map.of()),
                work, null, clock);
        PlacementHandler h = new PlacementHandler(new ClusterState("local", new FirstFitPlacer()), backend, clock,
                Duration.ofSeconds(1));
        restoreLiveRun(h, "local", "local");
        Recorded out = new Recorded();

        h.restored(out);

        // lost to the infrastructure, not failed: released as a node failure's runs are, so recovery requeues it
        // from its newest checkpoint within its restart budget, and its retries stay untouched
        assertThat(out.allocationPayloads()).singleElement().isInstanceOfSatisfying(AllocationReleased.class,
                r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.NODE_FAILED));
    }

    static PlacementHandler simulatedHandler(MutableClock wall) {
        return new PlacementHandler(new ClusterState("simulated", new FirstFitPlacer()),
                new SimulatedBackend(ClusterFile.defaultCluster()), new VirtualClock(wall, 1), Duration.ofSeconds(1));
    }

    static void restoreGrant(PlacementHandler h, Long runSeconds, Long timeLimitSeconds) {
        TaskPlacement p = TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId("sim-0").setGpuModel("H100")
                .setGpuIndices(List.of(0, 1)).setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(runSeconds).build();
        String id = ClusterState.allocationId("job-1", 1);
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e1")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(AllocationGranted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setPlacements(List.of(p)).setGrantedAt(GRANTED).setBackend("simulated")
                        .setTimeLimitSeconds(timeLimitSeconds).build()).build());
        h.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-1", AllocationEvent.newBuilder().setEventId("e2")
                .setJobId("job-1").setOccurredAt(GRANTED)
                .setPayload(JobRunStarted.newBuilder().setAllocationId(id).setTenant("vision").setAttempt(1)
                        .setStartedAt(GRANTED).build()).build());
    }

    private static void restorePreemption(PlacementHandler h, Instant at, int graceSeconds) {
        h.restore(Topics.QUEUE_PREEMPTION_EVENTS, "job-1", QueuePreemptionEvent.newBuilder()
                .setEventId("p-" + at).setJobId("job-1").setOccurredAt(at)
                .setPayload(JobPreempted.newBuilder().setTenant("vision").setAttempt(1)
                        .setReason(PreemptionReason.values()[0]).setGraceSeconds(graceSeconds)
                        .setMessage("queue vision reclaims 2 x H100").build()).build());
    }

    @Test
    void aPreemptionPendingAtARestartIsStillReleasedPreemptedAtTheEndOfItsGracePeriod() {
        MutableClock wall = new MutableClock(GRANTED.plusSeconds(120));
        PlacementHandler h = simulatedHandler(wall);
        // cross-topic order: the preemption is read back before the allocation it is about
        restorePreemption(h, GRANTED.plusSeconds(100), 60);
        restoreGrant(h, 600L, null);
        restorePreemption(h, GRANTED.plusSeconds(110), 5); // a repeat changes nothing
        Recorded out = new Recorded();

        h.restored(out);
        wall.advance(Duration.ofSeconds(39));
        h.tick(wall.instant(), out);
        assertThat(out.allocationPayloads()).as("still in its grace period").isEmpty();
        wall.advance(Duration.ofSeconds(2));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).singleElement().isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED);
            assertThat(r.getGrantedAt()).isEqualTo(GRANTED);
            assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(160));
            assertThat(r.getFreeCapacity()).singleElement().satisfies(f -> {
                assertThat(f.getGpuModel()).isEqualTo("H100");
                assertThat(f.getFreeGpus()).isEqualTo(32);
                assertThat(f.getLargestFreeOnNode()).isEqualTo(8);
            });
        });
        assertThat(h.state().liveAllocations()).isEmpty();
    }

    @Test
    void aGracePeriodThatEndedWhilePlacementWasDownIsReleasedAtOnceAtItsDeadline() {
        PlacementHandler h = simulatedHandler(new MutableClock(GRANTED.plusSeconds(300)));
        restoreGrant(h, 600L, null);
        restorePreemption(h, GRANTED.plusSeconds(100), 60);
        Recorded out = new Recorded();

        h.restored(out);

        assertThat(out.allocationPayloads()).singleElement().isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.PREEMPTED);
            assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(160));
        });
    }

    @Test
    void aRunThatEndedNaturallyBeforeItsRestoredDeadlineIsANormalSuccess() {
        PlacementHandler h = simulatedHandler(new MutableClock(GRANTED.plusSeconds(300)));
        restoreGrant(h, 120L, null);
        restorePreemption(h, GRANTED.plusSeconds(100), 60);
        Recorded out = new Recorded();

        h.restored(out);

        assertThat(out.allocationPayloads()).extracting(p -> p.getClass().getSimpleName())
                .containsExactly("JobRunSucceeded", "AllocationReleased");
        assertThat(((AllocationReleased) out.allocationPayloads().get(1)).getReason()).isEqualTo(ReleaseReason.RUN_SUCCEEDED);
        assertThat(((AllocationReleased) out.allocationPayloads().get(1)).getReleasedAt()).isEqualTo(GRANTED.plusSeconds(120));
    }

    @Test
    void aTimeLimitReadBackFromTheGrantStillStopsTheRunAfterARestart() {
        MutableClock wall = new MutableClock(GRANTED.plusSeconds(10));
        PlacementHandler h = simulatedHandler(wall);
        restoreGrant(h, 1000L, 300L);
        Recorded out = new Recorded();
        h.restored(out);

        wall.advance(Duration.ofSeconds(289));
        h.tick(wall.instant(), out);
        assertThat(out.allocationPayloads()).isEmpty();
        wall.advance(Duration.ofSeconds(2));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).hasSize(2);
        assertThat(out.allocationPayloads().get(0)).isInstanceOfSatisfying(JobRunFailed.class, f -> {
            assertThat(f.getReason()).isEqualTo(FailureReason.TIME_LIMIT);
            assertThat(f.getMessage()).isEqualTo("time limit 300 s reached");
            assertThat(f.getExitCode()).isNull();
            assertThat(f.getFinishedAt()).isEqualTo(GRANTED.plusSeconds(300));
        });
        assertThat(out.allocationPayloads().get(1)).isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.TIME_LIMIT);
            assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(300));
        });
    }
}
