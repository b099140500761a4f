package io.gantry.simulator;

import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.queue.core.FairShareConfig;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SimulationTest {
    private static Simulation.Result run(List<NodeSpec> nodes, List<SimJob> jobs, Policy policy,
                                         List<Simulation.Fault> faults) {
        Workload w = new Workload("test", jobs, Map.of("a", 1.0, "b", 1.0), "inline");
        FairShareConfig config = Policy.queues(w.tenantWeights(), Clusters.totalGpus(nodes), 0, null, null);
        return new Simulation(nodes, w, policy, config, new TopologyPlacer(), faults, null).run();
    }

    private static int index(Simulation.Result r, String id) {
        for (int i = 0; i < r.jobs.size(); i++) {
            if (r.jobs.get(i).id().equals(id)) {
                return i;
            }
        }
        throw new AssertionError(id);
    }

    /** A holds half the node; B needs all of it; C would fit next to A. */
    private static final List<SimJob> HEAD_OF_LINE = List.of(
            new SimJob("a", "a", 4, 0, 100_000),
            new SimJob("b", "b", 8, 1_000, 100_000),
            new SimJob("c", "a", 2, 2_000, 10_000));

    @Test
    void strict_fifo_holds_a_small_job_behind_a_blocked_head() {
        Simulation.Result r = run(Clusters.uniform(1, 8), HEAD_OF_LINE, Policy.FIFO, List.of());

        assertThat(r.firstGrant[index(r, "b")]).isEqualTo(100_000);
        assertThat(r.firstGrant[index(r, "c")]).isEqualTo(200_000);
        assertThat(r.violations).isEmpty();
    }

    @Test
    void fifo_with_backfill_runs_the_small_job_next_to_the_first() {
        Simulation.Result r = run(Clusters.uniform(1, 8), HEAD_OF_LINE, Policy.FIFO_BACKFILL, List.of());

        assertThat(r.firstGrant[index(r, "c")]).isEqualTo(2_000);
        assertThat(r.ended).isEqualTo(3);
    }

    private static final long MINUTE = 60_000;

    @Test
    void a_run_on_a_failed_node_is_requeued_once_recovery_notices_and_its_lost_gpu_time_is_billed_apart() {
        List<NodeSpec> nodes = Clusters.uniform(1, 8);
        long failAt = 10 * MINUTE;
        long downFor = 30 * MINUTE;
        long runs = 60 * MINUTE;
        Simulation.Result r = run(nodes, List.of(new SimJob("j", "a", 8, 0, runs)), Policy.GANTRY,
                List.of(new Simulation.Fault(failAt, nodes.get(0).nodeId(), downFor)));

        long timeout = Simulation.FAILURE_TIMEOUT.toMillis();
        long heartbeat = Simulation.HEARTBEAT.toMillis();
        long check = Simulation.RECOVERY_CHECK.toMillis();
        // the node is alone in its pool: its silence is the whole pool's, which recovery holds for the disruption hold
        // before declaring it (placement away looks the same)
        long hold = io.gantry.recovery.core.RecoveryPolicy.DEFAULT_DISRUPTION_HOLD.toMillis();
        assertThat(r.requeues).isEqualTo(1);
        assertThat(r.succeeded[0]).isTrue();
        // noticed after the silence outlasted the timeout and the hold (the last heartbeat came at most one period
        // before)
        assertThat(r.lostMilliGpuMs).isBetween(8_000 * (failAt + timeout + hold - heartbeat),
                8_000 * (failAt + timeout + hold + check));
        // the rerun starts once the node heartbeats again, and runs its whole length (no checkpoints)
        assertThat(r.finish[0]).isBetween(failAt + downFor + runs, failAt + downFor + heartbeat + check + runs);
        assertThat(r.succeededMilliGpuMs).isEqualTo(8_000 * runs);
        assertThat(r.billedMilliGpuMs).isEqualTo(r.succeededMilliGpuMs + r.lostMilliGpuMs);
        assertThat(r.violations).isEmpty();
    }

    @Test
    void with_checkpoints_a_failed_run_resumes_from_its_newest_one_and_loses_only_the_work_since() {
        List<NodeSpec> nodes = Clusters.uniform(1, 8);
        long failAt = 35 * MINUTE;
        long downFor = 30 * MINUTE;
        Workload w = new Workload("test", List.of(new SimJob("j", "a", 8, 0, 60 * MINUTE)), Map.of("a", 1.0), "inline");
        Simulation.Result r = new Simulation(nodes, w, Policy.GANTRY,
                Policy.queues(w.tenantWeights(), 8, 0, null, null), new TopologyPlacer(),
                List.of(new Simulation.Fault(failAt, nodes.get(0).nodeId(), downFor)), null)
                .checkpoints(new Simulation.Checkpoints(java.time.Duration.ofMinutes(10),
                        java.time.Duration.ofMinutes(1), 0, 1))
                .run();

        assertThat(r.requeues).isEqualTo(1);
        assertThat(r.succeeded[0]).as("%s %s %s %s", r.queueInputs, r.deferralsByReason, r.deferralExample,
                java.util.Arrays.toString(r.finish)).isTrue();
        assertThat(r.maxWorkLostPerFailureMs).as("failed 5 minutes after the checkpoint at 30").isEqualTo(5 * MINUTE);
        assertThat(r.savedMilliGpuMs).as("the 30 minutes of work the rerun resumed with").isEqualTo(8_000 * 30 * MINUTE);
        long rerun = MINUTE + 30 * MINUTE; // the restart cost, then the rest of the work
        assertThat(r.finish[0]).isBetween(failAt + downFor + rerun, failAt + downFor + Simulation.HEARTBEAT.toMillis()
                + Simulation.RECOVERY_CHECK.toMillis() + rerun);
        assertThat(r.billedMilliGpuMs).isEqualTo(r.succeededMilliGpuMs + r.lostMilliGpuMs + r.savedMilliGpuMs);
        assertThat(r.checkpoints).as("3 before the failure, 3 in the rerun (at 10, 20, 30 min of its work)")
                .isEqualTo(5);
        assertThat(r.violations).isEmpty();
    }

    @Test
    void with_tasks_of_at_most_one_gpu_a_gang_spreads_over_nodes_instead_of_waiting_for_one() {
        List<NodeSpec> nodes = Clusters.uniform(2, 4);
        // two 3-GPU runs leave one GPU free on each node: a 2-GPU gang fits no node until one of them ends
        Workload w = new Workload("test", List.of(new SimJob("a", "t", 3, 0, 60 * MINUTE),
                new SimJob("b", "t", 3, 0, 90 * MINUTE), new SimJob("g", "t", 2, 1_000, 10 * MINUTE)),
                Map.of("t", 1.0), "inline");
        Simulation.Result whole = new Simulation(nodes, w, Policy.GANTRY, Policy.queues(w.tenantWeights(), 8, 0, null,
                null), new TopologyPlacer(), List.of(), null).run();
        Simulation.Result spread = new Simulation(nodes, w, Policy.GANTRY, Policy.queues(w.tenantWeights(), 8, 0, null,
                null), new TopologyPlacer(), List.of(), null).taskGpus(1).run();

        assertThat(whole.firstGrant[index(whole, "g")]).as("one task of 2 GPUs waits for a node").isEqualTo(60 * MINUTE);
        assertThat(spread.firstGrant[index(spread, "g")]).as("two tasks of 1 GPU").isLessThan(MINUTE);
        assertThat(spread.ended).isEqualTo(3);
        assertThat(spread.violations).isEmpty();
        assertThatThrownBy(() -> new Simulation(nodes, w, Policy.GANTRY, Policy.queues(w.tenantWeights(), 8, 0, null,
                null), new TopologyPlacer(), List.of(), null).taskGpus(0)).hasMessageContaining(">= 1");
    }

    @Test
    void a_hardware_xid_on_the_gpu_of_a_run_requeues_it_and_the_gpu_takes_no_work_until_repaired() {
        List<NodeSpec> nodes = Clusters.uniform(1, 1);
        String node = nodes.get(0).nodeId();
        Workload w = new Workload("test", List.of(new SimJob("j", "a", 1, 0, 60 * MINUTE)), Map.of("a", 1.0), "inline");
        Simulation.Result r = new Simulation(nodes, w, Policy.GANTRY, Policy.queues(w.tenantWeights(), 1, 0, null, null),
                new TopologyPlacer(), List.of(), null)
                .deviceFaults(List.of(new Simulation.DeviceFaultAt(10 * MINUTE, node, 0, 79, 20 * MINUTE)))
                .run();

        assertThat(r.deviceFaults).isEqualTo(1);
        assertThat(r.requeues).isEqualTo(1);
        assertThat(r.succeeded[0]).isTrue();
        assertThat(r.maxWorkLostPerFailureMs).as("no checkpoints: the whole run so far").isEqualTo(10 * MINUTE);
        // its only GPU is cordoned until repaired at 30 min: the rerun starts then, not at once
        assertThat(r.finish[0]).isBetween(90 * MINUTE, 91 * MINUTE);
        assertThat(r.billedMilliGpuMs).isEqualTo(r.succeededMilliGpuMs + r.lostMilliGpuMs);
        assertThat(r.violations).isEmpty();
    }

    @Test
    void a_node_down_for_less_than_the_failure_timeout_goes_unnoticed_and_the_run_goes_on() {
        List<NodeSpec> nodes = Clusters.uniform(1, 8);
        Simulation.Result r = run(nodes, List.of(new SimJob("j", "a", 8, 0, 60 * MINUTE)), Policy.GANTRY,
                List.of(new Simulation.Fault(10 * MINUTE, nodes.get(0).nodeId(), 2 * MINUTE)));

        assertThat(r.requeues).isZero();
        assertThat(r.lostMilliGpuMs).isZero();
        assertThat(r.finish[0]).isEqualTo(60 * MINUTE);
    }

    @Test
    void a_job_interrupted_more_often_than_the_restart_limit_fails() {
        List<NodeSpec> nodes = Clusters.uniform(1, 8);
        List<Simulation.Fault> faults = List.of(10L, 60L, 110L, 160L).stream()
                .map(at -> new Simulation.Fault(at * MINUTE, nodes.get(0).nodeId(), 15 * MINUTE)).toList();
        Simulation.Result r = run(nodes, List.of(new SimJob("j", "a", 8, 0, 600 * MINUTE)), Policy.GANTRY, faults);

        assertThat(r.requeues).isEqualTo(Simulation.MAX_RESTARTS);
        assertThat(r.ended).isEqualTo(1);
        assertThat(r.succeeded[0]).isFalse();
        assertThat(r.leftAllocated).isZero();
    }

    @Test
    void a_job_larger_than_the_cluster_is_rejected_up_front_and_the_rest_run() {
        Simulation.Result r = run(Clusters.uniform(1, 8), List.of(new SimJob("big", "a", 16, 0, 1_000),
                new SimJob("small", "b", 8, 0, 1_000)), Policy.GANTRY, List.of());

        assertThat(r.rejected).containsExactly(true, false);
        assertThat(r.ended).isEqualTo(1);
    }

    @Test
    void the_fair_share_quotas_split_the_cluster_by_weight_and_sum_to_it() {
        FairShareConfig c = Policy.queues(Map.of("x", 3.0, "y", 1.0, "z", 1.0), 64, 0, null, null);

        assertThat(c.queues()).extracting(q -> q.quotas().get(FairShareConfig.ANY_GPU).nominal())
                .containsExactly(38_000L, 13_000L, 13_000L); // whole GPUs, kept in thousandths
        assertThat(Policy.parse("all")).hasSize(4);
        assertThat(Policy.DRF_NODECAY.config(c).halfLife()).isGreaterThan(c.halfLife().multipliedBy(1000));
    }
    @Test
    void restartsAfterAReplayRebuildEachStatefulServiceFromItsWholeHistory() {
        Workload w = new Workload("t", List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "x", 4, 0, 10_000),
                new SimJob("c", "x", 1, 50_000, 10_000)), Map.of("x", 1.0), "inline");
        Simulation sim = new Simulation(Clusters.uniform(1, 8), w, Policy.GANTRY,
                Policy.queues(Map.of("x", 1.0), 8, 0, null, null), new TopologyPlacer(),
                List.of(), null);
        assertThat(sim.run().ended).isEqualTo(3);

        List<Simulation.Restart> restarts = sim.timeRestarts();

        assertThat(restarts).extracting(Simulation.Restart::service).containsExactly(io.gantry.schemas.Service.QUEUE,
                io.gantry.schemas.Service.PLACEMENT, io.gantry.schemas.Service.RECOVERY);
        // the queue's history: at least each job's queued, dispatched and ended facts
        assertThat(restarts.get(0).records()).isGreaterThanOrEqualTo(3L * 3);
        assertThat(restarts).allSatisfy(t -> assertThat(t.records()).isPositive());
        // each takes snapshots: after the replay (no live run, one node) a few records each
        List<Simulation.Restart> fromSnapshots = sim.timeSnapshotRestarts();
        assertThat(fromSnapshots).extracting(Simulation.Restart::service)
                .containsExactly(io.gantry.schemas.Service.QUEUE, io.gantry.schemas.Service.PLACEMENT,
                        io.gantry.schemas.Service.RECOVERY);
        // the queue's is its memory alone (every job ended)
        for (int i = 0; i < 3; i++) {
            assertThat(fromSnapshots.get(i).records()).isPositive().isLessThan(restarts.get(i).records());
        }
    }
}
