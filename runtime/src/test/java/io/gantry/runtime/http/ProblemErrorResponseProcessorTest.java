package io.gantry.runtime.http;

import io.micronaut.http.HttpStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What Micronaut's own errors name as the wrong field of a request. */
class ProblemErrorResponseProcessorTest {
    @Test
    void anErrorNamesItsPathTheUriOrTheBodyAndAnUnknownRouteNamesNoField() {
        assertThat(ProblemErrorResponseProcessor.where(HttpStatus.BAD_REQUEST, "limit", "must be a number"))
                .isEqualTo("limit");
        assertThat(ProblemErrorResponseProcessor.where(HttpStatus.BAD_REQUEST, null, "Malformed URI")).isEqualTo("uri");
        assertThat(ProblemErrorResponseProcessor.where(HttpStatus.NOT_FOUND, null, "Page Not Found")).isNull();
        assertThat(ProblemErrorResponseProcessor.where(HttpStatus.METHOD_NOT_ALLOWED, null, "Method [PATCH] not allowed"))
                .isNull();
        assertThat(ProblemErrorResponseProcessor.where(HttpStatus.BAD_REQUEST, null, "Invalid JSON")).isEqualTo("body");
    }

    @Test
    void theDecodersLimitsAreToldApartFromABodyTooLarge() {
        String bare = HttpStatus.REQUEST_ENTITY_TOO_LARGE.getReason();
        assertThat((Object) ProblemErrorResponseProcessor.tooLarge(null, bare, "/bad-request"))
                .isEqualTo(HttpStatus.REQUEST_URI_TOO_LONG);
        assertThat((Object) ProblemErrorResponseProcessor.tooLarge(null, bare, "/v1/jobs"))
                .isEqualTo(HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE);
        assertThat((Object) ProblemErrorResponseProcessor.tooLarge(null, "The content length [11534350] exceeds the maximum "
                + "allowed content length [10485760]", "/v1/jobs")).isNull();
        assertThat((Object) ProblemErrorResponseProcessor.tooLarge(new IllegalStateException(), bare, "/v1/jobs")).isNull();
    }

    @Test
    void aRequestThatFailedBecauseTheDatabaseIsUnreachableIs503WithRetryAfterNamingTheDatabase() {
        var cause = new RuntimeException("Failed to obtain JDBC Connection", new java.sql.SQLTransientConnectionException(
                "HikariPool-1 - Connection is not available, request timed out after 2000ms",
                new java.sql.SQLException("Connection to db.internal:5432 refused; password=s3cret", "08001")));

        var response = serverError(cause);

        assertThat(response.code()).isEqualTo(503);
        assertThat(response.getHeaders().get("Retry-After")).isEqualTo(Problem.RETRY_AFTER_SECONDS);
        assertThat(response.getContentType()).hasValue(Problem.PROBLEM_JSON);
        assertThat(response.body()).containsEntry("status", 503)
                .containsEntry("title", Problem.DATABASE_UNAVAILABLE)
                .containsEntry("detail", ProblemErrorResponseProcessor.DATABASE_UNAVAILABLE_DETAIL);
        assertThat(response.body().toString()).doesNotContain("db.internal").doesNotContain("s3cret");
    }

    @Test
    void anyOtherFailureStaysA500ThatTellsNothingOfItsCause() {
        var response = serverError(new RuntimeException(new java.sql.SQLException("relation \"jobs\" does not exist",
                "42P01")));

        assertThat(response.code()).isEqualTo(500);
        assertThat(response.getHeaders().get("Retry-After")).isNull();
        assertThat(response.body()).containsEntry("detail", "internal error");
    }

    private static io.micronaut.http.MutableHttpResponse<java.util.Map<String, Object>> serverError(Throwable cause) {
        var context = io.micronaut.http.server.exceptions.response.ErrorContext
                .builder(io.micronaut.http.HttpRequest.GET("/v1/jobs"))
                .cause(cause).errorMessage("Internal Server Error: " + cause.getMessage()).build();
        return new ProblemErrorResponseProcessor().processResponse(context, io.micronaut.http.HttpResponse.serverError());
    }
}
