package io.gantry.placement.backend.slurm;

import io.gantry.placement.kafka.PlacementProcessor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;

import java.util.List;

/**
 * Prometheus gauges of the Slurm backend, summed over the pools it runs: {@code gantry_placement_slurm_foreign_jobs}
 * and {@code gantry_placement_slurm_foreign_gpus} (jobs Gantry did not submit holding resources on Gantry's nodes,
 * and their GPUs: capacity taken outside the one entrance), {@code gantry_placement_slurm_controller_reachable}
 * (1 when the last squeue and scontrol of every Slurm pool answered). None without a Slurm pool.
 */
@Context
public class SlurmMetrics {
    @jakarta.inject.Inject
    public SlurmMetrics(MeterRegistry registry, PlacementProcessor placement) {
        this(registry, placement.backends(SlurmBackend.class));
    }

    /** The gauges of these backends (none when there are none); they hold the list (a gauge's state is weak). */
    SlurmMetrics(MeterRegistry registry, List<SlurmBackend> slurm) {
        if (slurm.isEmpty()) {
            return;
        }
        Gauge.builder("gantry.placement.slurm.foreign.jobs", slurm,
                        all -> all.stream().mapToLong(b -> b.foreignJobs().size()).sum())
                .description("Slurm jobs not submitted by Gantry holding resources on Gantry's nodes")
                .strongReference(true).register(registry);
        Gauge.builder("gantry.placement.slurm.foreign.gpus", slurm, all -> all.stream()
                        .flatMap(b -> b.foreignJobs().stream())
                        .mapToLong(j -> (long) j.gpusPerNode() * j.nodes().size()).sum())
                .description("GPUs held on Gantry's nodes by Slurm jobs Gantry did not submit")
                .strongReference(true).register(registry);
        Gauge.builder("gantry.placement.slurm.controller.reachable", slurm,
                        all -> all.stream().allMatch(SlurmBackend::controllerReachable) ? 1 : 0)
                .description("1 when the last squeue and scontrol answered, else 0")
                .strongReference(true).register(registry);
    }
}
