/**
 * What recovery decides, as plain Java: when a node is declared failed (no sign of life for longer than the
 * heartbeat timeout, measured on recovery's own clock at the moment a heartbeat is received), when a failed node
 * is healthy again, and whether a job interrupted by a node failure runs again or is abandoned at the restart
 * limit.
 *
 * <p>{@link io.gantry.recovery.core.Recovery} is a replayable state machine: its decision methods only read
 * state and return {@link io.gantry.recovery.core.RecoveryFact facts}; {@code replay(fact)} is the only mutator.
 * The same replay rebuilds state from recovery's own topics after a restart.
 *
 * <p>It does not decide where a requeued job runs, which tasks to stop on a failed node, or anything about
 * billing; it never sees Kafka, Avro or the wall clock (time is an argument).
 */
package io.gantry.recovery.core;
