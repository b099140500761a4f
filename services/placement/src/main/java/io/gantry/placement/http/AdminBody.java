package io.gantry.placement.http;

import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The small JSON bodies of placement's admin endpoints, read strictly ({@link JsonBody}: UTF-8 JSON, one document,
 * no key twice) and field by field: each field of the one type it has, in range, without control characters, and
 * no field the endpoint does not know. A lenient binder turned {@code "xid": false} into 0 and {@code [0]} into 0,
 * and accepted a body with garbage after it, so a typo injected a fault nobody asked for.
 */
final class AdminBody {
    /** A field that is not what it must be; {@link #problem()} is the 400 naming it. */
    static final class Invalid extends Exception {
        private final String field;

        Invalid(String field, String message) {
            super(message);
            this.field = field;
        }

        HttpResponse<?> problem() {
            return Problem.badRequest(List.of(new Problem.FieldError(field, getMessage())));
        }
    }

    private final Map<String, Object> fields;

    private AdminBody(Map<String, Object> fields) {
        this.fields = fields;
    }

    /** The body as an object holding only {@code known} fields; JsonBody's refusal (400/415) as a problem. */
    @SuppressWarnings("unchecked")
    static AdminBody parse(String contentType, byte[] body, Set<String> known) throws Invalid, JsonBody.Rejected {
        Object tree = JsonBody.parse(contentType, body);
        if (!(tree instanceof Map<?, ?> map)) {
            throw new Invalid("body", "must be a JSON object");
        }
        for (Object key : map.keySet()) {
            if (!known.contains(key)) {
                throw new Invalid(String.valueOf(key), "unknown field (known: " + new java.util.TreeSet<>(known) + ")");
            }
        }
        return new AdminBody((Map<String, Object>) map);
    }

    /** An integer in {@code [min, max]}, or null when absent. */
    Integer integer(String field, int min, int max) throws Invalid {
        Object v = fields.get(field);
        if (v == null) {
            return null;
        }
        return checkedInteger(field, v, min, max);
    }

    private static Integer checkedInteger(String field, Object v, int min, int max) throws Invalid {
        if (!(v instanceof Integer i) || i < min || i > max) {
            throw new Invalid(field, "must be a whole number from " + min + " to " + max + ", not " + describe(v));
        }
        return i;
    }

    /** Text of 1..{@code maxLength} characters without control characters or lone surrogates, or null when absent. */
    String text(String field, int maxLength) throws Invalid {
        Object v = fields.get(field);
        if (v == null) {
            return null;
        }
        if (!(v instanceof String s) || s.isEmpty() || s.length() > maxLength) {
            throw new Invalid(field, "must be text of 1 to " + maxLength + " characters, not " + describe(v));
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean lone = Character.isHighSurrogate(c) && (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1)))
                    || Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
            if (Character.isISOControl(c) || lone) {
                throw new Invalid(field, "must not hold control characters or unpaired surrogates (at index " + i + ")");
            }
        }
        return s;
    }

    /** true or false; required. */
    boolean bool(String field) throws Invalid {
        Object v = fields.get(field);
        if (!(v instanceof Boolean b)) {
            throw new Invalid(field, "must be true or false, not " + describe(v));
        }
        return b;
    }

    /** A list of integers in {@code [min, max]}, or an empty list when absent. */
    List<Integer> integers(String field, int min, int max) throws Invalid {
        Object v = fields.get(field);
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof List<?> list)) {
            throw new Invalid(field, "must be a list of whole numbers, not " + describe(v));
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            out.add(checkedInteger(field + "[" + i + "]", list.get(i), min, max));
        }
        return out;
    }

    private static String describe(Object v) {
        if (v == null) {
            return "null (or absent)";
        }
        String type = v instanceof String ? "text" : v instanceof Boolean ? "a boolean" : v instanceof List ? "a list"
                : v instanceof Map ? "an object" : "the number " + v;
        return type;
    }
}
