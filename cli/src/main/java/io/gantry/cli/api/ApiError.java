package io.gantry.cli.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.CliException;
import io.gantry.cli.ExitCode;

import java.util.ArrayList;
import java.util.List;

/** The API refused a request: its status and its problem+json body, told as the sentence the API wrote. */
public final class ApiError extends CliException {
    private final int status;
    private final JsonNode problem;

    ApiError(int status, JsonNode problem, List<String> lines) {
        super(ExitCode.ofHttpStatus(status), lines);
        this.status = status;
        this.problem = problem;
    }

    /** The problem's lines: its detail, then one line per bad field (unless the detail already is that one field). */
    static ApiError of(int status, JsonNode problem, String rawBody, String hint) {
        List<String> lines = new ArrayList<>();
        String detail = text(problem, "detail");
        String title = text(problem, "title");
        List<String> fields = new ArrayList<>();
        for (JsonNode e : problem.path("errors")) {
            fields.add(e.path("field").asText() + ": " + e.path("message").asText());
        }
        JsonNode only = problem.path("errors").path(0);
        if (fields.size() == 1 && detail != null && (detail.equals(fields.get(0))
                || detail.equals(only.path("message").asText()))) {
            fields.clear(); // the detail already says it
        }
        String head = detail != null ? detail : title != null ? title : "HTTP " + status + (rawBody == null
                || rawBody.isBlank() ? "" : ": " + abbreviate(rawBody));
        lines.add(head + (hint == null ? "" : " " + hint));
        fields.forEach(f -> lines.add("  " + f));
        return new ApiError(status, problem, lines);
    }

    public int status() {
        return status;
    }

    /** The bad fields the API named, as (field, message) pairs. */
    public List<String[]> fieldErrors() {
        List<String[]> out = new ArrayList<>();
        for (JsonNode e : problem.path("errors")) {
            out.add(new String[]{e.path("field").asText(), e.path("message").asText()});
        }
        return out;
    }

    public String detail() {
        String d = text(problem, "detail");
        return d == null ? lines().get(0) : d;
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.path(field);
        return v.isTextual() && !v.asText().isBlank() ? v.asText() : null;
    }

    private static String abbreviate(String s) {
        String one = s.replaceAll("\\s+", " ").trim();
        return one.length() > 200 ? one.substring(0, 200) + "…" : one;
    }
}
