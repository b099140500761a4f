/**
 * The trace-replay simulator: replays GPU-cluster workloads through the production queue core
 * ({@code io.gantry.queue.core.QueueCore}) and placement core ({@code io.gantry.placement.core.ClusterState}) in
 * virtual time, wired as the running services wire them over Kafka, with recovery's requeue rule in between.
 * Several policies run side by side on the same cluster and workload; {@link io.gantry.simulator.Report} writes
 * the figures. Deterministic: nothing depends on the wall clock except the decisions-per-second and heap figures.
 */
package io.gantry.simulator;
