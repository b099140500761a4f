package io.gantry.runtime.kafka;

import java.sql.SQLException;

/**
 * Whose fault a failed database write is: the record's (it can never be stored, so it belongs in the dead letter)
 * or the database's (down, restarting, out of connections: the record must wait and be delivered again).
 */
public final class DatabaseFailures {
    private DatabaseFailures() {
    }

    /**
     * True when the write failed because of what the record holds: PostgreSQL refused the data (SQLSTATE class 22,
     * data exception, e.g. a NUL character in text) or a constraint (class 23), or the failure did not come from the
     * database at all (a bug the record trips). Any other database failure (connection, shutdown, serialization,
     * pool timeout, or a state we do not know) is the database's: retrying it loses nothing, dead-lettering it would.
     */
    public static boolean isRecordsFault(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                return state != null && (state.startsWith("22") || state.startsWith("23"));
            }
        }
        return true;
    }

    /**
     * The failure of a write to {@code store} as the processor must see it (a store's SQLException may arrive
     * undeclared): the record's fault as an exception that sends it to the dead letter, the database's as a
     * {@link TransientFailureException} that makes the processor deliver it again.
     */
    public static RuntimeException classify(Throwable e, String store) {
        if (!isRecordsFault(e)) {
            return new TransientFailureException(store + " unavailable: " + e, e);
        }
        return e instanceof RuntimeException r && !(e instanceof TransientFailureException) ? r
                : new IllegalArgumentException(store + " refused the record: " + e, e);
    }
}
