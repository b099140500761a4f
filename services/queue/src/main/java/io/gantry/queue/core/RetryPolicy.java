package io.gantry.queue.core;

import java.time.Duration;

/**
 * A job's own retry policy for runs that failed by its own fault (a non-zero exit): up to {@code maxRetries} more
 * runs, the first after {@code backoffSeconds}, each further one after twice the wait before it, at most an hour.
 * Infrastructure failures are recovery's (its own budget); a run past its time limit is not retried.
 */
public record RetryPolicy(int maxRetries, long backoffSeconds) {
    public static final int MAX_RETRIES = 10;
    public static final Duration MAX_BACKOFF = Duration.ofHours(1);

    public RetryPolicy {
        if (maxRetries < 0 || maxRetries > MAX_RETRIES) {
            throw new IllegalArgumentException("spec.retry.maxRetries must be 0-" + MAX_RETRIES + ", was " + maxRetries);
        }
        if (backoffSeconds < 0 || backoffSeconds > MAX_BACKOFF.toSeconds()) {
            throw new IllegalArgumentException("spec.retry.backoffSeconds must be 0-" + MAX_BACKOFF.toSeconds()
                    + ", was " + backoffSeconds);
        }
    }

    /** The wait before retry number {@code retry} (1 = the first): backoff x 2^(retry - 1), at most an hour. */
    public Duration backoff(int retry) {
        if (retry < 1) {
            throw new IllegalArgumentException("retry counts from 1, was " + retry);
        }
        long seconds = backoffSeconds;
        for (int i = 1; i < retry && seconds < MAX_BACKOFF.toSeconds(); i++) {
            seconds *= 2;
        }
        return Duration.ofSeconds(Math.min(seconds, MAX_BACKOFF.toSeconds()));
    }
}
