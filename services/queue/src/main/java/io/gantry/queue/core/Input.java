package io.gantry.queue.core;

import java.time.Instant;
import java.util.Objects;

/**
 * What the queue hears from the other services, already mapped from the wire. Constructing an input validates it,
 * so a malformed record never reaches {@link QueueCore#apply}.
 */
public sealed interface Input {

    /** The tenant whose job this input concerns; null for what concerns no one tenant (capacity, time). */
    default String tenant() {
        return null;
    }

    /** admission: a tenant submitted a job; {@code submittedAt} is the event time. */
    record Submitted(String jobId, String tenant, JobSpec spec, Instant submittedAt) implements Input {
        public Submitted {
            requireId(jobId, "jobId");
            requireId(tenant, "tenant");
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(submittedAt, "submittedAt");
        }
    }

    /** admission: someone asked to cancel the job. */
    record CancelRequested(String jobId, String tenant, String requestedBy) implements Input {
        public CancelRequested {
            requireId(jobId, "jobId");
            requireId(tenant, "tenant");
            Objects.requireNonNull(requestedBy, "requestedBy");
        }
    }

    /**
     * admission: the job's owner or an admin asked to suspend ({@code suspend}) or resume it. The newest request per
     * job stands; the queue restores them from admission's topic at start (see {@link QueueCore#suspension}).
     */
    record SuspensionRequested(String jobId, String tenant, boolean suspend, String requestedBy) implements Input {
        public SuspensionRequested {
            requireId(jobId, "jobId");
            requireId(tenant, "tenant");
            Objects.requireNonNull(requestedBy, "requestedBy");
        }
    }

    /** placement: the gang of this attempt holds devices now. */
    record Granted(String jobId, String tenant, int attempt) implements Input {
        public Granted {
            requireJob(jobId, tenant, attempt);
        }
    }

    /** placement: it could not place this attempt now and holds nothing for it. */
    record Deferred(String jobId, String tenant, int attempt, DeferralCause reason, String message) implements Input {
        public Deferred {
            requireJob(jobId, tenant, attempt);
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }

    /** backend via placement: every task of the attempt exited 0. */
    record RunSucceeded(String jobId, String tenant, int attempt) implements Input {
        public RunSucceeded {
            requireJob(jobId, tenant, attempt);
        }
    }

    /** backend via placement: a task of the attempt failed, or placement stopped it at its time limit. */
    record RunFailed(String jobId, String tenant, int attempt, String message, FailureReason reason) implements Input {
        public RunFailed {
            requireJob(jobId, tenant, attempt);
            Objects.requireNonNull(message, "message");
            Objects.requireNonNull(reason, "reason");
        }

        public RunFailed(String jobId, String tenant, int attempt, String message) {
            this(jobId, tenant, attempt, message, FailureReason.RUN_FAILED);
        }
    }

    /**
     * placement: the devices of the attempt are free again, and why;
     * {@code free} is the cluster's free capacity right after, or null when placement did not say.
     */
    record Released(String jobId, String tenant, int attempt, ReleaseCause reason, FreeCapacity free,
                    java.util.List<DeferredCheck> checks) implements Input {
        public Released {
            requireJob(jobId, tenant, attempt);
            Objects.requireNonNull(reason, "reason");
            checks = checks == null ? java.util.List.of() : java.util.List.copyOf(checks);
        }

        public Released(String jobId, String tenant, int attempt, ReleaseCause reason, FreeCapacity free) {
            this(jobId, tenant, attempt, reason, free, java.util.List.of());
        }

        public Released(String jobId, String tenant, int attempt, ReleaseCause reason) {
            this(jobId, tenant, attempt, reason, null, java.util.List.of());
        }
    }

    /**
     * placement's check of a gang it deferred earlier, made right after a release: whether it would fit now, on its
     * own, and {@code onlyPlace}, when placement can tell, the one node it fits on (null: unknown, or several).
     */
    record DeferredCheck(String jobId, int attempt, boolean fits, Place onlyPlace) {
        public DeferredCheck(String jobId, int attempt, boolean fits) {
            this(jobId, attempt, fits, null);
        }
    }

    /**
     * A node and what it had free right after the release: whole GPUs, the free thousandths of each partly shared
     * GPU, CPU millicores and memory. Gangs that fit nowhere else compete for it, so the queue dispatches only as
     * many of them as it holds.
     */
    record Place(String node, int freeGpus, java.util.List<Integer> partFreeMilli, long freeCpuMillis,
                 long freeMemoryMiB) {
        public Place {
            Objects.requireNonNull(node, "node");
            partFreeMilli = java.util.List.copyOf(partFreeMilli);
        }
    }

