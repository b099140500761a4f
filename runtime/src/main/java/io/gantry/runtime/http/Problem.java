package io.gantry.runtime.http;

import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** RFC 9457 problem details: every 4xx/5xx Gantry answers is {@code application/problem+json}. */
public final class Problem {
    public static final MediaType PROBLEM_JSON = MediaType.of("application/problem+json");
    /** The title of a 503 whose cause is the service's database (down, restarting, out of connections). */
    public static final String DATABASE_UNAVAILABLE = "Database unavailable";
    /** How long a client should wait before retrying a 503 (a restarting dependency is usually back by then). */
    public static final String RETRY_AFTER_SECONDS = "5";

    /** One bad input field: a JSON-pointer-like path (e.g. {@code tasks[0].gpus}) and what is wrong with it. */
    public record FieldError(String field, String message) {
    }

    private Problem() {
    }

    public static Map<String, Object> body(HttpStatus status, String title, String detail, List<FieldError> errors) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status.getCode());
        if (detail != null) {
            body.put("detail", detail);
        }
        if (errors != null && !errors.isEmpty()) {
            body.put("errors", errors.stream().map(e -> Map.of("field", e.field(), "message", e.message())).toList());
        }
        return body;
    }

    public static MutableHttpResponse<Map<String, Object>> response(HttpStatus status, String title, String detail,
                                                                    List<FieldError> errors) {
        return HttpResponse.<Map<String, Object>>status(status)
                .contentType(PROBLEM_JSON)
                .body(body(status, title, detail, errors));
    }

    public static MutableHttpResponse<Map<String, Object>> badRequest(List<FieldError> errors) {
        String detail = errors.size() == 1 ? errors.get(0).field() + ": " + errors.get(0).message()
                : errors.size() + " fields are invalid";
        return response(HttpStatus.BAD_REQUEST, "Invalid request", detail, errors);
    }

    /** A body {@link JsonBody} refused: 415 for its media type or charset, 400 for the document, naming the field. */
    public static MutableHttpResponse<Map<String, Object>> of(JsonBody.Rejected r) {
        List<FieldError> errors = List.of(new FieldError(r.field(), r.getMessage()));
        return r.status() == 415
                ? response(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "Unsupported media type", r.getMessage(), errors)
                : badRequest(errors);
    }

    /**
     * 503 for a request the service cannot serve because its database cannot be reached: the client should retry
     * after {@link #RETRY_AFTER_SECONDS}. Names the database as the cause, never its address or credentials.
     */
    public static MutableHttpResponse<Map<String, Object>> databaseUnavailable(String detail) {
        return response(HttpStatus.SERVICE_UNAVAILABLE, DATABASE_UNAVAILABLE, detail, List.of())
                .header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS);
    }

    public static MutableHttpResponse<Map<String, Object>> notFound(String detail) {
        return response(HttpStatus.NOT_FOUND, "Not found", detail, List.of());
    }
}
