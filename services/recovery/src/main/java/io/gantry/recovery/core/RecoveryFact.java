package io.gantry.recovery.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Everything that changes recovery's state. NodeSeen, NodeKnown, PoolResumed, GraceStarted, CheckpointRecorded,
 * RunHeld, RunReleased and NodeControlSeen are internal bookkeeping (never published); the others are the facts
 * recovery publishes on its topics, and the ones it replays from them on restart.
 */
public sealed interface RecoveryFact {

    /**
     * Published: recovery classified a device fault and decided what placement does.
     *
     * @param faultAt        the report's time on placement's clock
     * @param gpuIndex       null for a fault of the whole node
     * @param affectedJobIds the jobs whose live runs held the device when recovery decided, by job id
     */
    record DeviceFaultDecided(String faultEventId, String nodeId, java.time.Instant faultAt, Integer gpuIndex,
                              FaultKind kind, Integer xid, FaultCategory category, FaultAction action,
                              java.util.List<String> affectedJobIds, String message) implements RecoveryFact {
        public DeviceFaultDecided {
            Objects.requireNonNull(faultEventId, "faultEventId");
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(faultAt, "faultAt");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(category, "category");
            Objects.requireNonNull(action, "action");
            Objects.requireNonNull(message, "message");
            affectedJobIds = java.util.List.copyOf(affectedJobIds == null ? java.util.List.of() : affectedJobIds);
        }
    }

    /**
     * Placement granted {@code attempt} of the job: per node, the GPU indices it holds (whole or shared; an empty set
     * for a task without GPUs). Learned from placement's allocation events; the table the device-fault join reads.
     */
    record RunHeld(String jobId, int attempt, java.util.Map<String, java.util.Set<Integer>> gpusByNode)
            implements RecoveryFact {
        public RunHeld {
            Objects.requireNonNull(jobId, "jobId");
            gpusByNode = java.util.Map.copyOf(Objects.requireNonNull(gpusByNode, "gpusByNode"));
        }
    }

    /** Placement released {@code attempt} of the job. */
    record RunReleased(String jobId, int attempt) implements RecoveryFact {
        public RunReleased {
            Objects.requireNonNull(jobId, "jobId");
        }
    }

    /**
     * The job ended for good (its run succeeded, or it was cancelled): it will never be interrupted again, so its
     * checkpoints and restart count are forgotten. Internal bookkeeping, derived from placement's release.
     */
    record JobOver(String jobId) implements RecoveryFact {
        public JobOver {
            Objects.requireNonNull(jobId, "jobId");
        }
    }

    /**
     * Placement (re-)registered the node at {@code at} (its clock) with these control labels: whether it is cordoned
     * and which GPUs are; {@code gpus} are all its GPU indices. How recovery learns that an operator returned a
     * device or node to service after repair.
     */
    record NodeControlSeen(String nodeId, Instant at, boolean cordoned, java.util.Set<Integer> cordonedGpus,
                           java.util.Set<Integer> gpus) implements RecoveryFact {
        public NodeControlSeen {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(at, "at");
            cordonedGpus = java.util.Set.copyOf(cordonedGpus);
            gpus = java.util.Set.copyOf(gpus);
        }
    }

    /** A registration or heartbeat of {@code nodeId} was received at {@code receivedAt} (recovery's clock). */
    record NodeSeen(String nodeId, Instant receivedAt) implements RecoveryFact {
        public NodeSeen {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(receivedAt, "receivedAt");
        }
    }

    /**
     * The node exists, in {@code pool} (null: as known before; from its registrations); no time is attached because
     * the sender's clock is not ours.
     */
    record NodeKnown(String nodeId, String pool) implements RecoveryFact {
        public NodeKnown {
            Objects.requireNonNull(nodeId, "nodeId");
        }

        public NodeKnown(String nodeId) {
            this(nodeId, null);
        }
    }

    /**
     * Heartbeats of {@code pool} came again at {@code at} after every healthy node of it had been silent past the
     * timeout (placement, their one source, was away): each of its healthy nodes' silence counts from now, so the
     * nodes whose heartbeats are still on their way are not declared failed meanwhile.
     */
    record PoolResumed(String pool, Instant at) implements RecoveryFact {
        public PoolResumed {
            Objects.requireNonNull(pool, "pool");
            Objects.requireNonNull(at, "at");
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
