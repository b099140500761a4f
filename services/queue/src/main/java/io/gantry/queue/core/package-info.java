/**
 * The queue's pure core: per-tenant queues, GPU quotas and the job lifecycle.
 *
 * <p>It decides: whether a submitted job enters the queue, which queued jobs are offered to placement and when
 * (through a replaceable {@link io.gantry.queue.core.DispatchPolicy}; today strict FIFO per tenant, round-robin across
 * tenants, within each tenant's GPU quota), why a job waits, when a reservation ends, and the job's terminal outcome
 * from what placement and recovery report.
 *
 * <p>It does not decide: where a gang runs or whether it fits the cluster (placement), whether an interrupted job
 * runs again (recovery), or who may see what (the HTTP adapter). It knows nothing of Kafka, Avro or Micronaut: the
 * adapter maps wire records to {@link io.gantry.queue.core.Input}s and {@link io.gantry.queue.core.QueueFact}s.
 *
 * <p>Shape: {@link io.gantry.queue.core.QueueCore#apply} returns facts and replays them itself;
 * {@link io.gantry.queue.core.QueueCore#replay} is the only mutator and rebuilds the state from
 * {@code queue.job-events} after a restart. Every state change is one of those facts, including the end of a
 * reservation ({@code QuotaReleased}) and the unparking of a deferred job (a {@code JobWaiting} with a reason other
 * than CAPACITY, or its {@code JobDispatched}).
 */
package io.gantry.queue.core;
