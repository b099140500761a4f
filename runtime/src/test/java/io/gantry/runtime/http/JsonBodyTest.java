package io.gantry.runtime.http;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class JsonBodyTest {

    static Stream<Arguments> refused() {
        return Stream.of(
                arguments("trailing garbage after the document", "application/json", "{\"a\":1} xyz", 400,
                        "more after the JSON document"),
                arguments("a second document", "application/json", "{\"a\":1}{\"a\":2}", 400,
                        "more after the JSON document"),
                arguments("a key twice in one object", "application/json", "{\"name\":\"a\",\"name\":\"b\"}", 400,
                        "Duplicate field 'name'"),
                arguments("a truncated document", "application/json", "{\"name\":\"a\"", 400, "malformed JSON"),
                arguments("an empty body", "application/json", "", 400, "is required"),
                arguments("a missing Content-Type", null, "{}", 415, "Content-Type is required"),
                arguments("an empty Content-Type", "", "{}", 415, "Content-Type is required"),
                arguments("text/plain", "text/plain", "{}", 415, "must be application/json, not text/plain"),
                arguments("a UTF-16 charset label", "application/json; charset=utf-16", "{}", 415,
                        "charset=utf-16 is not accepted"),
                arguments("bytes that are not UTF-8", "application/json", "{\"a\":\"\u00ff\"}", 400, "not valid UTF-8"),
                arguments("nesting 40 deep", "application/json", "[".repeat(40) + "]".repeat(40), 400,
                        "malformed JSON"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("refused")
    void refusesWhatALenientParserWouldHaveGuessedAt(String description, String contentType, String body, int status,
                                                     String message) {
        byte[] bytes = description.contains("not UTF-8") ? body.getBytes(StandardCharsets.ISO_8859_1)
                : body.getBytes(StandardCharsets.UTF_8);
        JsonBody.Rejected r = catchThrowableOfType(() -> JsonBody.parse(contentType, bytes), JsonBody.Rejected.class);

        assertThat(r).as("refused").isNotNull();
        assertThat(r.status()).isEqualTo(status);
        assertThat(r.getMessage()).contains(message);
    }

    @Test
    void readsOneDocumentIntoPlainValuesWithExactNumbers() throws Exception {
        Object tree = JsonBody.parse("application/json; charset=UTF-8", """
                {"name":"x","n":3,"big":99999999999999999999,"f":1e17,"half":0.5,"ok":true,"none":null,"l":[1,"a"]}
                """.getBytes(StandardCharsets.UTF_8));

        assertThat(tree).isInstanceOf(Map.class);
        Map<?, ?> m = (Map<?, ?>) tree;
        assertThat(m.get("n")).isEqualTo(3);
        assertThat(m.get("big")).isEqualTo(new java.math.BigInteger("99999999999999999999"));
        assertThat(m.get("f")).isEqualTo(new BigDecimal("1e17"));
        assertThat(m.get("half")).isEqualTo(new BigDecimal("0.5"));
        assertThat(m.get("ok")).isEqualTo(true);
        assertThat(m.containsKey("none")).isTrue();
        assertThat(m.get("l")).isEqualTo(List.of(1, "a"));
    }

    @Test
    void acceptsVendorJsonTypes() {
        assertThat(JsonBody.contentTypeProblem("application/merge-patch+json")).isEmpty();
        assertThat(JsonBody.contentTypeProblem("Application/JSON;charset=\"utf-8\"")).isEmpty();
    }
}
