package io.gantry.queue.core;

/**
 * A run's charge while its queue is not in the configuration (removed while it ran): what it holds, by names, so it
 * is charged again when a later configuration brings the queue back ({@link QuotaLedger}).
 *
 * @param flavour the GPU flavour's name, or null
 */
record OrphanedCharge(String jobId, int attempt, String tenant, String queue, String flavour, long gpuMilli, long cpu,
                      long mem, long dispatchedMillis, Long timeLimitSeconds, int classValue, int priority,
                      long attainedBefore) {
}
