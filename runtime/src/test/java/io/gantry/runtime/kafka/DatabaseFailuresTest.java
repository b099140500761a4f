package io.gantry.runtime.kafka;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class DatabaseFailuresTest {

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of("a pool timeout", new RuntimeException("wrapped",
                        new SQLTransientConnectionException("pool - Connection is not available")), false),
                Arguments.of("a refused connection", new RuntimeException(new SQLException("refused", "08001")), false),
                Arguments.of("a server shutting down", new RuntimeException(new SQLException("terminating", "57P01")),
                        false),
                Arguments.of("a deadlock", new RuntimeException(new SQLException("deadlock detected", "40P01")), false),
                Arguments.of("a query cut off by the socket timeout", new RuntimeException(new PSQLException(
                        "An I/O error occurred while sending to the backend.", PSQLState.CONNECTION_FAILURE,
                        new SocketTimeoutException("Read timed out"))), false),
                Arguments.of("a state we do not know", new RuntimeException(new SQLException("odd", "XX000")), false),
                Arguments.of("no state at all", new RuntimeException(new SQLException("odd")), false),
                Arguments.of("a NUL in text", new RuntimeException(
                        new SQLException("invalid byte sequence for encoding \"UTF8\": 0x00", "22021")), true),
                Arguments.of("a check violation", new RuntimeException(new SQLException("violates check", "23514")),
                        true),
                Arguments.of("no database failure at all", new IllegalStateException("a bug the record trips"), true));
    }

    @ParameterizedTest(name = "{0}: the record's fault = {2}")
    @MethodSource("failures")
    void onlyRefusedDataIsTheRecordsFaultAndEveryOtherDatabaseFailureIsRetried(String name, RuntimeException e,
                                                                                 boolean recordsFault) {
        assertThat(DatabaseFailures.isRecordsFault(e)).isEqualTo(recordsFault);
        assertThat(DatabaseFailures.classify(e, "store") instanceof TransientFailureException).isEqualTo(!recordsFault);
        assertThat(DatabaseFailures.classify(new Exception(e), "store") instanceof TransientFailureException)
                .as("an undeclared checked exception is classified by its causes too").isEqualTo(!recordsFault);
    }

    static Stream<Arguments> outages() {
        return Stream.of(
                Arguments.of("the pool gave no connection in time", new RuntimeException("Failed to obtain JDBC Connection",
                        new SQLTransientConnectionException("HikariPool-1 - Connection is not available")), true),
                Arguments.of("a refused connection", new RuntimeException(new SQLException("refused", "08001")), true),
                Arguments.of("a connection lost mid-query", new RuntimeException(new SQLException("I/O error", "08006")),
                        true),
                // what PgJDBC throws when its socketTimeout ends a query whose answer never comes (a partition)
                Arguments.of("a query cut off by the socket timeout", new RuntimeException(new PSQLException(
                        "An I/O error occurred while sending to the backend.", PSQLState.CONNECTION_FAILURE,
                        new SocketTimeoutException("Read timed out"))), true),
                Arguments.of("a login that timed out", new PSQLException("Connection attempt timed out.",
                        PSQLState.CONNECTION_UNABLE_TO_CONNECT), true),
                Arguments.of("a connection the driver closed after a timeout", new RuntimeException(
                        new PSQLException("This connection has been closed.", PSQLState.CONNECTION_DOES_NOT_EXIST)),
                        true),
                Arguments.of("a server shutting down", new RuntimeException(new SQLException("terminating", "57P01")),
                        true),
                Arguments.of("a server still starting", new SQLException("the database system is starting up", "57P03"),
                        true),
                Arguments.of("too many connections", new SQLException("too many clients already", "53300"), true),
                Arguments.of("a connection the pool closed under its user after a query met a shutdown",
                        new RuntimeException("Could not set JDBC Connection read-only",
                                new SQLException("Connection is closed")), true),
                Arguments.of("a deadlock", new RuntimeException(new SQLException("deadlock detected", "40P01")), false),
                Arguments.of("a missing table", new RuntimeException(new SQLException("relation does not exist", "42P01")),
                        false),
                Arguments.of("a check violation", new RuntimeException(new SQLException("violates check", "23514")),
                        false),
                Arguments.of("no state at all", new RuntimeException(new SQLException("odd")), false),
                Arguments.of("no database failure at all", new IllegalStateException("a bug"), false),
                Arguments.of("nothing", null, false));
    }

    @ParameterizedTest(name = "{0}: the database is unavailable = {2}")
    @MethodSource("outages")
    void onlyAnUnreachableOrUnreadyDatabaseCountsAsUnavailable(String name, Throwable e, boolean unavailable) {
        assertThat(DatabaseFailures.isUnavailable(e)).isEqualTo(unavailable);
        if (e != null) {
            assertThat(DatabaseFailures.isUnavailable(new Exception("undeclared", e)))
                    .as("found among the causes").isEqualTo(unavailable);
        }
    }
}
