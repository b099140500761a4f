package io.gantry.queue.core;

import java.util.Comparator;

/**
 * What one dispatched attempt holds of its queue's quota: charged at JobDispatched, removed at QuotaReleased
 * ({@link QuotaLedger}). Also used tentatively (never recorded) to ask "what if this job were admitted?".
 *
 * @param flavour the GPU resource it is charged to, or {@link QuotaTree#NO_GPU}
 * @param gpuMilli thousandths of a GPU charged to {@code flavour} (see {@link ResourceDemand})
 * @param attainedBefore the service the job's earlier runs received ({@link QueuedJob#attained})
 */
record QuotaCharge(String jobId, int attempt, ClusterQueue queue, int flavour, long gpuMilli, long cpu, long mem,
                   long dispatchedMillis, Long timeLimitSeconds, int classValue, int priority, long attainedBefore) {

    static final Comparator<QuotaCharge> BY_START = Comparator.comparingLong(QuotaCharge::dispatchedMillis)
            .thenComparing(QuotaCharge::jobId).thenComparingInt(QuotaCharge::attempt);

    /** When its time limit ends the run; {@code Long.MAX_VALUE} without one. */
    long endMillis() {
        return timeLimitSeconds == null ? Long.MAX_VALUE : dispatchedMillis + timeLimitSeconds * 1000;
    }

    /** What it holds of {@code resource} (an index into {@link QuotaTree#resources}). */
    long amount(int resource, int cpuResource, int memResource) {
        return resource == cpuResource ? cpu : resource == memResource ? mem : flavour == resource ? gpuMilli : 0;
    }
}
