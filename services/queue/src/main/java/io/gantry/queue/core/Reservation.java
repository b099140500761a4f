package io.gantry.queue.core;

/**
 * A quota reservation in one cohort tree, derived afresh every cycle by the {@link StarvationGuard}: for a starving
 * job, or for a job that preempted others until their quota is back ({@code preemption} is then the sentence
 * explaining it).
 *
 * @param flavour        the GPU flavour reserved, or {@link QuotaTree#NO_GPU}
 * @param estimateMillis when the reserved job is expected to fit, or null when that cannot be known
 */
record Reservation(String tree, PendingJobEntry job, int flavour, Long estimateMillis, String preemption) {
}
