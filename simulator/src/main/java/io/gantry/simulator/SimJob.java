package io.gantry.simulator;

/**
 * One job of a workload: who submits it, how many GPUs its gang needs, when it arrives and how long it runs once
 * placed (virtual milliseconds from the start of the replay).
 */
public record SimJob(String id, String tenant, int gpus, long submitMillis, long durationMillis) {
    public SimJob {
        if (gpus < 1) {
            throw new IllegalArgumentException("job " + id + ": gpus must be >= 1, was " + gpus);
        }
        if (submitMillis < 0 || durationMillis < 1) {
            throw new IllegalArgumentException("job " + id + ": submit must be >= 0 and duration >= 1 ms");
        }
    }
}
