package io.gantry.queue.core;

import java.util.List;
import java.util.Objects;

/**
 * What a policy proposes for one cycle: jobs to dispatch, in order, and why some of the others wait. The core
 * checks the plan against its invariants before it turns it into facts.
 */
public record DispatchPlan(List<String> dispatch, List<Verdict> waits) {
    public DispatchPlan {
        dispatch = List.copyOf(dispatch);
        waits = List.copyOf(waits);
    }

    public static DispatchPlan empty() {
        return new DispatchPlan(List.of(), List.of());
    }

    /** Why a job is not dispatched in this cycle. A policy never says {@link WaitReason#CAPACITY}: only placement does. */
    public record Verdict(String jobId, WaitReason reason, String message) {
        public Verdict {
            Objects.requireNonNull(jobId);
            Objects.requireNonNull(reason);
            Objects.requireNonNull(message);
        }
    }
}
