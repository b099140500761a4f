package io.gantry.runtime.kafka;

import java.util.Optional;

/**
 * Which instance of a stateful service does its work now. A transactional service (queue, placement, recovery) keeps
 * its whole state in one place, so of its instances exactly one is the <em>owner</em> at a time — the one Kafka's
 * consumer group gave its input partitions ({@link SingleOwnerAssignor}) — and the others are <em>standbys</em> that
 * take over when the owner leaves the group or its session times out. Shared by the event loop (which sets it), the
 * assignor (which learns the owner's address) and HTTP (which forwards a standby's requests to the owner).
 */
public final class Ownership {
    /** Where an instance stands. */
    public enum Role {
        /** Not yet in the consumer group, or restoring state after it became the owner. */
        STARTING,
        /** Holds the inputs and the state; answers commands. */
        OWNER,
        /** In the group without inputs; forwards requests to the owner and waits to take over. */
        STANDBY
    }

    private final String advertisedUrl;
    /** Which of several units of work this is (see {@link #spread}), or -1: the service's one unit. */
    private final int unitIndex;
    private volatile Role role = Role.STARTING;
    private volatile String ownerUrl;

    /** @param advertisedUrl where this instance's HTTP API is reached by the others (may be empty: not reachable) */
    public Ownership(String advertisedUrl) {
        this(advertisedUrl, -1);
    }

    /**
     * @param advertisedUrl where this instance's HTTP API is reached by the others (may be empty: not reachable)
     * @param unitIndex     the unit's place among the service's units of work (a service split into several, e.g.
     *                      placement's pools: one consumer group each), so the units spread over the instances: the
     *                      unit goes to the instance at {@code unitIndex mod instances} in instance id order; -1 for
     *                      a service that is one unit (the owner keeps it while it lives)
     */
    public Ownership(String advertisedUrl, int unitIndex) {
        this.advertisedUrl = advertisedUrl == null ? "" : advertisedUrl;
        this.unitIndex = unitIndex;
    }

    /** The unit's index among the service's units, or -1 when the service is one unit (see the constructor). */
    public int unitIndex() {
        return unitIndex;
    }

    /** This instance's HTTP base URL as the other instances reach it (empty when it has none). */
    public String advertisedUrl() {
        return advertisedUrl;
    }

    public Role role() {
        return role;
    }

    /** The owner's HTTP base URL as the last rebalance announced it; empty while there is none or it has none. */
    public Optional<String> ownerUrl() {
        String u = ownerUrl;
        return u == null || u.isEmpty() ? Optional.empty() : Optional.of(u);
    }

    void role(Role r) {
        this.role = r;
    }

    void ownerUrl(String url) {
        this.ownerUrl = url;
    }

    @Override
    public String toString() {
        return role + (role == Role.OWNER ? "" : " (owner " + ownerUrl().orElse("unknown") + ")");
    }
}
