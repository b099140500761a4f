/**
 * The placement decisions, as plain Java: which nodes and GPU indices a gang gets, or why it gets none.
 *
 * <p>{@link io.gantry.placement.core.ClusterState} is a replayable state machine over the node inventory and the
 * live allocations. Its decision methods ({@code dispatch}, {@code cancel}, {@code nodeFailed}, {@code runEnded},
 * ...) never change anything; they return {@link io.gantry.placement.core.Fact facts}, and
 * {@link io.gantry.placement.core.ClusterState#replay replay} is the only mutator. The same replay rebuilds the
 * state from the topics at start, so a restart decides exactly as the process before it would have.
 *
 * <p>Where a gang goes is decided by a {@link io.gantry.placement.core.GangPlacer} over an immutable
 * {@link io.gantry.placement.core.InventorySnapshot}; today that is {@link io.gantry.placement.core.FirstFitPlacer}.
 * When nothing fits, {@link io.gantry.placement.core.Deferrals} names the most specific reason.
 *
 * <p>Not decided here: running the tasks (the execution backends), time (every decision takes the instant it is
 * made at), the wire format, and whether an interrupted job runs again (recovery's call).
 */
package io.gantry.placement.core;
