package io.gantry.queue.core;

/**
 * What a job asks of its queue's quota: GPUs (charged to one flavour), CPU millicores and memory MiB summed over its
 * task groups. The one place a job's quota amounts are computed, for admission and for the charge alike.
 */
record ResourceDemand(long gpus, long cpuMillis, long memoryMiB) {

    /**
     * The demand of {@code spec}; {@code gangGpus} is the GPU amount the queue's fact carries for the attempt
     * ({@link JobSpec#gangGpus()} when it was queued).
     */
    static ResourceDemand of(JobSpec spec, int gangGpus) {
        long cpu = 0;
        long mem = 0;
        for (TaskGroup t : spec.tasks()) {
            cpu += (long) t.replicas() * t.cpuMillis();
            mem += t.replicas() * t.memoryMiB();
        }
        return new ResourceDemand(gangGpus, cpu, mem);
    }

    /** The first task group that holds GPUs (its model decides the flavour), or null. */
    static TaskGroup firstGpuTask(JobSpec spec) {
        for (TaskGroup t : spec.tasks()) {
            if (t.quotaGpus() > 0) {
                return t;
            }
        }
        return null;
    }
}
