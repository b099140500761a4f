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
        List<Problem.FieldError> errors = context.getErrors().stream()
                .map(e -> new Problem.FieldError(e.getPath().orElse("body"), e.getMessage()))
                .toList();
        String detail = errors.isEmpty() ? null : errors.get(0).message();
        if (status.getCode() >= 500) {
            // never echo internals (or secrets inside them) to a client
            detail = "internal error";
            errors = List.of();
        }
        return ((MutableHttpResponse<Map<String, Object>>) response)
                .contentType(Problem.PROBLEM_JSON)
                .body(Problem.body(status, status.getReason(), detail, errors));
    }
}
