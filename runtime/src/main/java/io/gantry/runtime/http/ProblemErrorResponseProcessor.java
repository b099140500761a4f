package io.gantry.runtime.http;

import io.gantry.runtime.kafka.DatabaseFailures;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.server.exceptions.response.ErrorContext;
import io.micronaut.http.server.exceptions.response.ErrorResponseProcessor;
import jakarta.inject.Singleton;

import java.util.List;
import java.util.Map;

/**
 * Renders the errors Micronaut itself raises (unknown route, bad JSON, wrong method) as problem+json too, and a
 * request that failed because the service's database cannot be reached as 503 with a Retry-After (a 500 would tell
 * the client its request is at fault, or the service broken, where waiting and retrying is the answer).
 */
@Singleton
@Replaces(ErrorResponseProcessor.class)
public class ProblemErrorResponseProcessor implements ErrorResponseProcessor<Map<String, Object>> {
    /** What a client is told when its request failed because the service's database cannot be reached. */
    public static final String DATABASE_UNAVAILABLE_DETAIL =
            "the service's database (PostgreSQL) is unavailable; retry after the Retry-After seconds";

    @Override
    @SuppressWarnings("unchecked")
    public MutableHttpResponse<Map<String, Object>> processResponse(ErrorContext context,
                                                                    MutableHttpResponse<?> response) {
        HttpStatus status = response.getStatus();
        if (status == HttpStatus.REQUEST_ENTITY_TOO_LARGE) {
            // the HTTP decoder's limits, not the body's: say which part was too large
            HttpStatus tooLarge = tooLarge(context.getRootCause().orElse(null), context.getErrors().isEmpty()
                    ? null : context.getErrors().get(0).getMessage(), context.getRequest().getPath());
            if (tooLarge != null) {
                boolean headers = tooLarge == HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
                String detail = headers ? "the request's headers are larger than this server takes"
                        : "the request's URI is longer than this server takes";
                return ((MutableHttpResponse<Map<String, Object>>) response).status(tooLarge)
                        .contentType(Problem.PROBLEM_JSON)
                        .body(Problem.body(tooLarge, tooLarge.getReason(), detail,
                                List.of(new Problem.FieldError(headers ? "headers" : "uri", detail))));
            }
        }
        if (status == HttpStatus.INTERNAL_SERVER_ERROR
                && DatabaseFailures.isUnavailable(context.getRootCause().orElse(null))) {
            // not a bug of the service: its database is down, restarting or full, and the same request will succeed
            // once it is back
            return ((MutableHttpResponse<Map<String, Object>>) response).status(HttpStatus.SERVICE_UNAVAILABLE)
                    .header(HttpHeaders.RETRY_AFTER, Problem.RETRY_AFTER_SECONDS)
                    .contentType(Problem.PROBLEM_JSON)
                    .body(Problem.body(HttpStatus.SERVICE_UNAVAILABLE, Problem.DATABASE_UNAVAILABLE,
                            DATABASE_UNAVAILABLE_DETAIL, List.of()));
        }
        List<Problem.FieldError> errors = new java.util.ArrayList<>();
        for (var e : context.getErrors()) {
            String field = where(status, e.getPath().orElse(null), e.getMessage());
            if (field != null) {
                errors.add(new Problem.FieldError(field, e.getMessage()));
            }
        }
        String detail = context.getErrors().isEmpty() ? null : context.getErrors().get(0).getMessage();
        if (status.getCode() >= 500) {
            // never echo internals (or secrets inside them) to a client
            detail = "internal error";
            errors = List.of();
        }
        return ((MutableHttpResponse<Map<String, Object>>) response)
                .contentType(Problem.PROBLEM_JSON)
                .body(Problem.body(status, status.getReason(), detail, errors));
    }

    /**
     * 431 when the HTTP decoder refused the request's headers, 414 when it refused its request line (the URI), null
     * for anything else. Micronaut answers the decoder's limits (Netty's {@code TooLongFrameException}) with a bare
     * 413 that keeps no cause; what is left to tell them apart is the request: a request line too long never became
     * a request (Netty stands in {@value #UNDECODED_PATH}), headers too long did. A 413 with a sentence of its own
     * (a body over the size limit) is not the decoder's.
     */
    static HttpStatus tooLarge(Throwable cause, String message, String path) {
        if (cause != null || !HttpStatus.REQUEST_ENTITY_TOO_LARGE.getReason().equals(message)) {
            return null;
        }
        return UNDECODED_PATH.equals(path) ? HttpStatus.REQUEST_URI_TOO_LONG : HttpStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
    }

    /** The path of Netty's stand-in for a request it could not decode. */
    static final String UNDECODED_PATH = "/bad-request";

    /**
     * What a Micronaut error is about: its own path; else the request's URI when it says so; else nothing for an
     * unknown route, method or media type asked for (no field is wrong); else the body.
     */
    static String where(HttpStatus status, String path, String message) {
        if (path != null) {
            return path;
        }
        if (message != null && message.contains("URI")) {
            return "uri";
        }
        return switch (status) {
            case NOT_FOUND, METHOD_NOT_ALLOWED, NOT_ACCEPTABLE -> null;
            default -> "body";
        };
    }
}
