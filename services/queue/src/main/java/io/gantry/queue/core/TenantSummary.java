package io.gantry.queue.core;

/**
 * One tenant's queue at a glance.
 *
 * @param queued     jobs waiting in the queue that may be dispatched (not parked)
 * @param parked     jobs placement deferred, waiting for a capacity change
 * @param dispatched jobs offered to placement whose run is not over (placed, running or about to be)
 */
public record TenantSummary(String tenant, int quotaGpus, long reservedGpus, int queued, int parked, int dispatched) {
}
