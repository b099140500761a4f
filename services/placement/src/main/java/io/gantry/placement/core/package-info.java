/**
 * The placement decisions, as plain Java: which nodes and GPU indices a gang gets, or why it gets none.
 *
 * <p>{@link io.gantry.placement.core.ClusterState} is a replayable state machine over the node inventory and the
 * live allocations. Its decision methods ({@code dispatch}, {@code cancel}, {@code nodeFailed}, {@code runEnded},
 * ...) never change anything; they return {@link io.gantry.placement.core.PlacementFact facts}, and
 * {@link io.gantry.placement.core.ClusterState#replay replay} is the only mutator. The same replay rebuilds the
 * state from the topics at start, so a restart decides exactly as the process before it would have.
 *
 * <p>Where a gang goes is decided by a {@link io.gantry.placement.core.GangPlacer} over an immutable
 * {@link io.gantry.placement.core.InventorySnapshot}, or over the live {@link io.gantry.placement.core.Inventory}
 * index: by default {@link io.gantry.placement.core.TopologyPlacer} (NVLink / PCIe / socket / node / rack / spine,
 * binpack or spread, GPU model preferences and tiers, which also explains deferrals); {@link
 * io.gantry.placement.core.FirstFitPlacer} stays as a baseline, with {@link io.gantry.placement.core.Deferrals}.
 * {@link io.gantry.placement.core.TraceClusters} parses real clusters (Lingjun, Alibaba openb) from trace lines.
 *
 * <p>Devices are granted whole ({@code PlacedTask.gpuIndices}) or in parts, one unit for both kinds:
 * {@link io.gantry.placement.core.GpuShare} (a fraction or a MIG instance, worth {@code milli / 1000} of a GPU),
 * within {@link io.gantry.placement.core.GpuSharing} (overcommit, {@link io.gantry.placement.core.MigProfiles}).
 * Runs also end by the state's own deadlines: a preemption's grace period and a job's time limit
 * ({@code preempt}, {@code expire}), kept in a sorted set so a tick reads only what is due.
 *
 * <p>Capacity reservations for starving gangs ({@code reserve}: the cheapest domain to drain, backfill that ends
 * before the drain, {@link io.gantry.placement.core.DeferralCause#DRAINING} / {@code RESERVED}) and cordons are
 * recorded as {@code gantry.io/*} control labels on the nodes' registrations, so the same replay rebuilds them;
 * {@link io.gantry.placement.core.RdmaNic RDMA NICs} closest to each task's GPUs are named on its placement.
 * Recovery's device-fault decisions ({@code deviceFault}, {@link io.gantry.placement.core.DeviceAction}) cordon single
 * GPUs the same way ({@code gantry.io/cordoned-gpus}: never free again until uncordoned) and stop the runs that held
 * them; it does not classify faults or decide retries (recovery does).
 *
 * <p>Which GPU models a task accepts is {@link io.gantry.placement.core.GpuTiers}'s answer for both placers (a tier
 * is never ignored: tier models narrowed by the task's own, an unknown tier accepts nothing). Numbers from the input
 * topics may be anything a {@code long} holds, so time sums go through {@link io.gantry.placement.core.TimeMath},
 * which saturates instead of throwing halfway through a decision.
 *
 * <p>Not decided here: running the tasks (the execution backends), time (every decision takes the instant it is
 * made at), the wire format, and whether an interrupted job runs again (recovery's call).
 */
package io.gantry.placement.core;
