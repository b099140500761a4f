package io.gantry.billing.core;

/**
 * What a job's spec says that prices depend on: its queue and priority class (for multipliers) and the GPU tier it
 * asked for (for tier prices). A job whose submission billing has not seen is priced without any of them.
 */
public record JobTerms(String jobId, String queue, String priorityClass, String gpuTier) {
    public static JobTerms unknown(String jobId) {
        return new JobTerms(jobId, null, null, null);
    }
}
