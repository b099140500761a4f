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
    REQUEUED;

    /** The reason as written on the fact and the wire: the lower-case name. */
    public String reason() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
