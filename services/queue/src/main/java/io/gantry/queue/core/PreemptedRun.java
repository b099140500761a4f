package io.gantry.queue.core;

/**
 * A run the queue asked placement to stop (a JobPreempted fact), until its quota is released or
 * {@code expiresMillis}.
 *
 * @param preemptor the job it is stopped for, or null
 */
record PreemptedRun(String jobId, int attempt, String preemptor, PreemptionReason reason, String message,
                    long expiresMillis) {
}
