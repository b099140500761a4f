package io.gantry.placement.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Something that happened, which {@link ClusterState#replay} applies. Placement writes all of them except
 * {@link NodeFailed} and {@link NodeRecovered}, which recovery writes and placement only learns.
 */
public sealed interface PlacementFact {

    record NodeRegistered(NodeSpec node) implements PlacementFact {
        public NodeRegistered {
            Objects.requireNonNull(node, "node");
        }
    }

    record NodeFailed(String nodeId) implements PlacementFact {
    }

    record NodeRecovered(String nodeId) implements PlacementFact {
    }

    record AllocationGranted(Allocation allocation) implements PlacementFact {
    }

    record PlacementDeferred(String jobId, String tenant, int attempt, DeferralCause reason, String message)
            implements PlacementFact {
    }

    record RunStarted(Allocation allocation, Instant startedAt) implements PlacementFact {
    }

    record RunSucceeded(Allocation allocation, Instant finishedAt) implements PlacementFact {
    }

    record RunFailed(Allocation allocation, Integer exitCode, String message, Instant finishedAt, FailureCause reason)
            implements PlacementFact {
        public RunFailed {
            reason = reason == null ? FailureCause.RUN_FAILED : reason;
        }

        /** A task failed (reason RUN_FAILED). */
        public RunFailed(Allocation allocation, Integer exitCode, String message, Instant finishedAt) {
            this(allocation, exitCode, message, finishedAt, FailureCause.RUN_FAILED);
        }
    }

    /**
     * The queue preempted the run: its tasks were asked to stop (SIGTERM) and the allocation is released
     * {@code PREEMPTED} at {@code deadline} unless the run ends before. Not published (it is derived from
     * {@code queue.preemption-events}, which is read back at restore).
     */
    record PreemptionRequested(Allocation allocation, Instant deadline) implements PlacementFact {
        public PreemptionRequested {
            Objects.requireNonNull(allocation, "allocation");
            Objects.requireNonNull(deadline, "deadline");
        }
    }

    /** The whole held interval, so billing needs nothing else. */
    record AllocationReleased(Allocation allocation, ReleaseCause reason, Instant releasedAt) implements PlacementFact {
    }
}
