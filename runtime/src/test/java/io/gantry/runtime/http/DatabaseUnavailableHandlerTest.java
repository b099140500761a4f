package io.gantry.runtime.http;

import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which failures the handler answers itself (the database's: 503, one quiet line) and which it leaves to Micronaut
 * (any other: ERROR with the stack, 500). What it logs is checked on the services' outage tests, which run logback.
 */
class DatabaseUnavailableHandlerTest {
    private final List<Throwable> leftToMicronaut = new ArrayList<>();
    private final DatabaseUnavailableHandler handler = new DatabaseUnavailableHandler((request, failure) -> {
        leftToMicronaut.add(failure);
        return HttpResponse.serverError();
    }, new ProblemErrorResponseProcessor());

    @Test
    void aQueryCutOffByThePartitionIsAnswered503ProblemWithRetryAfter() {
        var cutOff = new RuntimeException("Could not set JDBC Connection read-only", new PSQLException(
                "An I/O error occurred while sending to the backend.", PSQLState.CONNECTION_FAILURE,
                new SocketTimeoutException("Read timed out")));

        HttpResponse<?> response = handler.handle(HttpRequest.GET("/v1/jobs/j-1"), cutOff);

        assertThat(response.code()).isEqualTo(503);
        assertThat(response.getHeaders().get("Retry-After")).isEqualTo(Problem.RETRY_AFTER_SECONDS);
        assertThat(response.getContentType()).hasValue(Problem.PROBLEM_JSON);
        assertThat(response.body().toString()).contains(Problem.DATABASE_UNAVAILABLE);
        assertThat(leftToMicronaut).isEmpty();
    }

    @Test
    void anUndeclaredSqlExceptionOfThePoolIsAnswered503Too() {
        HttpResponse<?> response = new DatabaseUnavailableHandler.Undeclared(handler).handle(
                HttpRequest.GET("/v1/usage"),
                new SQLTransientConnectionException("HikariPool-1 - Connection is not available"));

        assertThat(response.code()).isEqualTo(503);
        assertThat(leftToMicronaut).isEmpty();
    }

    @Test
    void anyOtherFailureIsLeftToMicronautAsItWas() {
        var bug = new IllegalStateException("a bug");
        var refused = new SQLException("relation \"jobs\" does not exist", "42P01");

        assertThat(handler.handle(HttpRequest.GET("/v1/jobs"), bug).code()).isEqualTo(500);
        assertThat(new DatabaseUnavailableHandler.Undeclared(handler).handle(HttpRequest.GET("/v1/jobs"), refused)
                .code()).isEqualTo(500);
        assertThat(leftToMicronaut).containsExactly(bug, refused);
    }

    @Test
    void theLineNamesTheDatabasesOwnWordsOnOneLine() {
        assertThat(DatabaseUnavailableHandler.cause(new RuntimeException("Failed to obtain JDBC Connection",
                new SQLTransientConnectionException("HikariPool-1 - Connection is not available, request timed out "
                        + "after 2000ms", "08001"))))
                .isEqualTo("SQLTransientConnectionException: HikariPool-1 - Connection is not available, request "
                        + "timed out after 2000ms (SQLSTATE 08001)");
        assertThat(DatabaseUnavailableHandler.cause(new PSQLException("FATAL: terminating connection\n  Detail: x",
                PSQLState.CONNECTION_FAILURE)))
                .isEqualTo("PSQLException: FATAL: terminating connection Detail: x (SQLSTATE 08006)");
    }

    @Test
    void aPoolsTimeoutSaysWhyItsLastConnectionFailed() {
        // what the pool says when it cannot connect: its timeout, caused by the driver's last failure
        var refused = new PSQLException("Connection to 127.0.0.1:5432 refused.", PSQLState.CONNECTION_UNABLE_TO_CONNECT);
        var timeout = new SQLTransientConnectionException("HikariPool-1 - Connection is not available, request timed "
                + "out after 2000ms", "08003", refused);
        assertThat(DatabaseUnavailableHandler.cause(new RuntimeException("Failed to obtain JDBC Connection", timeout)))
                .isEqualTo("SQLTransientConnectionException: HikariPool-1 - Connection is not available, request "
                        + "timed out after 2000ms (SQLSTATE 08003); caused by PSQLException: Connection to "
                        + "127.0.0.1:5432 refused. (SQLSTATE 08001)");
    }
}
