package io.gantry.queue.core;

/**
 * What a job asks of its queue's quota: GPUs in thousandths (charged to one flavour), CPU millicores and memory MiB
 * summed over its task groups. The one place a job's quota amounts are computed, for admission and for the charge
 * alike.
 */
record ResourceDemand(long gpuMilli, long cpuMillis, long memoryMiB) {

    /**
     * The demand of {@code spec}; {@code gangMilli} is the GPU amount (thousandths) the queue's fact carries for the
     * attempt ({@link JobSpec#gangMilli()} when it was queued).
     */
    static ResourceDemand of(JobSpec spec, long gangMilli) {
        long cpu = 0;
        long mem = 0;
        for (TaskGroup t : spec.tasks()) {
            cpu += (long) t.replicas() * t.cpuMillis();
            mem += t.replicas() * t.memoryMiB();
        }
        return new ResourceDemand(gangMilli, cpu, mem);
    }

    /** The first task group that holds GPUs (its model decides the flavour), or null. */
    static TaskGroup firstGpuTask(JobSpec spec) {
        for (TaskGroup t : spec.tasks()) {
            if (t.quotaMilli() > 0) {
                return t;
            }
        }
        return null;
    }
}
