package io.gantry.placement.kafka;

import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.FreeGpus;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** Nodes joining and leaving after the start, and GPUs held outside Gantry, as the handler sees the backend. */
class NodeSyncHandlerTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    /** A backend whose node list and foreign count change while placement runs (as Kubernetes' and Slurm's do). */
    static final class ChangingBackend implements ExecutionBackend {
        final List<NodeSpec> all = new ArrayList<>(ClusterFile.defaultCluster());
        final SimulatedBackend sim;
        final List<NodeSpec> listed;
        Optional<Map<String, ForeignLoad>> foreign = Optional.empty();

        ChangingBackend() {
            NodeSpec late = all.get(0).withLabels(Map.of()).withRdmaNics(List.of());
            all.add(new NodeSpec("sim-9", late.backend(), late.gpus(), late.cpuMillis(), late.memoryMiB(), Map.of(),
                    late.numaCpuMillis(), List.of(), late.numaMemoryMiB()));
            sim = new SimulatedBackend(all);
            listed = new ArrayList<>(all.subList(0, 1));
        }

        @Override public String name() { return sim.name(); }
        @Override public List<NodeSpec> nodes() { return List.copyOf(listed); }
        @Override public boolean heartbeating(String nodeId) {
            return listed.stream().anyMatch(n -> n.nodeId().equals(nodeId));
        }
        @Override public Optional<RunOutcome> start(Allocation a, RunPlan plan, Instant now) {
            return sim.start(a, plan, now);
        }
        @Override public void stop(String allocationId) { sim.stop(allocationId); }
        @Override public List<RunOutcome> poll(Instant now) { return sim.poll(now); }
        @Override public List<RunOutcome> adopt(List<LiveRun> live, Instant now) { return sim.adopt(live, now); }
        @Override public Optional<Map<String, ForeignLoad>> foreignLoad() { return foreign; }
    }

    private final MutableClock wall = new MutableClock(T0);
    private final ChangingBackend backend = new ChangingBackend();
    private final PlacementHandler h = new PlacementHandler(new ClusterState("simulated", new TopologyPlacer()), backend,
            new VirtualClock(wall, 1), Duration.ofSeconds(1));
    private final PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();

    NodeSyncHandlerTest() {
        h.restored(out);
        out.values.clear();
    }

    private void heartbeat() {
        wall.advance(Duration.ofSeconds(1));
        h.tick(wall.instant(), out);
    }

    private void dispatch(String jobId, int gpus) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("sleep", "1")).setGpus(gpus)
                .setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(600L).build();
        h.handle(Topics.QUEUE_JOB_EVENTS, jobId, QueueJobEvent.newBuilder().setEventId("q-" + jobId).setJobId(jobId)
                .setOccurredAt(T0).setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(gpus)
                        .setSpec(JobSpec.newBuilder().setName("train").setPriority(0).setTasks(List.of(task)).build())
                        .build()).build(), out);
    }

    private void cancel(String jobId) {
        h.handle(Topics.QUEUE_JOB_EVENTS, jobId, QueueJobEvent.newBuilder().setEventId("c-" + jobId).setJobId(jobId)
                .setOccurredAt(T0).setPayload(JobCancelled.newBuilder().setTenant("vision").setAttempt(1).setRequestedBy("test").build()).build(), out);
    }

    private List<NodeEvent> registrations() {
        return out.values.stream().filter(v -> v instanceof NodeEvent e && e.getPayload() instanceof NodeRegistered)
                .map(v -> (NodeEvent) v).toList();
    }

    private List<String> heartbeats() {
        return out.values.stream().filter(v -> v instanceof NodeHeartbeatEvent)
                .map(v -> ((NodeHeartbeatEvent) v).getNodeId().toString()).toList();
    }

    private <T> List<T> allocationPayloads(Class<T> type) {
        return out.allocationPayloads().stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void aNodeJoiningAfterTheStartIsRegisteredAtTheNextHeartbeatAndPlacedOn() {
        dispatch("a", 8);
        dispatch("b", 8);
        assertThat(allocationPayloads(AllocationGranted.class)).hasSize(1);
        backend.listed.add(backend.all.get(4));
        out.values.clear();
        heartbeat();
        assertThat(registrations()).extracting(e -> e.getNodeId().toString()).containsExactly("sim-9");
        assertThat(heartbeats()).containsExactly("sim-0", "sim-9");
        dispatch("b", 8);
        assertThat(allocationPayloads(AllocationGranted.class)).singleElement()
                .satisfies(g -> assertThat(g.getPlacements().get(0).getNodeId().toString()).isEqualTo("sim-9"));
        // listed again unchanged: nothing more is registered
        out.values.clear();
        heartbeat();
        assertThat(registrations()).isEmpty();
    }

    @Test
    void aNodeLeavingTheBackendStopsHeartbeatingSoRecoveryFailsIt() {
        backend.listed.add(backend.all.get(4));
        heartbeat();
        backend.listed.remove(0);
        out.values.clear();
        heartbeat();
        heartbeat();
        assertThat(heartbeats()).containsOnly("sim-9").hasSize(2);
        assertThat(registrations()).isEmpty();
    }

    @Test
    void gpusHeldOutsideGantryAreCapacityTakenUntilTheyGo() {
        backend.foreign = Optional.of(Map.of("sim-0", new ForeignLoad(3, "pod team-x/notebook (3 GPUs)")));
        heartbeat();
        assertThat(registrations()).singleElement().satisfies(e -> assertThat(((NodeRegistered) e.getPayload())
                .getLabels()).containsEntry(NodeSpec.FOREIGN_GPUS_LABEL, "3")
                .containsEntry(NodeSpec.FOREIGN_HOLDERS_LABEL, "pod team-x/notebook (3 GPUs)"));
        dispatch("a", 6);
        assertThat(allocationPayloads(AllocationGranted.class)).isEmpty();
        dispatch("b", 5);
        cancel("b");
        // the release tells the queue the free capacity without the foreign GPUs
        assertThat(allocationPayloads(AllocationReleased.class)).singleElement().satisfies(r ->
                assertThat(r.getFreeCapacity()).extracting(FreeGpus::getFreeGpus).containsExactly(5));
        // a backend that has not looked yet changes nothing; one that sees them gone gives them back
        backend.foreign = Optional.empty();
        out.values.clear();
        heartbeat();
        assertThat(registrations()).isEmpty();
        backend.foreign = Optional.of(Map.of());
        heartbeat();
        assertThat(registrations()).singleElement().satisfies(e -> assertThat(((NodeRegistered) e.getPayload())
                .getLabels()).doesNotContainKeys(NodeSpec.FOREIGN_GPUS_LABEL, NodeSpec.FOREIGN_HOLDERS_LABEL));
        dispatch("a", 8);
        assertThat(allocationPayloads(AllocationGranted.class)).hasSize(1);
    }
}
