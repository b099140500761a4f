package io.gantry.queue.core;

import java.util.List;

/**
 * One tenant as a policy sees it at the start of a cycle: its quota, what is reserved already, and its eligible
 * jobs (parked jobs are left out, so they can never block anyone), in no particular order.
 */
public record TenantQueue(String tenant, int quotaGpus, long reservedGpus, List<PendingJob> pending) {
    public TenantQueue {
        pending = List.copyOf(pending);
    }
}
