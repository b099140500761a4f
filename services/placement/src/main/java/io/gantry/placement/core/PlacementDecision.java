package io.gantry.placement.core;

import java.util.List;
import java.util.Objects;

/** What a {@link GangPlacer} decided: every task placed, or the gang deferred with a reason. */
public sealed interface PlacementDecision {

    /** One entry per replica of every task, in spec order. */
    record Placed(List<PlacedTask> placements) implements PlacementDecision {
        public Placed {
            placements = List.copyOf(placements);
        }
    }

    record Deferred(DeferralCause reason, String message) implements PlacementDecision {
        public Deferred {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }
}
