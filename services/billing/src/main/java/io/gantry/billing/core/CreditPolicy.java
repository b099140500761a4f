package io.gantry.billing.core;

import java.util.Set;

/**
 * Which releases give GPU time back: the release reasons whose lost work (from the run's last committed checkpoint,
 * or its start, to the release) is credited. Infrastructure faults always are (a node lost, a GPU that failed under
 * the run); preemptions only when the operator says so.
 */
public record CreditPolicy(Set<String> creditedReasons) {
    public static final String NODE_FAILED = "NODE_FAILED";
    public static final String DEVICE_FAULT = "DEVICE_FAULT";
    public static final String PREEMPTED = "PREEMPTED";

    public CreditPolicy {
        creditedReasons = Set.copyOf(creditedReasons);
    }

    public static CreditPolicy of(boolean creditPreemptions) {
        return new CreditPolicy(creditPreemptions ? Set.of(NODE_FAILED, DEVICE_FAULT, PREEMPTED)
                : Set.of(NODE_FAILED, DEVICE_FAULT));
    }

    public boolean credits(String releaseReason) {
        return releaseReason != null && creditedReasons.contains(releaseReason);
    }
}
