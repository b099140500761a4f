package io.gantry.simulator;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.NodeFailed;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.queue.config.QueueConfig;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.log.LogDriver;
import io.gantry.simulator.whatif.VirtualSystem;
import io.gantry.runtime.log.VirtualClock;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The production handlers of queue, placement (simulated backend) and recovery, wired by the loops each service
 * declares for Kafka, run over the in-memory log in virtual time: the protocol between the services as it runs in
 * production, in milliseconds.
 */
class ProtocolScenarioTest {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private final VirtualClock clock = new VirtualClock(T0);
    private final SimulatedBackend cluster = new SimulatedBackend(ClusterFile.defaultCluster());

    private LogDriver system(boolean wire) {
        return new VirtualSystem(Duration.ofMillis(200), Duration.ofSeconds(1),
                new RecoveryPolicy(Duration.ofSeconds(10), 3), Duration.ofSeconds(1))
                .start(clock, cluster, new QueueConfig(), PlacementPolicy.BINPACK, wire);
    }

    private void submit(LogDriver d, String jobId, int replicas, int gpus, long runSeconds) {
        JobSpec spec = JobSpec.newBuilder().setName(jobId).setPriority(0).setTimeLimitSeconds(null)
                .setTasks(List.of(TaskSpec.newBuilder().setName("worker").setReplicas(replicas)
                        .setCommand(List.of("python", "train.py")).setGpus(gpus).setGpuModel(null).setCpuMillis(1000)
                        .setMemoryMiB(1024).setRunSeconds(runSeconds).build()))
                .build();
        d.publish(Topics.ADMISSION_JOB_EVENTS, jobId, AdmissionJobEvent.newBuilder().setEventId("submit-" + jobId)
                .setJobId(jobId).setOccurredAt(clock.instant())
                .setPayload(new JobSubmitted("vision", spec, null)).build());
    }

    private static List<AllocationGranted> grants(LogDriver d, String jobId) {
        return d.values(Topics.PLACEMENT_ALLOCATION_EVENTS).stream().filter(e -> e.getJobId().equals(jobId))
                .map(AllocationEvent::getPayload).filter(AllocationGranted.class::isInstance)
                .map(AllocationGranted.class::cast).toList();
    }

    private static List<String> lifecycle(LogDriver d, String jobId) {
        return d.values(Topics.QUEUE_JOB_EVENTS).stream().filter(e -> e.getJobId().equals(jobId))
                .map(e -> e.getPayload().getClass().getSimpleName()).toList();
    }

    private static Instant succeededAt(LogDriver d, String jobId) {
        return d.values(Topics.QUEUE_JOB_EVENTS).stream()
                .filter(e -> e.getJobId().equals(jobId) && e.getPayload() instanceof JobSucceeded)
                .map(QueueJobEvent::getOccurredAt).findFirst().orElse(null);
    }

    @Test
    void aGangIsQueuedDispatchedPackedOnOneNodeRunForItsRunTimeAndSucceeds() {
        LogDriver d = system(false);
        submit(d, "gang", 2, 4, 60);

        d.advanceBy(Duration.ofMinutes(2));

        assertThat(lifecycle(d, "gang")).containsSubsequence("JobQueued", "JobDispatched", "JobSucceeded");
        AllocationGranted grant = grants(d, "gang").get(0);
        assertThat(grant.getPlacements()).extracting(TaskPlacement::getNodeId).as("a gang that fits a node is packed")
                .containsOnly(grant.getPlacements().get(0).getNodeId()).hasSize(2);
        assertThat(Duration.between(grant.getGrantedAt(), succeededAt(d, "gang")))
                .as("ends its run time after the grant, in virtual time").isBetween(Duration.ofSeconds(60),
                        Duration.ofSeconds(62));
        assertThat(d.log().entries(Topics.deadLetter(Service.QUEUE).name())).isEmpty();
        assertThat(d.log().entries(Topics.deadLetter(Service.PLACEMENT).name())).isEmpty();
        assertThat(d.log().entries(Topics.deadLetter(Service.RECOVERY).name())).isEmpty();
    }

    @Test
    void aNodeThatGoesSilentUnderARunIsDeclaredFailedAndTheJobRunsAgainElsewhere() {
        LogDriver d = system(false);
        submit(d, "resilient", 1, 8, 300);
        d.advanceBy(Duration.ofSeconds(5));
        String node = grants(d, "resilient").get(0).getPlacements().get(0).getNodeId();

        d.command(Service.PLACEMENT, out -> {
            cluster.fail(node);
            return null;
        });
        d.advanceBy(Duration.ofMinutes(10));

        assertThat(d.values(Topics.RECOVERY_NODE_EVENTS)).anySatisfy(e -> {
            assertThat(e.getNodeId()).isEqualTo(node);
            assertThat(e.getPayload()).isInstanceOf(NodeFailed.class);
        });
        assertThat(d.values(Topics.RECOVERY_JOB_EVENTS)).extracting(RecoveryJobEvent::getJobId).contains("resilient");
        List<AllocationGranted> grants = grants(d, "resilient");
        assertThat(grants).hasSize(2);
        assertThat(grants.get(1).getAttempt()).isEqualTo(2);
        assertThat(grants.get(1).getPlacements().get(0).getNodeId()).isNotEqualTo(node);
        assertThat(lifecycle(d, "resilient")).contains("JobSucceeded");
    }

    @Test
    void throughTheAvroWireTheSameStoryGivesTheSameEvents() {
        LogDriver objects = system(false);
        submit(objects, "gang", 2, 4, 60);
        objects.advanceBy(Duration.ofMinutes(2));
        List<String> withObjects = lifecycle(objects, "gang");

        ProtocolScenarioTest other = new ProtocolScenarioTest();
        LogDriver wire = other.system(true);
        other.submit(wire, "gang", 2, 4, 60);
        wire.advanceBy(Duration.ofMinutes(2));

        assertThat(lifecycle(wire, "gang")).isEqualTo(withObjects);
        Set<String> types = wire.values(Topics.PLACEMENT_ALLOCATION_EVENTS).stream()
                .map(e -> e.getPayload().getClass().getSimpleName()).collect(Collectors.toSet());
        assertThat(types).contains("AllocationGranted", "JobRunStarted", "JobRunSucceeded", "AllocationReleased");
    }
}
