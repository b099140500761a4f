package io.gantry.placement.core;

import java.time.Instant;
import java.util.Objects;

/**
 * Something that happened, which {@link ClusterState#replay} applies. Placement writes all of them except
 * {@link NodeFailed} and {@link NodeRecovered}, which recovery writes and placement only learns.
 */
public sealed interface Fact {

    record NodeRegistered(NodeSpec node) implements Fact {
        public NodeRegistered {
            Objects.requireNonNull(node, "node");
        }
    }

    record NodeFailed(String nodeId) implements Fact {
    }

    record NodeRecovered(String nodeId) implements Fact {
    }

    record AllocationGranted(Allocation allocation) implements Fact {
    }

    record PlacementDeferred(String jobId, String tenant, int attempt, DeferralCause reason, String message)
            implements Fact {
    }

    record RunStarted(Allocation allocation, Instant startedAt) implements Fact {
    }

    record RunSucceeded(Allocation allocation, Instant finishedAt) implements Fact {
    }

    record RunFailed(Allocation allocation, Integer exitCode, String message, Instant finishedAt) implements Fact {
    }

    /** The whole held interval, so billing needs nothing else. */
    record AllocationReleased(Allocation allocation, ReleaseCause reason, Instant releasedAt) implements Fact {
    }
}
