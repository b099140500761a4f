package io.gantry.placement.kafka;

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
import io.gantry.events.JobDispatched;
import io.gantry.events.JobRunFailed;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.DeviceFault;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.FirstFitPlacer;
import io.gantry.placement.core.NodeSpec;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Pre-flight checks, device-fault reports and recovery's device decisions, through the handler. */
class DeviceHealthHandlerTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private final MutableClock wall = new MutableClock(T0);
    private final VirtualClock clock = new VirtualClock(wall, 1);
    private final SimulatedBackend sim = new SimulatedBackend(ClusterFile.defaultCluster());
    private final PlacementHandler h = new PlacementHandler(new ClusterState("simulated", new FirstFitPlacer()), sim,
            clock, Duration.ofSeconds(1));
    private final PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();

    DeviceHealthHandlerTest() {
        h.restored(out);
        out.values.clear();
    }

    private void dispatch(String jobId, int gpus) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("sleep", "1")).setGpus(gpus)
                .setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(600L).build();
        h.handle(Topics.QUEUE_JOB_EVENTS, jobId, QueueJobEvent.newBuilder().setEventId("q-" + jobId).setJobId(jobId)
                .setOccurredAt(T0).setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(gpus)
                        .setSpec(JobSpec.newBuilder().setName("train").setPriority(0).setTasks(List.of(task)).build())
                        .build()).build(), out);
    }

    private <T> List<T> payloads(Class<T> type) {
        return out.values.stream().map(v -> v instanceof AllocationEvent a ? a.getPayload()
                : v instanceof NodeEvent n ? n.getPayload() : v instanceof DeviceEvent d ? d.getPayload() : v)
                .filter(type::isInstance).map(type::cast).toList();
    }

    private List<NodeEvent> registrations() {
        return out.values.stream().filter(v -> v instanceof NodeEvent).map(v -> (NodeEvent) v).toList();
    }

    @Test
    void aNodeFailingItsPreflightCheckIsCordonedAndTheGangIsPlacedElsewhereWithoutAJobFailure() {
        sim.failPreflight("sim-0", true);
        dispatch("job-1", 8);
        assertThat(registrations()).singleElement().satisfies(e -> {
            assertThat(e.getNodeId()).isEqualTo("sim-0");
            assertThat(((NodeRegistered) e.getPayload()).getLabels()).containsEntry(NodeSpec.CORDONED_LABEL, "true")
                    .containsEntry(NodeSpec.CORDON_REASON_LABEL, "pre-flight check failed: simulated pre-flight check "
                            + "failed on sim-0 (set by an administrator)");
        });
        assertThat(payloads(DeviceFaultReported.class)).singleElement()
                .satisfies(f -> assertThat(f.getKind()).isEqualTo(DeviceFaultKind.PREFLIGHT_FAILED));
        assertThat(payloads(AllocationGranted.class)).singleElement()
                .satisfies(g -> assertThat(g.getPlacements().get(0).getNodeId()).isNotEqualTo("sim-0"));
        assertThat(payloads(JobRunFailed.class)).isEmpty();
    }

    @Test
    void whenPreflightChecksKeepFailingTheGangIsDeferredAfterThreeRounds() {
        for (int i = 0; i < 4; i++) {
            sim.failPreflight("sim-" + i, true);
        }
        dispatch("job-1", 8);
        assertThat(registrations()).extracting(NodeEvent::getNodeId).containsExactly("sim-0", "sim-1", "sim-2");
        assertThat(payloads(AllocationGranted.class)).isEmpty();
        assertThat(payloads(PlacementDeferred.class)).singleElement()
                .satisfies(d -> assertThat(d.getMessage()).startsWith("pre-flight checks failed on sim-2 in 3"));
    }

    @Test
    void aPassingNodeIsNotCordonedAndTheRunStarts() {
        dispatch("job-1", 8);
        assertThat(registrations()).isEmpty();
        assertThat(payloads(AllocationGranted.class)).hasSize(1);
    }

    @Test
    void recoverysHardwareDecisionCordonsTheGpuAndReleasesTheRunHoldingItAsADeviceFault() {
        dispatch("job-1", 8);
        String node = payloads(AllocationGranted.class).get(0).getPlacements().get(0).getNodeId();
        out.values.clear();
        h.handle(Topics.RECOVERY_DEVICE_EVENTS, node, DeviceHealthEvent.newBuilder().setEventId("d1").setNodeId(node)
                .setOccurredAt(T0).setPayload(DeviceFaultDecided.newBuilder().setFaultEventId("f1").setFaultAt(T0)
                        .setGpuIndex(3).setKind(DeviceFaultKind.XID).setXid(79).setCategory(FaultCategory.HARDWARE)
                        .setAction(FaultAction.CORDON_DEVICE).setMessage("Xid 79 on GPU 3").build()).build(), out);
        assertThat(registrations()).singleElement().satisfies(e -> assertThat(((NodeRegistered) e.getPayload())
                .getLabels()).containsEntry(NodeSpec.CORDONED_GPUS_LABEL, "3"));
        assertThat(payloads(AllocationReleased.class)).singleElement()
                .satisfies(r -> assertThat(r.getReason()).isEqualTo(ReleaseReason.DEVICE_FAULT));
        assertThat(sim.running()).isEmpty();
    }

    @Test
    void aFloodOfFaultsFromOneNodeDoesNotStarveAnotherNodesReport() {
        for (int i = 0; i < 40; i++) {
            sim.inject(new DeviceFault("sim-0", i % 8, DeviceFault.Kind.XID, 1000 + i, "admin", null));
        }
        sim.inject(new DeviceFault("sim-3", 1, DeviceFault.Kind.GPU_LOST, null, "admin", null));
        h.tick(wall.instant(), out);
        List<String> nodes = out.values.stream().filter(v -> v instanceof DeviceEvent).map(v -> ((DeviceEvent) v)
                .getNodeId()).toList();
        assertThat(nodes).contains("sim-3");
        assertThat(nodes.stream().filter("sim-0"::equals).count()).isEqualTo(PlacementHandler.FAULTS_PER_NODE_PER_TICK);
        assertThat(sim.pendingFaults()).isEqualTo(40 - PlacementHandler.FAULTS_PER_NODE_PER_TICK);
    }

    @Test
    void identicalFaultsWaitingToBeReportedAreFoldedIntoOne() {
        for (int i = 0; i < 1000; i++) {
            sim.inject(new DeviceFault("sim-0", 2, DeviceFault.Kind.XID, 79, "admin", null));
        }
        h.tick(wall.instant(), out);
        assertThat(payloads(DeviceFaultReported.class)).singleElement()
                .satisfies(f -> assertThat(f.getMessage()).isEqualTo("Xid 79 on GPU 2 of sim-0"));
    }
}
