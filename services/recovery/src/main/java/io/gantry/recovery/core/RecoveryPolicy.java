package io.gantry.recovery.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The knobs of recovery.
 *
 * @param heartbeatTimeout how long a node may stay silent before it may be declared failed
 * @param maxRestarts      the failure budget of a job: how many times a job interrupted by infrastructure failures
 *                         (a node lost, a hardware fault on a device it held) is requeued before it is abandoned
 * @param phiThreshold     the phi-accrual suspicion a silence past the timeout must also reach before the node is
 *                         declared failed (0: the timeout alone decides); a node whose heartbeats have been jittery
 *                         gets longer, a steady one fails right at the timeout
 * @param health           what device faults lead to
 * @param disruptionHold   how long recovery holds back declaring the nodes of a pool failed when every one of them
 *                         went silent (zero: not at all): their heartbeats all come from placement, and a pool that
 *                         falls silent as a whole is far likelier placement restarting or failing over than every
 *                         node dying at once (as Kubernetes' node controller stops evicting in a zone that is
 *                         wholly unreachable); a node still silent when heartbeats resume, or after the hold, fails
 */
public record RecoveryPolicy(Duration heartbeatTimeout, int maxRestarts, double phiThreshold, HealthPolicy health,
                             Duration disruptionHold) {
    /** The phi threshold unless configured: a false suspicion about once in 10^8 heartbeat gaps. */
    public static final double DEFAULT_PHI_THRESHOLD = 8.0;
    /** The disruption hold unless configured: longer than placement takes to restart or fail over. */
    public static final Duration DEFAULT_DISRUPTION_HOLD = Duration.ofMinutes(5);

    public RecoveryPolicy {
        Objects.requireNonNull(heartbeatTimeout, "heartbeatTimeout");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(disruptionHold, "disruptionHold");
        if (disruptionHold.isNegative()) {
            throw new IllegalArgumentException("disruptionHold must be >= 0, was " + disruptionHold);
        }
        if (heartbeatTimeout.isNegative() || heartbeatTimeout.isZero()) {
            throw new IllegalArgumentException("heartbeatTimeout must be positive, was " + heartbeatTimeout);
        }
        if (maxRestarts < 0) {
            throw new IllegalArgumentException("maxRestarts must be >= 0, was " + maxRestarts);
        }
        if (!(phiThreshold >= 0) || Double.isInfinite(phiThreshold)) {
            throw new IllegalArgumentException("phiThreshold must be a finite number >= 0, was " + phiThreshold);
        }
    }

    /** The default disruption hold. */
    public RecoveryPolicy(Duration heartbeatTimeout, int maxRestarts, double phiThreshold, HealthPolicy health) {
        this(heartbeatTimeout, maxRestarts, phiThreshold, health, DEFAULT_DISRUPTION_HOLD);
    }

    /** The default phi threshold, device-health policy and disruption hold. */
    public RecoveryPolicy(Duration heartbeatTimeout, int maxRestarts) {
        this(heartbeatTimeout, maxRestarts, DEFAULT_PHI_THRESHOLD, HealthPolicy.defaults());
    }

    public static RecoveryPolicy defaults() {
        return new RecoveryPolicy(Duration.ofSeconds(10), 3);
    }

    public RecoveryPolicy withHealth(HealthPolicy h) {
        return new RecoveryPolicy(heartbeatTimeout, maxRestarts, phiThreshold, h, disruptionHold);
    }

    public RecoveryPolicy withPhiThreshold(double phi) {
        return new RecoveryPolicy(heartbeatTimeout, maxRestarts, phi, health, disruptionHold);
    }

    public RecoveryPolicy withDisruptionHold(Duration hold) {
        return new RecoveryPolicy(heartbeatTimeout, maxRestarts, phiThreshold, health, hold);
    }

    /**
     * What a hardware fault cordons, and when repeated faults drain a node.
     *
     * @param cordonNode  true: a hardware fault cordons the whole node; false: only the faulty GPU (a fault without
     *                    a GPU index always cordons the node)
     * @param drainAfter  this many hardware faults of one node within {@code drainWindow} drain it for repair
     *                    (0: never)
     * @param drainWindow how far back faults count towards a drain
     */
    public record HealthPolicy(boolean cordonNode, int drainAfter, Duration drainWindow) {
        /** Faults remembered per node for the drain window (the newest ones); bounds memory under a flood. */
        public static final int MAX_REMEMBERED_FAULTS = 64;

        public HealthPolicy {
            Objects.requireNonNull(drainWindow, "drainWindow");
            if (drainAfter < 0 || drainAfter > MAX_REMEMBERED_FAULTS) {
                throw new IllegalArgumentException("drainAfter must be within 0.." + MAX_REMEMBERED_FAULTS + ", was "
                        + drainAfter);
            }
            if (drainWindow.isNegative() || drainWindow.isZero()) {
                throw new IllegalArgumentException("drainWindow must be positive, was " + drainWindow);
            }
        }

        /** Cordon the faulty GPU; 3 hardware faults of a node within an hour drain it. */
        public static HealthPolicy defaults() {
            return new HealthPolicy(false, 3, Duration.ofHours(1));
        }
    }
}
