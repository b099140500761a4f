package io.gantry.queue.core;

/**
 * A schedulable pending job as the {@link PendingIndex} files it: its queue, what it asks for (from its
 * {@link ResourceDemand}) and its order key.
 *
 * @param view       the job as the {@link DispatchPolicy} orders it
 * @param candidates the GPU flavours (resource indexes) it may be admitted on, in order; empty without GPUs
 * @param job        the job as it was filed
 */
record PendingJobEntry(String jobId, ClusterQueue queue, PendingJob view, int[] candidates, long gpuMilli, long cpu,
                       long mem, Long timeLimitSeconds, RequestShape shape, QueuedJob job) {

    /** The flavour a reservation or a tentative charge takes for it: its first candidate, or none. */
    int firstFlavour() {
        return candidates.length > 0 ? candidates[0] : QuotaTree.NO_GPU;
    }
}
