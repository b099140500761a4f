package io.gantry.placement.kafka;

import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.RunUtilisationSampled;
import io.gantry.events.TaskSpec;
import io.gantry.events.UtilisationEvent;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.FirstFitPlacer;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The simulated backend's injected utilisation becomes one fact per run and window on placement's topic. */
class UtilisationHandlerTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private final MutableClock wall = new MutableClock(T0);
    private final VirtualClock clock = new VirtualClock(wall, 1);
    private final SimulatedBackend sim = new SimulatedBackend(ClusterFile.defaultCluster()).withGpuUtilisation(30);
    private final PlacementHandler h = new PlacementHandler(new ClusterState("simulated", new FirstFitPlacer()), sim,
            clock, Duration.ofSeconds(1)).utilisation(new PlacementHandler.UtilisationSettings(Duration.ofSeconds(10),
            Duration.ofMinutes(1), 5));
    private final PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();

    private void dispatch(String jobId, int gpus, long runSeconds) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("sleep", "1"))
                .setGpus(gpus).setGpuModel("H100").setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(runSeconds)
                .build();
        h.handle(Topics.QUEUE_JOB_EVENTS, jobId, QueueJobEvent.newBuilder().setEventId("q-" + jobId).setJobId(jobId)
                .setOccurredAt(T0).setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(gpus)
                        .setSpec(JobSpec.newBuilder().setName("train").setPriority(0).setTasks(List.of(task)).build())
                        .build()).build(), out);
    }

    private List<UtilisationEvent> windows() {
        return out.values.stream().filter(v -> v instanceof UtilisationEvent).map(v -> (UtilisationEvent) v).toList();
    }

    @Test
    void aRunningRunGetsAWindowPerMinuteAndALastOneWhenItEnds() {
        h.restored(out);
        dispatch("job-1", 4, 150);
        for (int s = 0; s <= 200; s += 10) {
            wall.set(T0.plusSeconds(s));
            h.tick(wall.instant(), out);
        }

        assertThat(windows()).extracting(UtilisationEvent::getJobId).containsOnly("job-1");
        List<RunUtilisationSampled> w = windows().stream().map(e -> (RunUtilisationSampled) e.getPayload()).toList();
        assertThat(w).hasSize(3);
        assertThat(w).allSatisfy(x -> {
            assertThat(x.getTenant()).isEqualTo("vision");
            assertThat(x.getHeldGpuMilli()).isEqualTo(4000);
            assertThat(x.getUsedGpuMilli()).isEqualTo(1200);
            assertThat(x.getIdleSince()).isNull();
        });
        assertThat(w.get(1).getWindowFrom()).isEqualTo(w.get(0).getWindowTo());
    }

    @Test
    void aBackendThatReportsNoUtilisationWritesNothing() {
        sim.withGpuUtilisation(null);
        h.restored(out);
        dispatch("job-1", 4, 600);
        for (int s = 0; s <= 200; s += 10) {
            wall.set(T0.plusSeconds(s));
            h.tick(wall.instant(), out);
        }
        assertThat(windows()).isEmpty();
    }
}
