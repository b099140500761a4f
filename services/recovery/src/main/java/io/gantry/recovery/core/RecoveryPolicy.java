package io.gantry.recovery.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The two knobs of recovery.
 *
 * @param heartbeatTimeout how long a node may stay silent before it is declared failed
 * @param maxRestarts      how many times a job interrupted by node failures is requeued before it is abandoned
 */
public record RecoveryPolicy(Duration heartbeatTimeout, int maxRestarts) {
    public RecoveryPolicy {
        Objects.requireNonNull(heartbeatTimeout, "heartbeatTimeout");
        if (heartbeatTimeout.isNegative() || heartbeatTimeout.isZero()) {
            throw new IllegalArgumentException("heartbeatTimeout must be positive, was " + heartbeatTimeout);
        }
        if (maxRestarts < 0) {
            throw new IllegalArgumentException("maxRestarts must be >= 0, was " + maxRestarts);
        }
    }

    public static RecoveryPolicy defaults() {
        return new RecoveryPolicy(Duration.ofSeconds(10), 3);
    }
}
