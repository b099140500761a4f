package io.gantry.queue.core;

import java.time.Instant;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything the queue knows about one job, immutable; {@link QueueCore#replay} swaps in a new value.
 *
 * @param attempt              the current attempt (run number)
 * @param dispatchedThisAttempt whether the current attempt was ever dispatched (deferred dispatches count)
 * @param lastWait             the last JobWaiting of the current attempt, or null; CAPACITY while QUEUED = parked
 * @param gpuMilli             what the gang is charged to quota, in thousandths of a GPU
 * @param reservations         thousandths of a GPU reserved per attempt; an old attempt can still hold GPUs after a
 *                             requeue until placement releases its allocation
 * @param attained             the service its ended runs received: thousandths of a GPU held x milliseconds
 *                             (millionths of a GPU-second), from dispatch to release; deferred dispatches count nothing
 * @param queuedAt             when the current attempt was queued (the job's last JobQueued)
 */
public record QueuedJob(String jobId, String tenant, JobSpec spec, long gpuMilli, Instant submittedAt, int attempt,
                       JobState status, boolean dispatchedThisAttempt, Wait lastWait,
                       SortedMap<Integer, Long> reservations, long attained, Instant queuedAt) {

    /** A reason and message last published for the job. */
    /**
     * Why the job waits: the reason, the sentence users read and, typed, what holds its quota (with QUOTA) or
     * placement's reason (with CAPACITY); null when not known.
     */
    public record Wait(WaitReason reason, String message, QuotaWait quotaWait, DeferralCause deferral) {
        public Wait(WaitReason reason, String message) {
            this(reason, message, null, null);
        }

        static Wait quota(String message, QuotaWait why) {
            return new Wait(WaitReason.QUOTA, message, why, null);
        }
    }

    public QueuedJob {
        reservations = Collections.unmodifiableSortedMap(new TreeMap<>(reservations));
    }

    public boolean parked() {
        return status == JobState.QUEUED && lastWait != null && lastWait.reason() == WaitReason.CAPACITY;
    }

    /** Thousandths of a GPU reserved by this job's attempts. */
    public long reservedMilli() {
        long sum = 0;
        for (long g : reservations.values()) {
            sum += g;
        }
        return sum;
    }

    /** Whether the current attempt reached placement and is not over (the states where run outcomes count). */
    boolean inFlight() {
        return status == JobState.DISPATCHED || status == JobState.INTERRUPTED;
    }

    QueuedJob with(JobState newStatus) {
        return new QueuedJob(jobId, tenant, spec, gpuMilli, submittedAt, attempt, newStatus, dispatchedThisAttempt,
                lastWait, reservations, attained, queuedAt);
    }

    QueuedJob waiting(Wait wait, JobState newStatus) {
        return new QueuedJob(jobId, tenant, spec, gpuMilli, submittedAt, attempt, newStatus, dispatchedThisAttempt, wait,
                reservations, attained, queuedAt);
    }

    QueuedJob dispatched(int attemptNo, long reservedMilli) {
        TreeMap<Integer, Long> r = new TreeMap<>(reservations);
        r.put(attemptNo, reservedMilli);
        return new QueuedJob(jobId, tenant, spec, gpuMilli, submittedAt, attempt, JobState.DISPATCHED, true, null, r,
                attained, queuedAt);
    }

    /** The attempt's reservation ended; its run received {@code service} (see {@link #attained}). */
    QueuedJob released(int attemptNo, long service) {
        TreeMap<Integer, Long> r = new TreeMap<>(reservations);
        r.remove(attemptNo);
        return new QueuedJob(jobId, tenant, spec, gpuMilli, submittedAt, attempt, status, dispatchedThisAttempt, lastWait,
                r, attained + service, queuedAt);
    }

    QueuedJob requeued(int newAttempt, JobSpec newSpec, Instant originalSubmit, long newMilli, Instant at) {
        return new QueuedJob(jobId, tenant, newSpec, newMilli, originalSubmit, newAttempt, JobState.QUEUED, false, null,
                reservations, attained, at);
    }
}
