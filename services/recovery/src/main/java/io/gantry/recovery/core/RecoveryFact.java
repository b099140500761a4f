package io.gantry.recovery.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Everything that changes recovery's state. NodeSeen, NodeKnown, GraceStarted and CheckpointRecorded are
 * internal bookkeeping (never published); the other four are the facts recovery publishes on its topics, and the
 * ones it replays from them on restart.
 */
public sealed interface RecoveryFact {

    /** A registration or heartbeat of {@code nodeId} was received at {@code receivedAt} (recovery's clock). */
    record NodeSeen(String nodeId, Instant receivedAt) implements RecoveryFact {
        public NodeSeen {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(receivedAt, "receivedAt");
        }
    }

    /** The node exists (learned while restoring); no time is attached because the sender's clock is not ours. */
    record NodeKnown(String nodeId) implements RecoveryFact {
        public NodeKnown {
            Objects.requireNonNull(nodeId, "nodeId");
        }
    }

    /**
     * Every known healthy node is treated as seen at {@code at}. {@code watching} false: recovery (re)started and
     * has not yet read the heartbeats that arrived while it was down, so silence means nothing yet; true: it has
     * caught up, and silence from now on counts.
     */
    record GraceStarted(Instant at, boolean watching) implements RecoveryFact {
        public GraceStarted {
            Objects.requireNonNull(at, "at");
        }
    }

    /** Published: the node was silent for longer than the timeout. */
    record NodeFailed(String nodeId, Instant failedAt, Instant lastHeartbeatAt, String message)
            implements RecoveryFact {
        public NodeFailed {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(failedAt, "failedAt");
            Objects.requireNonNull(message, "message");
        }
    }

    /** Published: a failed node showed a sign of life again. */
    record NodeRecovered(String nodeId, Instant recoveredAt, String message) implements RecoveryFact {
        public NodeRecovered {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(recoveredAt, "recoveredAt");
            Objects.requireNonNull(message, "message");
        }
    }

    /** Published: the interrupted attempt of the job runs again, from {@code resumeFrom} (null: from the start). */
    record JobRequeued(String jobId, String tenant, int interruptedAttempt, String message, String resumeFrom)
            implements RecoveryFact {
        public JobRequeued {
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(message, "message");
        }

        public JobRequeued(String jobId, String tenant, int interruptedAttempt, String message) {
            this(jobId, tenant, interruptedAttempt, message, null);
        }
    }

    /** A run of the job committed a checkpoint (learned from admission's checkpoint topic; not published). */
    record CheckpointRecorded(String jobId, int attempt, long step, String path) implements RecoveryFact {
        public CheckpointRecorded {
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(path, "path");
            if (attempt < 1 || step < 0) {
                throw new IllegalArgumentException("attempt must be >= 1 and step >= 0");
            }
        }
    }

    /** Published: the job used up its restarts; the queue fails it. */
    record JobRecoveryAbandoned(String jobId, String tenant, int interruptedAttempt, String message)
            implements RecoveryFact {
        public JobRecoveryAbandoned {
            Objects.requireNonNull(jobId, "jobId");
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(message, "message");
        }
    }
}
