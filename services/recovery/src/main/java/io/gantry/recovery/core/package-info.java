/**
 * What recovery decides, as plain Java: when a node is declared failed (no sign of life for longer than the
 * heartbeat timeout, measured on recovery's own clock at the moment a heartbeat is received, and improbable enough
 * for that node's heartbeat history: phi accrual), when a failed node is healthy again, what a device fault means
 * (application or hardware by the {@link io.gantry.recovery.core.XidCatalog Xid table}; fail the runs, cordon the GPU
 * or the node, drain the node after repeated faults; which runs it hits, joined with the live allocations), and
 * whether a job interrupted by an infrastructure failure (node lost, device fault) runs again or is abandoned when its
 * failure budget is spent.
 *
 * <p>{@link io.gantry.recovery.core.Recovery} is a replayable state machine: its decision methods only read
 * state and return {@link io.gantry.recovery.core.RecoveryFact facts}; {@code replay(fact)} is the only mutator.
 * The same replay rebuilds state from recovery's own topics after a restart.
 *
 * <p>It does not decide where a requeued job runs, which tasks to stop on a failed node or faulty device (placement
 * does, from its own allocations), pre-flight checks (placement's), or anything about billing; it never sees Kafka,
 * Avro or the wall clock (time is an argument).
 */
package io.gantry.recovery.core;
