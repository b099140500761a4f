package io.gantry.runtime.kafka;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;

/**
 * Whose fault a failed database write is: the record's (it can never be stored, so it belongs in the dead letter)
 * or the database's (down, restarting, out of connections: the record must wait and be delivered again).
 */
public final class DatabaseFailures {
    /** admin_shutdown, crash_shutdown, cannot_connect_now (starting or in recovery), too_many_connections. */
    private static final java.util.Set<String> UNAVAILABLE_STATES = java.util.Set.of("57P01", "57P02", "57P03", "53300");

    /**
     * What HikariCP says (with no SQLSTATE) of a connection it closed under its user because the connection broke:
     * a query that met the server's shutdown (57P01) fails, and what the framework then does with the connection
     * (restore its read-only flag, say) fails with this, which is all that reaches the caller.
     */
    private static final String POOL_CLOSED_IT = "Connection is closed";

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
     * True when the failure says the database cannot be reached or cannot serve now, whatever was asked of it: the
     * pool gave no connection in time ({@link SQLTransientConnectionException}), a connection failed or was closed
     * under it (HikariCP's {@value #POOL_CLOSED_IT}), or PostgreSQL or its driver said so (SQLSTATE class 08,
     * connection exception: refused, lost, a login or a query that the driver's timeouts ended because the server
     * stopped answering, as behind a network partition; 57P01-57P03, shutting down or not accepting connections yet;
     * 53300, too many connections). A caller may answer "unavailable, retry" to it; any other failure (a constraint,
     * a bug, a query the database refused) is not the outage's and must not be hidden as one.
     */
    public static boolean isUnavailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLRecoverableException) {
                return true;
            }
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state != null ? state.startsWith("08") || UNAVAILABLE_STATES.contains(state)
                        : POOL_CLOSED_IT.equals(sql.getMessage())) {
                    return true;
                }
            }
        }
        return false;
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
