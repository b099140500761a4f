/**
 * The {@code slurm} execution backend: Gantry places, an existing Slurm controller runs. Each task replica is one
 * batch job pinned to Gantry's node and GPU count in Gantry's partition (the one entrance); state comes back from
 * squeue / scontrol / sacct on a worker thread, never on placement's event loop. The parsing of Slurm's output
 * ({@link io.gantry.placement.backend.slurm.SlurmOutput}), the inventory mapping
 * ({@link io.gantry.placement.backend.slurm.SlurmInventory}) and the job shape
 * ({@link io.gantry.placement.backend.slurm.SlurmSubmission}) are plain functions; the commands sit behind
 * {@link io.gantry.placement.backend.slurm.SlurmCommands}.
 */
package io.gantry.placement.backend.slurm;
