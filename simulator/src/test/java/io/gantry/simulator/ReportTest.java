package io.gantry.simulator;

import io.gantry.events.QuotaWait;
import io.gantry.events.WaitReason;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.placement.core.TopologyPlacer;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The report's derived figures on hand-checkable replays. */
class ReportTest {
    private static Simulation.Result run(List<SimJob> jobs, Map<String, Double> weights) {
        Workload w = new Workload("t", jobs, weights, "inline");
        FairShareConfig config = Policy.queues(weights, 8, 0, null, null);
        return new Simulation(Clusters.uniform(1, 8), w, Policy.FIFO_BACKFILL, config, new TopologyPlacer(), List.of(),
                null).run();
    }

    @Test
    void finish_time_fairness_is_jct_over_run_time_times_the_tenants_in_the_system() {
        // a and b arrive together and both need the whole node: a runs first (rho = 100 / (100 x 2)), b waits
        // (rho = 200 / (100 x 2)); c arrives alone later (rho = 1)
        Simulation.Result r = run(List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "y", 8, 0, 100_000),
                new SimJob("c", "x", 8, 500_000, 100_000)), Map.of("x", 1.0, "y", 1.0));

        Report.Ftf ftf = Report.finishTimeFairness(r);

        assertThat(ftf.max()).isCloseTo(1.0, within(1e-9));
        assertThat(ftf.mean()).isCloseTo((0.5 + 1.0 + 1.0) / 3, within(1e-9));
        assertThat(ftf.overOne()).isZero();
    }

    @Test
    void the_longest_gang_wait_is_the_longest_first_grant_wait_of_a_job_of_more_than_one_gpu() {
        // a holds the node for 100 s; the gang b and the single GPU c wait for it, d (a gang) arrives after a ended
        Simulation.Result r = run(List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "y", 2, 0, 10_000),
                new SimJob("c", "y", 1, 0, 10_000), new SimJob("d", "x", 4, 150_000, 10_000)),
                Map.of("x", 1.0, "y", 1.0));

        assertThat(Report.longestGangWait(r)).isEqualTo(new Report.GangWait("b", 100_000));
    }

    @Test
    void the_wait_causes_add_up_to_the_average_wait_and_name_what_each_job_waited_for() {
        // a (x) borrows the whole node for 100 s; b (y, within its nominal 4) waits for the quota x borrowed; c (x, a
        // whole node) arrives at 150 s while b holds half the node: the cohort has 4 of the 8 it needs
        List<SimJob> jobs = List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "y", 4, 0, 100_000),
                new SimJob("c", "x", 8, 150_000, 10_000));
        Simulation.Result r = run(jobs, Map.of("x", 1.0, "y", 1.0));

        assertThat(r.waitCauses.table()).containsOnlyKeys("QUOTA: own nominal lent to others", "QUOTA: cohort full",
                WaitCauses.NO_REASON, WaitCauses.PLACING);
        assertThat(r.waitCauses.table().get("QUOTA: own nominal lent to others")).containsExactly(0, 100_000, 0, 0);
        assertThat(r.waitCauses.table().get("QUOTA: cohort full")).containsExactly(0, 0, 50_000, 0);
        StringBuilder md = new StringBuilder();
        Report.waitCauses(md, List.of(r));
        // seconds per job of the workload: b's 100 s and c's 50 s over 3 jobs
        assertThat(md.toString()).contains("| total | 50 | 0 | 33 | 17 | 0 |")
                .contains("| 1 GPU (0 jobs) | 2-4 GPUs (1 jobs) | 5-8 GPUs (2 jobs) | > 8 GPUs (0 jobs) |");

        // quota for 16 GPUs on 8: the same jobs wait for placement instead, each under its deferral cause
        Workload w = new Workload("t", jobs, Map.of("x", 1.0, "y", 1.0), "inline");
        Simulation.Result placed = new Simulation(Clusters.uniform(1, 8), w, Policy.FIFO_BACKFILL,
                Policy.queues(w.tenantWeights(), 16, 0, null, null), new TopologyPlacer(), List.of(), null).run();
        long capacity = placed.waitCauses.table().entrySet().stream().filter(e -> e.getKey().startsWith("CAPACITY: "))
                .mapToLong(e -> Arrays.stream(e.getValue()).sum()).sum();
        assertThat(capacity).isEqualTo(150_000);
    }

    @Test
    void a_wait_is_the_last_cause_heard_until_the_next_and_ends_at_the_first_grant() {
        WaitCauses w = new WaitCauses();
        w.submitted("j", 0);
        w.heard("j", 2, "QUOTA: cohort full", 10);
        w.heard("j", 2, "CAPACITY: FRAGMENTED", 40);
        w.granted("j", 2, 100);
        w.heard("j", 2, "QUOTA: cohort full", 200); // after the grant: not a first-grant wait
        w.granted("unknown", 1, 300);

        assertThat(w.table()).containsOnlyKeys(WaitCauses.NO_REASON, "QUOTA: cohort full", "CAPACITY: FRAGMENTED");
        assertThat(w.table().get(WaitCauses.NO_REASON)).containsExactly(0, 10, 0, 0);
        assertThat(w.table().get("QUOTA: cohort full")).containsExactly(0, 30, 0, 0);
        assertThat(w.table().get("CAPACITY: FRAGMENTED")).containsExactly(0, 60, 0, 0);
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, QuotaWait.HELD_FOR_STARVING_JOB))
                .isEqualTo("QUOTA: held for a starving job");
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, QuotaWait.TURN)).isEqualTo("QUOTA: its turn in its queue");
        assertThat(WaitCauses.ofQueue(WaitReason.DEPENDENCY, null)).isEqualTo("DEPENDENCY");
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, QuotaWait.PREEMPTING))
                .isEqualTo("QUOTA: preempting, its victims stopping");
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, QuotaWait.COHORT_FULL)).isEqualTo("QUOTA: cohort full");
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, QuotaWait.OWN_QUOTA)).isEqualTo("QUOTA: its queue's own quota");
        assertThat(WaitCauses.ofQueue(WaitReason.QUOTA, null)).as("a record older than the type")
                .isEqualTo("QUOTA: its queue's own quota");
    }

    @Test
    void time_after_the_first_grant_is_what_a_succeeded_job_took_beyond_its_run_time() {
        // a ran 100 s but ended 250 s after its first grant (preempted, waited, resumed); b ran straight through;
        // c failed after 40 s on a 10 s run time (failed attempts retried: its run time says nothing about what it ran)
        List<SimJob> jobs = List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "x", 1, 0, 50_000),
                new SimJob("c", "x", 2, 0, 10_000));
        Simulation.Result r = new Simulation.Result("gantry", jobs, 8);
        long[][] grantFinishSucceeded = {{10_000, 260_000, 1}, {0, 50_000, 1}, {0, 40_000, 0}};
        for (int i = 0; i < jobs.size(); i++) {
            r.firstGrant[i] = grantFinishSucceeded[i][0];
            r.finish[i] = grantFinishSucceeded[i][1];
            r.succeeded[i] = grantFinishSucceeded[i][2] == 1;
        }

        assertThat(Report.afterFirstGrant(r)).containsExactly(0, 0, 150_000, 0);
        StringBuilder md = new StringBuilder();
        Report.waitCauses(md, List.of(r));
        assertThat(md.toString()).contains("waiting again, work lost, restart costs) | 50 | 0 | 0 | 50 | 0 |");
    }

    @Test
    void a_replay_without_gangs_has_no_longest_gang_wait() {
        Simulation.Result r = run(List.of(new SimJob("a", "x", 1, 0, 100_000), new SimJob("c", "y", 1, 0, 10_000)),
                Map.of("x", 1.0, "y", 1.0));

        assertThat(Report.longestGangWait(r)).isNull();
    }

    @Test
    void queue_length_counts_jobs_that_arrived_and_neither_run_nor_ended() {
        Simulation.Result r = run(List.of(new SimJob("a", "x", 8, 0, 100_000), new SimJob("b", "y", 8, 0, 100_000),
                new SimJob("c", "y", 8, 0, 100_000)), Map.of("x", 1.0, "y", 1.0));

        assertThat(r.queueLength.max()).isEqualTo(2);
        // 2 waiting for 100 s, 1 for the next 100 s, none for the last 100 s
        assertThat(r.queueLength.mean(300_000)).isCloseTo(1.0, within(1e-9));
        assertThat(r.queueLength.buckets(300_000, 3)).containsExactly(2.0, 1.0, 0.0);
    }

    @Test
    void per_tenant_shares_over_time_add_up_to_the_utilisation() {
        Simulation.Result r = run(List.of(new SimJob("a", "x", 4, 0, 100_000), new SimJob("b", "y", 2, 0, 50_000)),
                Map.of("x", 1.0, "y", 1.0));

        Map<String, double[]> shares = Report.shareSeries(r, r.endMillis);
        double[] util = Report.utilisationSeries(r, r.endMillis);

        assertThat(shares).containsOnlyKeys("x", "y");
        for (int b = 0; b < Report.BUCKETS; b++) {
            assertThat(shares.get("x")[b] + shares.get("y")[b]).isCloseTo(util[b], within(1e-9));
        }
        assertThat(shares.get("x")[0]).isCloseTo(0.5, within(1e-9));
        assertThat(shares.get("y")[Report.BUCKETS - 1]).isZero();
    }

    @Test
    void stranded_gpus_are_free_gpus_on_nodes_too_empty_for_the_typical_request() {
        // typical request 8 GPUs (all the GPU demand); while a 1-GPU job runs the node's 7 free GPUs are stranded
        Workload w = new Workload("t", List.of(new SimJob("small", "x", 1, 0, 1_000_000),
                new SimJob("big", "x", 8, 0, 1_000_000), new SimJob("big2", "x", 8, 0, 1_000_000)),
                Map.of("x", 1.0), "inline");
        Simulation.Result r = new Simulation(Clusters.uniform(2, 8), w, Policy.FIFO_BACKFILL,
                Policy.queues(w.tenantWeights(), 16, 0, null, null), new TopologyPlacer(), List.of(), null).run();

        assertThat(r.stranded.max()).isEqualTo(7);
        assertThat(r.violations).isEmpty();
    }
}
