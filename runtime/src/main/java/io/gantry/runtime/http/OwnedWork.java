package io.gantry.runtime.http;

import io.gantry.runtime.kafka.Ownership;

/**
 * A service whose work one instance owns at a time (queue, placement, recovery): its HTTP requests reaching a standby
 * are forwarded to the owner ({@link OwnerForwardingFilter}).
 */
public interface OwnedWork {
    Ownership ownership();
}
