package io.gantry.simulator;

import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.queue.core.FairShareConfig;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The scale and topology shapes, random node failures: invariants only, never wall-clock figures. */
class ShapesTest {
    private static Simulation.Result run(List<NodeSpec> nodes, Workload w, Policy p, List<Simulation.Fault> faults) {
        FairShareConfig config = Policy.queues(w.tenantWeights(), Clusters.totalGpus(nodes), 0, null, null);
        return new Simulation(nodes, w, p, config, new TopologyPlacer(), faults, null).run();
    }

    @Test
    void the_scale_shape_places_every_one_gpu_job_once_without_over_allocating() {
        Workload w = Traces.scale(3_000, 10, 7);

        Simulation.Result r = SharesTest.assertInvariants(run(Clusters.uniform(250, 8), w, Policy.GANTRY, List.of()));

        assertThat(w.jobs()).hasSize(3_000).allMatch(j -> j.gpus() == 1);
        assertThat(w.tenantWeights()).hasSize(10);
        assertThat(r.grants).isEqualTo(3_000 + r.preemptions + r.drainStops);
        assertThat(r.queueLength.max()).as("2,000 GPUs for 3,000 jobs submitted at once").isGreaterThanOrEqualTo(1_000);
    }

    @Test
    void the_topology_shape_runs_every_gang_on_ten_racks_of_64_nodes_and_is_deterministic() {
        Workload w = Traces.topology(200, 10, 3);
        List<NodeSpec> nodes = Clusters.uniform(640, 8, 64);

        Simulation.Result r = SharesTest.assertInvariants(run(nodes, w, Policy.GANTRY, List.of()));
        Simulation.Result again = run(nodes, w, Policy.GANTRY, List.of());

        Set<String> racks = new HashSet<>();
        nodes.forEach(n -> racks.add(Clusters.rackOf(n)));
        assertThat(racks).hasSize(10);
        assertThat(w.jobs()).allMatch(j -> List.of(4, 8, 16, 32).contains(j.gpus()) && "RACK".equals(j.topology()));
        assertThat(r.multiNodeGangs).isPositive();
        assertThat(Report.summarise(again).virtualOnly()).isEqualTo(Report.summarise(r).virtualOnly());
    }

    @Test
    void random_failures_follow_the_seed_and_never_hit_a_node_that_is_already_down() {
        List<NodeSpec> nodes = Clusters.uniform(20, 8);
        List<Simulation.Fault> a = Simulation.randomFaults(nodes, 0.5, 3_600_000, 10 * 86_400_000L, 42);
        List<Simulation.Fault> b = Simulation.randomFaults(nodes, 0.5, 3_600_000, 10 * 86_400_000L, 42);

        assertThat(a).isEqualTo(b).isNotEqualTo(Simulation.randomFaults(nodes, 0.5, 3_600_000, 10 * 86_400_000L, 43));
        // 0.5 per node-day x 20 nodes x 10 days = 100 expected
        assertThat(a.size()).isBetween(60, 140);
        Map<String, Long> upAgain = new java.util.HashMap<>();
        for (Simulation.Fault f : a) {
            assertThat(f.atMillis()).isGreaterThanOrEqualTo(upAgain.getOrDefault(f.nodeId(), 0L));
            upAgain.put(f.nodeId(), f.atMillis() + f.recoverAfterMillis());
        }
        assertThat(Simulation.randomFaults(nodes, 0, 1, 1_000, 1)).isEmpty();
        assertThatThrownBy(() -> Simulation.randomFaults(nodes, -1, 1, 1_000, 1)).hasMessageContaining(">= 0");
    }

    @Test
    void under_random_failures_every_job_ends_and_lost_gpu_time_is_billed_apart() {
        Workload w = Traces.topology(150, 5, 11);
        List<NodeSpec> nodes = Clusters.uniform(32, 8);
        List<Simulation.Fault> faults = Simulation.randomFaults(nodes, 20, 600_000, Simulation.horizon(w), 5);

        for (Policy p : List.of(Policy.GANTRY, Policy.FIFO)) {
            Simulation.Result r = run(nodes, w, p, faults);

            long succeeded = 0;
            for (int i = 0; i < r.jobs.size(); i++) {
                assertThat(r.finish[i]).isGreaterThanOrEqualTo(0);
                succeeded += r.succeeded[i] ? r.jobs.get(i).milliGpus() * r.jobs.get(i).durationMillis() : 0;
            }
            assertThat(r.nodeFailures).isEqualTo(faults.size()).isPositive();
            assertThat(r.requeues).isPositive();
            assertThat(r.violations).isEmpty();
            assertThat(r.leftAllocated).isZero();
            assertThat(r.succeededMilliGpuMs).isEqualTo(succeeded);
            assertThat(r.billedMilliGpuMs).isEqualTo(r.succeededMilliGpuMs + r.lostMilliGpuMs + r.preemptedMilliGpuMs);
        }
    }
}
