package io.gantry.runtime.http;

import io.gantry.runtime.kafka.Ownership;

/**
 * A service whose work one instance owns at a time (queue, placement, recovery): its HTTP requests reaching a standby
 * are forwarded to the owner ({@link OwnerForwardingFilter}).
 */
public interface OwnedWork {
    Ownership ownership();

    /**
     * Whether a standby forwards every request to the owner (default); false for a service split into units owned
     * by different instances (placement by pool), whose controllers route each request to the unit it concerns.
     */
    default boolean forwardsToOwner() {
        return true;
    }
}
