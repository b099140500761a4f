package io.gantry.runtime.http;

import io.micronaut.context.annotation.Replaces;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.server.exceptions.response.ErrorContext;
import io.micronaut.http.server.exceptions.response.ErrorResponseProcessor;
import jakarta.inject.Singleton;

import java.util.List;
import java.util.Map;

/** Renders the errors Micronaut itself raises (unknown route, bad JSON, wrong method) as problem+json too. */
@Singleton
@Replaces(ErrorResponseProcessor.class)
public class ProblemErrorResponseProcessor implements ErrorResponseProcessor<Map<String, Object>> {

    @Override
    @SuppressWarnings("unchecked")
    public MutableHttpResponse<Map<String, Object>> processResponse(ErrorContext context,
                                                                    MutableHttpResponse<?> response) {
        HttpStatus status = response.getStatus();
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
