package io.gantry.simulator;

import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TraceClusters;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.queue.core.FairShareConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Alibaba openb pods: shares of a GPU and model constraints through both production cores. */
class SharesTest {
    private static final Path TRACES = Path.of("../../shared/traces");
    private static final String POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
            + "creation_time,deletion_time,scheduled_time";

    private static List<NodeSpec> nodes(String... rows) {
        List<String> lines = new java.util.ArrayList<>(List.of("sn,cpu_milli,memory_mib,gpu,model"));
        lines.addAll(List.of(rows));
        return TraceClusters.alibabaOpenb(lines, Clusters.BACKEND);
    }

    private static Simulation.Result run(List<NodeSpec> nodes, Workload w, Policy p) {
        return run(nodes, w, p, Clusters.totalGpus(nodes));
    }

    private static Simulation.Result run(List<NodeSpec> nodes, Workload w, Policy p, int quotaGpus) {
        FairShareConfig config = Policy.queues(w.tenantWeights(), quotaGpus, 0, null, null);
        return new Simulation(nodes, w, p, config, new TopologyPlacer(), List.of(), null).run();
    }

    private static Workload pods(String... rows) {
        List<String> lines = new java.util.ArrayList<>(List.of(POD_HEADER));
        lines.addAll(List.of(rows));
        return Traces.alibaba(lines, Traces.Options.ALL);
    }

    /** Checks the invariants every replay with shares must keep, and returns the result. */
    static Simulation.Result assertInvariants(Simulation.Result r) {
        long expected = 0;
        int replayed = 0;
        for (int i = 0; i < r.jobs.size(); i++) {
            if (!r.rejected[i]) {
                replayed++;
                expected += r.jobs.get(i).milliGpus() * r.jobs.get(i).durationMillis();
                assertThat(r.finish[i]).as("job %s ended", r.jobs.get(i).id()).isGreaterThanOrEqualTo(0);
            }
        }
        assertThat(r.ended).isEqualTo(replayed);
        assertThat(r.violations).isEmpty();
        assertThat(r.leftAllocated).isZero();
        assertThat(r.succeededMilliGpuMs).isEqualTo(expected);
        assertThat(r.billedMilliGpuMs).isEqualTo(expected + r.preemptedMilliGpuMs + r.lostMilliGpuMs);
        return r;
    }

    private static final String[] THREE_HALVES = {"p1,1000,1024,1,500,,LS,Running,0,100,0",
        "p2,1000,1024,1,500,,LS,Running,0,200,0", "p3,1000,1024,1,500,,BE,Running,0,50,0"};

    @Test
    void two_half_gpu_pods_share_one_gpu_at_once_and_a_third_waits_for_a_share_to_end() {
        Workload w = pods(THREE_HALVES);

        // quota for three GPUs: only placement limits the sharing here (one T4)
        Simulation.Result r = assertInvariants(run(nodes("n1,32000,262144,1,T4"), w, Policy.GANTRY, 3));

        assertThat(r.firstGrant).containsExactly(0, 0, 100_000);
        assertThat(r.jobs).allMatch(SimJob::fractional);
        // billed by the share: 0.5 GPU x (100 + 200 + 50) s
        assertThat(r.billedMilliGpuMs).isEqualTo(500L * 350_000);
    }

    @Test
    void with_quota_for_one_gpu_two_halves_are_admitted_at_once_and_the_third_waits() {
        // the queue charges a share what it is (500 thousandths): two halves fill a one-GPU quota, not one
        Simulation.Result r = assertInvariants(run(nodes("n1,32000,262144,1,T4"), pods(THREE_HALVES), Policy.GANTRY));

        assertThat(r.firstGrant).containsExactly(0, 0, 100_000);
    }

    @Test
    void a_pod_constrained_to_one_model_waits_for_it_while_another_model_is_free() {
        Workload w = pods("a,1000,1024,1,1000,T4,LS,Running,0,100,0", "b,1000,1024,1,1000,T4,LS,Running,0,100,0");

        Simulation.Result r = assertInvariants(run(nodes("v,32000,262144,1,V100M16", "t,32000,262144,1,T4"), w,
                Policy.FIFO_BACKFILL));

        assertThat(r.jobs.get(0).gpuModels()).containsExactly("T4");
        assertThat(r.firstGrant).containsExactly(0, 100_000);
    }

    @Test
    void cpu_only_pods_are_left_out_and_a_pod_no_node_can_hold_is_rejected() {
        Workload w = pods("cpu,4000,1024,0,0,,LS,Running,0,100,0", "huge,999000,1024,1,1000,,LS,Running,0,100,0",
                "ok,1000,1024,1,250,,LS,Running,5,100,5");

        Simulation.Result r = assertInvariants(run(nodes("n1,32000,262144,2,T4"), w, Policy.GANTRY));

        assertThat(r.jobs).extracting(SimJob::id).containsExactly("huge", "ok");
        assertThat(r.rejected).containsExactly(true, false);
        assertThat(w.note()).contains("1 CPU-only pods not replayed");
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void the_first_1500_openb_pods_all_at_once_on_the_openb_cluster_keep_every_invariant(Policy p)
            throws IOException {
        assumeTrue(Files.isRegularFile(TRACES.resolve("alibaba-openb/openb_pod_list_default.csv")),
                "skipped: the shared Alibaba trace is not at " + TRACES.toAbsolutePath());
        Workload w = Traces.alibaba(Files.readAllLines(TRACES.resolve("alibaba-openb/openb_pod_list_default.csv")),
                new Traces.Options(1500, null, 1e6));
        List<NodeSpec> cluster = Clusters.resolve("alibaba", TRACES);

        Simulation.Result r = assertInvariants(run(cluster, w, p));

        assertThat(cluster).hasSize(1523);
        assertThat(w.jobs().stream().filter(SimJob::fractional).count()).isGreaterThan(100);
        assertThat(r.grants).isEqualTo(r.ended + r.preemptions + r.drainStops);
        if (p == Policy.GANTRY) {
            assertThat(Report.summarise(run(cluster, w, p)).virtualOnly()).as("same inputs, same report")
                    .isEqualTo(Report.summarise(r).virtualOnly());
        }
    }

    @Test
    void the_fraction_reaches_both_cores_task_groups() {
        SimJob j = new SimJob("f", "t", 1, 0, 1_000, 300, 2000, 4096, List.of("T4"), null);
        Simulation s = new Simulation(nodes("n1,32000,262144,1,T4"), new Workload("w", List.of(j), Map.of("t", 1.0),
                ""), Policy.GANTRY, Policy.queues(Map.of("t", 1.0), 1, 0, null, null), new TopologyPlacer(), List.of(),
                null);

        var task = s.spec(j).getTasks().get(0);
        assertThat(task.getGpuMilli()).isEqualTo(300);
        assertThat(task.getGpus()).isZero();
        assertThat(task.getGpuModels()).containsExactly("T4");
        assertThat(task.getCpuMillis()).isEqualTo(2000);
    }
}
