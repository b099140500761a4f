package io.gantry.simulator;

import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.queue.core.FairShareConfig;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One unit for GPUs across the services, over random histories of whole-GPU gangs and GPU fractions of a few tenants
 * on a small cluster, through the production handlers of queue, placement and recovery and billing's rating: for
 * every attempt, what the queue charges ({@code JobDispatched.gpuMilli}) is what placement places, what the queue
 * gives back ({@code QuotaReleased.gpuMilli}) is what it charged, and what billing rates is what was placed (the
 * simulation records any difference as a violation, at the event where it happens). Per tenant the charged, placed
 * and billed sums are then equal at every point of the history.
 */
class OneUnitProperties {
    private static final String[] TENANTS = {"vision", "nlp", "speech"};

    /** 0-1000 in thousandths: a share below 1000, or whole GPUs (1, 2, 4, 8 per gang). */
    record Job(int tenant, int shape, int submitSeconds, int runSeconds) {
    }

    @Provide
    Arbitrary<List<Job>> histories() {
        Arbitrary<Job> job = Combinators.combine(Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 11), Arbitraries.integers().between(0, 600),
                Arbitraries.integers().between(1, 900)).as(Job::new);
        return job.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 40)
    void chargedEqualsPlacedEqualsBilledForEveryTenantAtEveryPoint(@ForAll("histories") List<Job> history,
                                                                   @ForAll("quotas") int quotaGpus) throws Exception {
        List<SimJob> jobs = new ArrayList<>();
        for (int i = 0; i < history.size(); i++) {
            Job j = history.get(i);
            // shapes 0-7: fractions 125..1000-ish of one GPU; 8-11: whole gangs of 1, 2, 4, 8 GPUs
            boolean share = j.shape() < 8;
            jobs.add(new SimJob("j" + i, TENANTS[j.tenant()], share ? 1 : 1 << (j.shape() - 8),
                    j.submitSeconds() * 1000L, j.runSeconds() * 1000L, share ? 125 * (j.shape() + 1) - 1 : null,
                    500, 1024, List.of(), null));
        }
        jobs.sort(java.util.Comparator.comparingLong(SimJob::submitMillis));
        Workload w = new Workload("random", jobs, Map.of("vision", 2.0, "nlp", 1.0, "speech", 1.0), "random");
        List<NodeSpec> nodes = Clusters.resolve("uniform:2x8", null);
        FairShareConfig config = Policy.queues(w.tenantWeights(), quotaGpus, 0, null, null);

        Simulation.Result r = new Simulation(nodes, w, Policy.GANTRY, config, new TopologyPlacer(), List.of(), null)
                .run();

        assertThat(r.violations).as("charged = placed = released = billed, per attempt").isEmpty();
        long expected = 0;
        for (int i = 0; i < r.jobs.size(); i++) {
            if (!r.rejected[i]) {
                assertThat(r.finish[i]).as("job %s ran to its end", r.jobs.get(i).id()).isGreaterThanOrEqualTo(0);
                expected += r.jobs.get(i).milliGpus() * r.jobs.get(i).durationMillis();
            }
        }
        assertThat(r.succeededMilliGpuMs).as("every job billed exactly its share x its run time").isEqualTo(expected);
    }

    @Provide
    Arbitrary<Integer> quotas() {
        // half the cluster (the quota, borrowed across the cohort, decides who runs; the largest gang still fits it)
        // and the whole cluster
        return Arbitraries.of(8, 16);
    }
}
