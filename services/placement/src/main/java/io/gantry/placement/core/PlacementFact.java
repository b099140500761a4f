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
     * The queue preempted the run: its tasks were told at {@code noticeAt} (the notice, then SIGTERM) and the
     * allocation is released with {@code reason} ({@code PREEMPTED}, or {@code IDLE} for an idle stop) at
     * {@code deadline} unless the run ends before; a run that ends from {@code noticeAt} on ends as this stop, whatever
     * its exit code (it may have saved and exited 0). {@code why} is the sentence the run's preemption notice gives
     * (null: the caller words it). Published as the run's preemption notice ({@code RunStopRequested}); not rebuilt
     * from it: a restore derives it again from {@code queue.preemption-events} (a bounded drain's stops start over).
     */
    record PreemptionRequested(Allocation allocation, Instant noticeAt, Instant deadline, String why,
                               ReleaseCause reason) implements PlacementFact {
        public PreemptionRequested {
            Objects.requireNonNull(allocation, "allocation");
            Objects.requireNonNull(noticeAt, "noticeAt");
            Objects.requireNonNull(deadline, "deadline");
            Objects.requireNonNull(reason, "reason");
        }

        /** A stop released {@code PREEMPTED}. */
        public PreemptionRequested(Allocation allocation, Instant noticeAt, Instant deadline, String why) {
            this(allocation, noticeAt, deadline, why, ReleaseCause.PREEMPTED);
        }

        /** A stop whose reason the caller words (the queue's preemption sentence). */
        public PreemptionRequested(Allocation allocation, Instant noticeAt, Instant deadline) {
            this(allocation, noticeAt, deadline, null);
        }

        /** The same stop, told to the run with {@code sentence}. */
        public PreemptionRequested because(String sentence) {
            return new PreemptionRequested(allocation, noticeAt, deadline, sentence, reason);
        }
    }

    /** The whole held interval, so billing needs nothing else. */
    record AllocationReleased(Allocation allocation, ReleaseCause reason, Instant releasedAt) implements PlacementFact {
    }
}