    /** recovery: the interrupted attempt runs again, from {@code resumeFrom} (a checkpoint path) or from the start. */
    record Requeued(String jobId, String tenant, int interruptedAttempt, String message, String resumeFrom)
            implements Input {
        public Requeued {
            requireJob(jobId, tenant, interruptedAttempt);
            Objects.requireNonNull(message, "message");
        }

        public Requeued(String jobId, String tenant, int interruptedAttempt, String message) {
            this(jobId, tenant, interruptedAttempt, message, null);
        }
    }

    /** admission: a run of the job committed a checkpoint ({@code step} at {@code path}). */
    record CheckpointCommitted(String jobId, String tenant, int attempt, long step, String path, Instant committedAt)
            implements Input {
        public CheckpointCommitted {
            requireJob(jobId, tenant, attempt);
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(committedAt, "committedAt");
            if (step < 0) {
                throw new IllegalArgumentException("step must be >= 0");
            }
        }
    }

    /** recovery: the interrupted attempt will not run again. */
    record RecoveryAbandoned(String jobId, String tenant, int interruptedAttempt, String message) implements Input {
        public RecoveryAbandoned {
            requireJob(jobId, tenant, interruptedAttempt);
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * billing: the state of a money budget of {@code tenant} (of its queue {@code queue}, or of the whole tenant when
     * null) for the month {@code [periodFrom, periodTo)}; {@code holds} when it is exhausted with action HOLD, which
     * keeps the scope's jobs that are not yet dispatched out of dispatch. {@code limit} and {@code spent} are decimal
     * amounts in {@code currency}, for the sentence. Not a queue fact: the queue rebuilds it from billing's topic.
     */
    record BudgetChanged(String tenant, String queue, java.time.YearMonth month, Instant periodFrom, Instant periodTo,
                         boolean holds, java.math.BigDecimal limit, java.math.BigDecimal spent, String currency)
            implements Input {
        public BudgetChanged {
            requireId(tenant, "tenant");
            if (queue != null && queue.isBlank()) {
                throw new IllegalArgumentException("queue must not be blank");
            }
            Objects.requireNonNull(month, "month");
            Objects.requireNonNull(periodFrom, "periodFrom");
            Objects.requireNonNull(periodTo, "periodTo");
            if (!periodFrom.isBefore(periodTo)) {
                throw new IllegalArgumentException("periodTo must be after periodFrom");
            }
            Objects.requireNonNull(limit, "limit");
            Objects.requireNonNull(spent, "spent");
            requireId(currency, "currency");
        }
    }

    /**
     * placement: how busy the GPUs of this attempt were over one window ending at {@code windowTo} (placement's
     * clock); {@code idleSince} is when they last became idle, or null when the latest sample was busy. Amounts in
     * thousandths of a GPU. Idle reclamation decides on it; nothing is kept of it but the queue's own facts.
     */
    record UtilisationSampled(String jobId, String tenant, int attempt, Instant windowTo, Instant idleSince,
                              long heldGpuMilli, long usedGpuMilli) implements Input {
        public UtilisationSampled {
            requireJob(jobId, tenant, attempt);
            Objects.requireNonNull(windowTo, "windowTo");
            if (heldGpuMilli < 0 || usedGpuMilli < 0) {
                throw new IllegalArgumentException("heldGpuMilli and usedGpuMilli must be >= 0");
            }
        }
    }

    /** A node registered or recovered: what placement deferred may fit now. */
    record CapacityChanged(String cause) implements Input {
        public CapacityChanged {
            Objects.requireNonNull(cause, "cause");
        }
    }

    /**
     * Time passed: time-driven decisions (starvation reservations, preemption once a run is past its minimum run
     * time, a stuck preemption) are taken; with {@code recheckParked} every parked job is offered once more, a
     * safety net for a wake-up lost to reordering across partitions.
     */
    record Tick(boolean recheckParked) implements Input {
    }

    /** State was just rebuilt (and configuration may differ from before the restart): run a dispatch cycle. */
    record Restored() implements Input {
    }

    private static void requireJob(String jobId, String tenant, int attempt) {
        requireId(jobId, "jobId");
        requireId(tenant, "tenant");
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        }
    }

    private static void requireId(String value, String field) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank");
        }
    }
}
