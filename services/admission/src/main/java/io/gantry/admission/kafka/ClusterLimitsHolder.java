package io.gantry.admission.kafka;

import io.gantry.admission.core.ClusterLimits;
import jakarta.inject.Singleton;

/**
 * The cluster limits the HTTP threads validate against. Written only by the read-model processor's thread;
 * null until the node topic has been read to its end once, so that no spec is judged against a half-known
 * cluster.
 */
@Singleton
public class ClusterLimitsHolder {
    private volatile ClusterLimits limits;

    /** The current limits, or null while the node topic is still being restored. */
    public ClusterLimits current() {
        return limits;
    }

    void publish(ClusterLimits next) {
        this.limits = next;
    }
}
