package io.gantry.queue.core;

import java.time.Instant;
import java.util.Objects;

/**
 * What the queue decided, one record per payload of {@code QueueJobEvent}. These facts are the queue's whole
 * durable state: {@link QueueCore#replay} of the facts in topic order rebuilds it exactly.
 */
public sealed interface QueueFact {
    String jobId();

    String tenant();

    int attempt();

    /**
     * The job entered its tenant's queue: first time (attempt 1) or after a requeue (original submit time).
     * {@code gpuMilli}: what the gang is charged to quota, in thousandths of a GPU ({@link JobSpec#gangMilli()}).
     * {@code requeuedBecause} says why it is queued again (null on the first attempt or when not known);
     * {@code resumeFrom} the checkpoint the attempt resumes from (null: from the start); {@code failureRetries} the
     * retries of the job's own failures used so far (carried on every requeue); {@code notBefore} the instant before
     * which the attempt is not offered to placement (a retry's backoff), or null.
     */
    record JobQueued(String jobId, String tenant, int attempt, JobSpec spec, Instant submittedAt, long gpuMilli,
                     String requeuedBecause, String resumeFrom, int failureRetries, Instant notBefore)
            implements QueueFact {
        public JobQueued {
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(submittedAt, "submittedAt");
            if (failureRetries < 0) {
                throw new IllegalArgumentException("failureRetries must be >= 0, was " + failureRetries);
            }
        }

        public JobQueued(String jobId, String tenant, int attempt, JobSpec spec, Instant submittedAt, long gpuMilli,
                         String requeuedBecause, String resumeFrom) {
            this(jobId, tenant, attempt, spec, submittedAt, gpuMilli, requeuedBecause, resumeFrom, 0, null);
        }

        public JobQueued(String jobId, String tenant, int attempt, JobSpec spec, Instant submittedAt, long gpuMilli,
                         String requeuedBecause) {
            this(jobId, tenant, attempt, spec, submittedAt, gpuMilli, requeuedBecause, null);
        }

        public JobQueued(String jobId, String tenant, int attempt, JobSpec spec, Instant submittedAt, long gpuMilli) {
            this(jobId, tenant, attempt, spec, submittedAt, gpuMilli, null);
        }
    }

    /**
     * The job stays queued for this reason; written when the reason or message changes. CAPACITY parks it.
     *
     * @param quotaWait with QUOTA: what holds the quota (null in facts written before it was recorded)
     * @param deferral  with CAPACITY: placement's reason (null in facts written before it was recorded)
     */
    record JobWaiting(String jobId, String tenant, int attempt, WaitReason reason, String message,
                      QuotaWait quotaWait, DeferralCause deferral) implements QueueFact {
        public JobWaiting {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
            if (quotaWait != null && reason != WaitReason.QUOTA || deferral != null && reason != WaitReason.CAPACITY) {
                throw new IllegalArgumentException("a " + reason + " wait has no " + (quotaWait != null
                        ? "quota wait " + quotaWait : "deferral " + deferral));
            }
        }

        public JobWaiting(String jobId, String tenant, int attempt, WaitReason reason, String message) {
            this(jobId, tenant, attempt, reason, message, null, null);
        }

        public JobWaiting(String jobId, String tenant, int attempt, QueuedJob.Wait wait) {
            this(jobId, tenant, attempt, wait.reason(), wait.message(), wait.quotaWait(), wait.deferral());
        }

        /** The wait this fact records. */
        public QueuedJob.Wait waitOf() {
            return new QueuedJob.Wait(reason, message, quotaWait, deferral);
        }
    }

    /**
     * Offered to placement; {@code gpuMilli} (thousandths of a GPU) are reserved against the tenant's quota until
     * released, on the GPU flavour {@code flavour} (null: none, or the one the spec's first GPU task names, as in
     * facts written before the flavour was recorded). {@code resumeFrom}: the checkpoint the run resumes from, or null.
     * {@code pool}: the placement pool it goes to (the one it asked for, else its flavour's), or null: placement's
     * {@code default}.
     */
    record JobDispatched(String jobId, String tenant, int attempt, JobSpec spec, long gpuMilli, String resumeFrom,
                         String flavour, String pool) implements QueueFact {
        public JobDispatched {
            Objects.requireNonNull(spec, "spec");
        }

        public JobDispatched(String jobId, String tenant, int attempt, JobSpec spec, long gpuMilli, String resumeFrom,
                             String flavour) {
            this(jobId, tenant, attempt, spec, gpuMilli, resumeFrom, flavour, null);
        }

        public JobDispatched(String jobId, String tenant, int attempt, JobSpec spec, long gpuMilli) {
            this(jobId, tenant, attempt, spec, gpuMilli, null, null);
        }
    }

