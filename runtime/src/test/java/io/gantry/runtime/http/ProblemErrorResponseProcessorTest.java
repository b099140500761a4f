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
}
