package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;

import java.time.Instant;

/**
 * The service side of an {@link EventProcessor}: a thin adapter that maps records to calls on a pure core.
 *
 * <p>All methods run on the processor's single thread, so the handler and its core need no locking.
 */
public interface EventHandler {

    /** Rebuilds state from a record of a restore topic (read from the beginning before any input is handled). */
    default void restore(Topic<?> topic, String key, Object value) {
    }

    /**
     * Writes the state for a snapshot as records of the restore topics that rebuild it through {@link #restore}, in
     * order: the history with what no longer matters left out (a finished job's steps, superseded states), so that
     * restoring them and then the history after the snapshot leaves the state a restore of the whole history would.
     * Called on the loop thread between two batches. False (the default): this handler takes no snapshots, and every
     * start replays the whole history.
     */
    default boolean snapshot(SnapshotWriter out) {
        return false;
    }

    /**
     * What else a snapshot's format depends on besides the service, handler class, build and unit: a snapshot written
     * under another variant is not read (a whole-history restore instead). Empty (the default): nothing else.
     */
    default String snapshotVariant() {
        return "";
    }

    /** Called once after restore, before the first input. */
    default void restored(Output out) {
    }

    /**
     * Handles one decoded input record. Throwing sends the record to the service's dead-letter topic and the
     * processor moves on; so validate before you mutate state.
     */
    void handle(Topic<?> topic, String key, Object value, Output out) throws Exception;

    /**
     * Called once the loop has read every input partition it was assigned up to the end that partition had when
     * it was assigned (after each start, and after each rebalance that assigned partitions). Until then the input
     * may be far behind: a restarted consumer can wait a whole session timeout for a killed member's partitions.
     */
    default void caughtUp(Instant now, Output out) {
    }

    /**
     * Called once a batch's records (and commands) are handled, before its offsets commit: a handler that buffers
     * its writes (one database transaction per batch rather than per record) writes them here. Throwing a
     * {@link TransientFailureException} restarts the loop, which handles the batch again.
     */
    default void batchHandled(Output out) {
    }

    /** Called about every tick interval, for time-driven decisions (timeouts, simulated runs). */
    default void tick(Instant now, Output out) {
    }

    /**
     * When the handler next has time-driven work, asked after each batch: a time (at or before which nothing is
     * due; {@link Instant#MAX} when nothing is pending at all), or null when it cannot tell and wants a tick every
     * interval (the default). The Kafka processor ticks at its interval regardless; the virtual-time driver jumps
     * to the time given, so a replay of months is not made of empty ticks. Must be cheap: it is asked often.
     */
    default Instant nextTickAt(Instant now) {
        return null;
    }
}
