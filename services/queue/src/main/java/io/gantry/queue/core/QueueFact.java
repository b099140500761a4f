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

    /** The job entered its tenant's queue: first time (attempt 1) or after a requeue (original submit time). */
    record JobQueued(String jobId, String tenant, int attempt, JobSpec spec, Instant submittedAt, int gpus)
            implements QueueFact {
        public JobQueued {
            Objects.requireNonNull(spec, "spec");
            Objects.requireNonNull(submittedAt, "submittedAt");
        }
    }

    /** The job stays queued for this reason; written when the reason or message changes. CAPACITY parks it. */
    record JobWaiting(String jobId, String tenant, int attempt, WaitReason reason, String message)
            implements QueueFact {
        public JobWaiting {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }

    /** Offered to placement; {@code gpus} are reserved against the tenant's quota until released. */
    record JobDispatched(String jobId, String tenant, int attempt, JobSpec spec, int gpus) implements QueueFact {
        public JobDispatched {
            Objects.requireNonNull(spec, "spec");
        }
    }

    /** The reservation of {@code attempt} ended: {@code reason} is {@code deferred} or the allocation's ReleaseReason. */
    record QuotaReleased(String jobId, String tenant, int attempt, int gpus, String reason) implements QueueFact {
        public QuotaReleased {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** Terminal. */
    record JobSucceeded(String jobId, String tenant, int attempt) implements QueueFact {
    }

    /** Terminal. */
    record JobFailed(String jobId, String tenant, int attempt, String message) implements QueueFact {
        public JobFailed {
            Objects.requireNonNull(message, "message");
        }
    }

    /** Terminal. {@code attempt} is the last attempt that was dispatched, 0 if none was. */
    record JobCancelled(String jobId, String tenant, int attempt, String requestedBy) implements QueueFact {
        public JobCancelled {
            Objects.requireNonNull(requestedBy, "requestedBy");
        }
    }
}
