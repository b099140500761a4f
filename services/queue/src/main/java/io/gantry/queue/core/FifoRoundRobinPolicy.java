package io.gantry.queue.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict FIFO within a tenant, round-robin across tenants, within each tenant's GPU quota.
 *
 * <ul>
 *   <li>A tenant's jobs are ordered by original submit time, then job id. Only the head may be dispatched.</li>
 *   <li>Tenants take turns by name, starting after the tenant served last ({@link QueueSnapshot#lastServed()}); a
 *       turn dispatches at most one job. Turns go round until no tenant can dispatch.</li>
 *   <li>If the head does not fit the tenant's remaining quota, the tenant is blocked for the rest of the cycle
 *       (nothing behind the head overtakes it): verdict {@link WaitReason#QUOTA}.</li>
 *   <li>A job that needs more than the tenant's whole quota could never run: verdict
 *       {@link WaitReason#NEVER_FITS}, and it is skipped so it never blocks the jobs behind it.</li>
 * </ul>
 *
 * {@code JobSpec.priority} is not used by this policy.
 */
public final class FifoRoundRobinPolicy implements DispatchPolicy {
    private static final Comparator<PendingJob> FIFO =
            Comparator.comparing(PendingJob::submittedAt).thenComparing(PendingJob::jobId);

    @Override
    public Comparator<PendingJob> queueOrder() {
        return FIFO;
    }

    @Override
    public DispatchPlan plan(QueueSnapshot snapshot) {
        List<String> tenants = rotation(new ArrayList<>(snapshot.tenants().keySet()), snapshot.lastServed());
        Map<String, Deque<PendingJob>> queues = new HashMap<>();
        Map<String, Long> reserved = new HashMap<>();
        for (TenantQueue t : snapshot.tenants().values()) {
            List<PendingJob> ordered = new ArrayList<>(t.pending());
            ordered.sort(FIFO);
            queues.put(t.tenant(), new ArrayDeque<>(ordered));
            reserved.put(t.tenant(), t.reservedGpus());
        }
        List<String> dispatch = new ArrayList<>();
        List<DispatchPlan.Verdict> waits = new ArrayList<>();
        boolean progress = true;
        while (progress) {
            progress = false;
            for (String tenant : tenants) {
                Deque<PendingJob> queue = queues.get(tenant);
                int quota = snapshot.tenants().get(tenant).quotaGpus();
                while (!queue.isEmpty() && queue.peek().gpus() > quota) {
                    PendingJob never = queue.poll();
                    waits.add(new DispatchPlan.Verdict(never.jobId(), WaitReason.NEVER_FITS,
                            "never fits: job needs " + never.gpus() + " GPUs, tenant " + tenant + "'s quota is "
                                    + quota));
                }
                PendingJob head = queue.peek();
                if (head == null) {
                    continue;
                }
                long used = reserved.get(tenant);
                if (used + head.gpus() <= quota) {
                    queue.poll();
                    reserved.put(tenant, used + head.gpus());
                    dispatch.add(head.jobId());
                    progress = true;
                } else {
                    waits.add(new DispatchPlan.Verdict(head.jobId(), WaitReason.QUOTA, "waiting for quota: tenant "
                            + tenant + " has " + used + " of " + quota + " GPUs reserved, job needs " + head.gpus()));
                    queue.poll();
                    for (PendingJob behind : queue) {
                        if (behind.unparking() && behind.gpus() <= quota) {
                            waits.add(new DispatchPlan.Verdict(behind.jobId(), WaitReason.QUOTA,
                                    "waiting for quota: tenant " + tenant + " has " + used + " of " + quota
                                            + " GPUs reserved, job " + head.jobId() + " ahead of it needs "
                                            + head.gpus()));
                        } else if (behind.gpus() > quota) {
                            waits.add(new DispatchPlan.Verdict(behind.jobId(), WaitReason.NEVER_FITS,
                                    "never fits: job needs " + behind.gpus() + " GPUs, tenant " + tenant
                                            + "'s quota is " + quota));
                        }
                    }
                    queue.clear();
                }
            }
        }
        return new DispatchPlan(dispatch, waits);
    }

    /** Tenants by name, starting with the first one after {@code lastServed}. */
    private static List<String> rotation(List<String> sorted, String lastServed) {
        if (lastServed == null) {
            return sorted;
        }
        int start = 0;
        while (start < sorted.size() && sorted.get(start).compareTo(lastServed) <= 0) {
            start++;
        }
        List<String> rotated = new ArrayList<>(sorted.subList(start, sorted.size()));
        rotated.addAll(sorted.subList(0, start));
        return rotated;
    }
}
