package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.DeferralReason;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A drain under way and a cordon survive a placement restart, whatever order the topics are read back in. */
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
}
