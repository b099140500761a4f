package io.gantry.simulator;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The CI slice: 2,000 Philly jobs on 8 x 8 GPUs under every policy. Invariants only, never wall-clock figures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PhillySliceTest {
    private static final Path TRACES = Path.of("../../shared/traces");
    private Workload workload;

    @BeforeAll
    void load() throws IOException {
        assumeTrue(Files.isRegularFile(TRACES.resolve("philly/philly.csv")),
                "skipped: the shared Philly trace is not at " + TRACES.toAbsolutePath());
        workload = Traces.philly(Files.readAllLines(TRACES.resolve("philly/philly.csv")),
                Files.readAllLines(TRACES.resolve("philly/philly_vc_nodes.csv")), new Traces.Options(2000, null, 1.0));
    }

    private Simulation.Result replay(Policy p) {
        return replay(p, s -> s);
    }

    private Simulation.Result replay(Policy p, java.util.function.UnaryOperator<Simulation> with) {
        var nodes = Clusters.uniform(8, 8);
        var config = Policy.queues(workload.tenantWeights(), 64, 0, null, null);
        return with.apply(new Simulation(nodes, workload, p, config, Replay.placer("topology"), java.util.List.of(),
                null)).run();
    }

    /**
     * The queue restarted a dozen times mid-replay (runs checkpointing, so preemptions resume) from a snapshot of its
     * state decides exactly as when it restarts from its whole history each time: the same grants and ends, job by
     * job, and the same report.
     */
    @org.junit.jupiter.api.Test
    void a_queue_restarted_from_its_snapshots_decides_as_one_restarted_from_its_whole_history() {
        var checkpoints = new Simulation.Checkpoints(java.time.Duration.ofMinutes(30), java.time.Duration.ofMinutes(1),
                0.2, 7);
        Simulation.Result whole = replay(Policy.GANTRY, s -> s.checkpoints(checkpoints)
                .restarts(io.gantry.schemas.Service.QUEUE, 150, false));
        Simulation.Result fromSnapshots = replay(Policy.GANTRY, s -> s.checkpoints(checkpoints)
                .restarts(io.gantry.schemas.Service.QUEUE, 150, true));

        assertThat(whole.preemptions).as("preemptions exercise the snapshot's live jobs").isPositive();
        assertThat(fromSnapshots.firstGrant).containsExactly(whole.firstGrant);
        assertThat(fromSnapshots.finish).containsExactly(whole.finish);
        assertThat(Report.summarise(fromSnapshots).virtualOnly()).isEqualTo(Report.summarise(whole).virtualOnly());
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void every_job_ends_no_device_is_double_allocated_and_gpu_time_is_billed_exactly_once(Policy p) {
        Simulation.Result r = replay(p);

        long replayed = 0;
        long expectedGpuMs = 0;
        for (int i = 0; i < r.jobs.size(); i++) {
            if (!r.rejected[i]) {
                replayed++;
                expectedGpuMs += r.jobs.get(i).gpus() * r.jobs.get(i).durationMillis();
                assertThat(r.succeeded[i]).as("job %s succeeded", r.jobs.get(i).id()).isTrue();
                assertThat(r.finish[i]).isGreaterThanOrEqualTo(r.jobs.get(i).submitMillis()
                        + r.jobs.get(i).durationMillis());
            }
        }
        assertThat(replayed).isGreaterThan(1900);
        assertThat(r.ended).isEqualTo(replayed);
        assertThat(r.violations).isEmpty();
        assertThat(r.leftAllocated).isZero();
        assertThat(r.succeededMilliGpuMs).isEqualTo(1000 * expectedGpuMs);
        // every granted interval is billed once: the successful runs, plus the runs preempted before they ended
        assertThat(r.billedMilliGpuMs).isEqualTo(1000 * expectedGpuMs + r.preemptedMilliGpuMs);
        assertThat(r.billedMilliGpuMs).isEqualTo(r.intervals.stream().mapToLong(iv -> iv[2] * (iv[1] - iv[0])).sum());
        assertThat(r.grants).isEqualTo(replayed + r.preemptions + r.drainStops);
        if (p != Policy.GANTRY) {
            assertThat(r.preemptions).as("baselines do not preempt").isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Policy.class, names = {"GANTRY", "FIFO"})
    void the_same_inputs_give_the_same_report(Policy p) {
        assertThat(Report.summarise(replay(p)).virtualOnly()).isEqualTo(Report.summarise(replay(p)).virtualOnly());
    }
}
