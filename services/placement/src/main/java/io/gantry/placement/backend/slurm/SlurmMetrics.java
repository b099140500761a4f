package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackend;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;

/**
 * Prometheus gauges of the Slurm backend: {@code gantry_placement_slurm_foreign_jobs} and
 * {@code gantry_placement_slurm_foreign_gpus} (jobs Gantry did not submit holding resources on Gantry's nodes,
 * and their GPUs: capacity taken outside the one entrance), {@code gantry_placement_slurm_controller_reachable}
 * (1 when the last squeue and scontrol answered).
 */
@Context
@Requires(property = "gantry.placement.backend", value = SlurmBackend.NAME)
public class SlurmMetrics {
    public SlurmMetrics(MeterRegistry registry, ExecutionBackend backend) {
        if (!(backend instanceof SlurmBackend slurm)) {
            return;
        }
        Gauge.builder("gantry.placement.slurm.foreign.jobs", slurm, b -> b.foreignJobs().size())
                .description("Slurm jobs not submitted by Gantry holding resources on Gantry's nodes")
                .register(registry);
        Gauge.builder("gantry.placement.slurm.foreign.gpus", slurm, b -> b.foreignJobs().stream()
                        .mapToLong(j -> (long) j.gpusPerNode() * j.nodes().size()).sum())
                .description("GPUs held on Gantry's nodes by Slurm jobs Gantry did not submit")
                .register(registry);
        Gauge.builder("gantry.placement.slurm.controller.reachable", slurm, b -> b.controllerReachable() ? 1 : 0)
                .description("1 when the last squeue and scontrol answered, else 0")
                .register(registry);
    }
}
