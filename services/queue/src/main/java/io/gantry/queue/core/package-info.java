/**
 * The queue's pure core: fair-share queues with Kueue-style quotas, the job lifecycle, and why each job waits.
 *
 * <p>It decides: whether a submitted job enters a queue, which queued jobs are offered to placement and when (quotas
 * with borrowing and lending in nested cohorts, {@link io.gantry.queue.core.FairShareConfig}; order by the
 * replaceable {@link io.gantry.queue.core.DispatchPolicy}, by default {@link io.gantry.queue.core.FairSharePolicy}:
 * priority class, weighted DRF with decayed usage, FIFO; backfill and starvation reservations), which GPU flavour a
 * job is charged to, why a job waits, when a reservation ends, and the job's terminal outcome from what placement and
 * recovery report. It validates the queue configuration ({@link io.gantry.queue.core.FairShareConfig#fromYaml}).
 *
 * <p>It does not decide: where a gang runs or whether it fits the cluster (placement), whether an interrupted job
 * runs again (recovery), or who may see what (the HTTP adapter). It knows nothing of Kafka, Avro, YAML files or
 * Micronaut: the adapter parses the file and maps wire records to {@link io.gantry.queue.core.Input}s and
 * {@link io.gantry.queue.core.QueueFact}s.
 *
 * <p>Shape: {@link io.gantry.queue.core.QueueCore#apply} returns facts and replays them itself;
 * {@link io.gantry.queue.core.QueueCore#replay(QueueFact, java.time.Instant)} is the only mutator and rebuilds the
 * state (including usage history, from the facts' event times) from {@code queue.job-events} after a restart. Every
 * state change is one of those facts, including the end of a reservation ({@code QuotaReleased}) and the unparking of
 * a deferred job (a {@code JobWaiting} with a reason other than CAPACITY, or its {@code JobDispatched}).
 *
 * <p>The admission engine ({@code Scheduler}, one per configuration) is split along Kueue's lines, all
 * package-private: {@code QuotaTree} (cohorts, {@code ClusterQueue}s, quotas, limits, usage, "available", shares),
 * {@code QuotaLedger} (what each dispatched attempt holds), {@code PendingIndex} (pending jobs per queue and request
 * shape), {@code AdmissionCycle} (the admission loop), {@code Preemptor} (victim search), {@code StarvationGuard}
 * (reservations, backfill around them) and {@code Explainer} (wait sentences). Its indexes make an event cost work
 * in proportion to the queues of the cohort tree it touches, not to the number of pending jobs.
 */
package io.gantry.queue.core;
