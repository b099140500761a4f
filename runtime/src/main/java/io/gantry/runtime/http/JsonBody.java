package io.gantry.runtime.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A request body read strictly: declared as JSON in UTF-8, exactly one JSON document (nothing after it), no key
 * twice in one object, bounded nesting. A lenient parser would let a client believe a field it sent twice, or a
 * body with garbage after it, meant what it did not.
 *
 * <p>The document becomes plain maps, lists, strings, booleans, nulls and numbers (Integer, Long or BigInteger for
 * integers; BigDecimal, exact, for everything with a fraction or exponent), which is what the cores validate.
 */
public final class JsonBody {
    private static final int MAX_DEPTH = 32;
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH)
                    .maxNumberLength(100).build())
            .build();

    private JsonBody() {
    }

    /** Why the body is not JSON we read, with the status to answer; thrown by {@link #parse}. */
    public static final class Rejected extends Exception {
        private final int status;
        private final String field;

        Rejected(int status, String field, String message) {
            super(message);
            this.status = status;
            this.field = field;
        }

        /** 415 for a wrong or missing media type or charset, 400 for a malformed document. */
        public int status() {
            return status;
        }

        public String field() {
            return field;
        }
    }

    /**
     * Why {@code contentType} is not JSON in UTF-8 ({@code application/json} or {@code application/*+json}, with no
     * charset or {@code charset=utf-8}), or empty when it is.
     */
    public static Optional<String> contentTypeProblem(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return Optional.of("Content-Type is required: application/json");
        }
        String[] parts = contentType.split(";");
        String type = parts[0].trim().toLowerCase(Locale.ROOT);
        if (!type.equals("application/json") && !(type.startsWith("application/") && type.endsWith("+json"))) {
            return Optional.of("Content-Type must be application/json, not " + parts[0].trim());
        }
        return charsetProblem(contentType);
    }

    /** Why the {@code charset} of {@code contentType} is not UTF-8 (absent is fine), or empty when it is. */
    public static Optional<String> charsetProblem(String contentType) {
        String[] parts = contentType == null ? new String[0] : contentType.split(";");
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            if (kv[0].trim().equalsIgnoreCase("charset")) {
                String charset = kv.length < 2 ? "" : kv[1].trim().replace("\"", "");
                if (!charset.equalsIgnoreCase("utf-8") && !charset.equalsIgnoreCase("utf8")) {
                    return Optional.of("the body must be UTF-8; charset=" + charset + " is not accepted");
                }
            }
        }
        return Optional.empty();
    }

    /** The body as text: it must be valid UTF-8 (400, field {@code body}, when it is not). */
    public static String utf8(byte[] body) throws Rejected {
        if (!validUtf8(body == null ? new byte[0] : body)) {
            throw new Rejected(400, "body", "is not valid UTF-8");
        }
        return body == null ? "" : new String(body, StandardCharsets.UTF_8);
    }

    /** The media type check, then the document. */
    public static Object parse(String contentType, byte[] body) throws Rejected {
        Optional<String> problem = contentTypeProblem(contentType);
        if (problem.isPresent()) {
            throw new Rejected(415, "Content-Type", problem.get());
        }
        return parse(body);
    }

    /** Exactly one JSON document in UTF-8. */
    public static Object parse(byte[] body) throws Rejected {
        if (body == null || body.length == 0) {
            throw new Rejected(400, "body", "is required (a JSON document)");
        }
        utf8(body);
        try (JsonParser p = FACTORY.createParser(body)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new Rejected(400, "body", "is required (a JSON document)");
            }
            Object value = read(p, first);
            JsonToken after;
            try {
                after = p.nextToken();
            } catch (JsonParseException e) {
                after = JsonToken.NOT_AVAILABLE;
            }
            if (after != null) {
                throw new Rejected(400, "body", "has more after the JSON document (at line "
                        + p.currentLocation().getLineNr() + ", column " + p.currentLocation().getColumnNr() + ")");
            }
            return value;
        } catch (JsonParseException e) {
            throw new Rejected(400, "body", "malformed JSON: " + e.getOriginalMessage());
        } catch (IOException | RuntimeException e) {
            throw new Rejected(400, "body", "malformed JSON: " + firstLine(e.getMessage()));
        }
    }

    private static Object read(JsonParser p, JsonToken t) throws IOException {
        switch (t) {
            case START_OBJECT: {
                Map<String, Object> m = new LinkedHashMap<>();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    m.put(name, read(p, p.nextToken()));
                }
                return m;
            }
            case START_ARRAY: {
                List<Object> l = new ArrayList<>();
                for (JsonToken v = p.nextToken(); v != JsonToken.END_ARRAY; v = p.nextToken()) {
                    l.add(read(p, v));
                }
                return l;
            }
            case VALUE_STRING:
                return p.getText();
            case VALUE_NUMBER_INT:
                return p.getNumberValue();
            case VALUE_NUMBER_FLOAT:
                return p.getDecimalValue();
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return null;
            default:
                throw new JsonParseException(p, "unexpected " + t);
        }
    }

    private static boolean validUtf8(byte[] body) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(body));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    private static String firstLine(String m) {
        String s = String.valueOf(m);
        int nl = s.indexOf('\n');
        s = nl < 0 ? s : s.substring(0, nl);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
