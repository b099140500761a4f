package io.gantry.queue.core;

/**
 * Why the queue ends a capacity reservation it asked placement for ({@code CapacityReservationCancelled.reason}: the
 * wire carries {@link #reason()}).
 */
public enum CapacityReservationEnd {
    /** Placement granted the gang. */
    GRANTED,
    /** The job ended (or is unknown now). */
    FINISHED,
    /** The job was queued again under a new attempt. */
    REQUEUED,
    /**
     * The job left the queue's order without ending: its owner suspended it, or a money budget holds it. Nodes drained
     * for a job that will not run would idle, and the one reservation would be kept from the next starving gang.
     */
    WITHDRAWN;

    /** The reason as written on the fact and the wire: the lower-case name. */
    public String reason() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