    /**
     * The reservation of {@code attempt} ({@code gpuMilli} thousandths of a GPU) ended: {@code reason} is
     * {@code deferred} or the allocation's ReleaseReason.
     */
    record QuotaReleased(String jobId, String tenant, int attempt, long gpuMilli, String reason) implements QueueFact {
        public QuotaReleased {
            Objects.requireNonNull(reason, "reason");
        }

        /** Released because placement released the allocation for {@code cause}. */
        public QuotaReleased(String jobId, String tenant, int attempt, long gpuMilli, ReleaseCause cause) {
            this(jobId, tenant, attempt, gpuMilli, cause.name());
        }

        /** Released because placement deferred the attempt (reason {@link QueueCore#DEFERRED}). */
        public static QuotaReleased deferred(String jobId, String tenant, int attempt, long gpuMilli) {
            return new QuotaReleased(jobId, tenant, attempt, gpuMilli, QueueCore.DEFERRED);
        }

        /** The release cause the reason names, or null ({@link QueueCore#DEFERRED}, or a reason this core lacks). */
        public ReleaseCause cause() {
            for (ReleaseCause c : ReleaseCause.values()) {
                if (c.name().equals(reason)) {
                    return c;
                }
            }
            return null;
        }
    }

    /** Terminal. */
    record JobSucceeded(String jobId, String tenant, int attempt) implements QueueFact {
    }

    /** Terminal. */
    record JobFailed(String jobId, String tenant, int attempt, String message, FailureReason reason)
            implements QueueFact {
        public JobFailed {
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(reason, "reason");
        }

        public JobFailed(String jobId, String tenant, int attempt, String message) {
            this(jobId, tenant, attempt, message, FailureReason.RUN_FAILED);
        }
    }

    /**
     * The queue asks placement to stop this attempt (published on {@code queue.preemption-events}); the job is
     * requeued when placement releases the allocation with reason PREEMPTED.
     */
    record JobPreempted(String jobId, String tenant, int attempt, PreemptionReason reason, String preemptorJobId,
                        int graceSeconds, String message) implements QueueFact {
        public JobPreempted {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * The attempt's GPUs have been idle since {@code idleSince} for half its queue's {@code idleTimeout}: unless a
     * window says busy first, the run is stopped (JobPreempted reason IDLE) once it has been idle the whole timeout,
     * at {@code stopAt}. Published on {@code queue.idle-events}; once per idle stretch.
     */
    record JobIdleWarned(String jobId, String tenant, int attempt, Instant idleSince,
                         java.time.Duration idleTimeout, Instant stopAt, String message) implements QueueFact {
        public JobIdleWarned {
            Objects.requireNonNull(idleSince, "idleSince");
            Objects.requireNonNull(idleTimeout, "idleTimeout");
            Objects.requireNonNull(stopAt, "stopAt");
            Objects.requireNonNull(message, "message");
        }
    }

    /** The warning of {@code attempt} no longer stands: its GPUs were busy again, or the timeout no longer applies. */
    record JobIdleCleared(String jobId, String tenant, int attempt, String message) implements QueueFact {
        public JobIdleCleared {
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * Terminal. {@code attempt} is the last attempt that was dispatched, 0 if none was. {@code message}: why, when the
     * queue cancelled the job itself (a dependency that can no longer be met); null when someone asked.
     */
    record JobCancelled(String jobId, String tenant, int attempt, String requestedBy, String message)
            implements QueueFact {
        public JobCancelled {
            Objects.requireNonNull(requestedBy, "requestedBy");
        }

        public JobCancelled(String jobId, String tenant, int attempt, String requestedBy) {
            this(jobId, tenant, attempt, requestedBy, null);
        }
    }

    /**
     * The queue asks placement to reserve (drain) capacity for this parked gang, which has waited longer than the
     * starvation wait (published on {@code queue.reservation-events}). At most one at a time. {@code maxDrainSeconds}:
     * how long the drain may wait for runs to end by themselves before placement stops them; null: only wait.
     */
    record CapacityReservationRequested(String jobId, String tenant, int attempt, JobSpec spec, String message,
                                        Long maxDrainSeconds) implements QueueFact {
        public CapacityReservationRequested {
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(message, "message");
        }

        public CapacityReservationRequested(String jobId, String tenant, int attempt, JobSpec spec, String message) {
            this(jobId, tenant, attempt, spec, message, null);
        }
    }

    /** The reservation for this attempt is no longer needed: {@code reason} is granted, cancelled, finished, ... */
    record CapacityReservationCancelled(String jobId, String tenant, int attempt, String reason) implements QueueFact {
        public CapacityReservationCancelled {
            Objects.requireNonNull(reason, "reason");
        }

        /** Cancelled by the queue for {@code end} (its {@link CapacityReservationEnd#reason()}). */
        public CapacityReservationCancelled(String jobId, String tenant, int attempt, CapacityReservationEnd end) {
            this(jobId, tenant, attempt, end.reason());
        }
    }
}
