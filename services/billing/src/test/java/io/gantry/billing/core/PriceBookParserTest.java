package io.gantry.billing.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PriceBookParserTest {
    static Map<String, Object> h100(Object price, String from) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model", "H100");
        m.put("perGpuHour", price);
        m.put("effectiveFrom", from);
        return m;
    }

    static Map<String, Object> doc(Object... gpu) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("currency", "EUR");
        m.put("gpu", List.of(gpu));
        return m;
    }

    @Test
    void theSameEntriesInAnotherOrderAreTheSamePricesAndAnotherPriceIsNot() {
        PriceBook book = PriceBookParser.parse(doc(h100("2.50", "2026-01-01T00:00:00Z"), h100(3,
                "2026-06-01T00:00:00Z")), Set.of("H100"));
        PriceBook reversed = PriceBookParser.parse(doc(h100(3, "2026-06-01T00:00:00Z"), h100("2.5",
                "2026-01-01T00:00:00Z")), Set.of("H100")).withVersion(7);
        PriceBook other = PriceBookParser.parse(doc(h100("2.50", "2026-01-01T00:00:00Z"), h100("3.10",
                "2026-06-01T00:00:00Z")), Set.of("H100"));

        assertThat(reversed.samePrices(book)).isTrue();
        assertThat(other.samePrices(book)).isFalse();
        assertThat(PriceBookParser.parse(doc(h100("2.50", "2026-01-01T00:00:00Z")), Set.of("H100")).samePrices(book))
                .as("an entry fewer").isFalse();
    }

    @Test
    void aValidBookIsReadWithExactPricesAndWrittenBackTheSame() {
        Map<String, Object> d = doc(h100("2.50", "2026-01-01T00:00:00Z"), h100(3, "2026-06-01T00:00:00Z"));
        d.put("cpu", List.of(Map.of("perCoreHour", new BigDecimal("0.04"), "effectiveFrom", "2026-01-01T00:00:00Z")));
        d.put("multipliers", List.of(Map.of("priorityClass", "preemptible", "factor", "0.6",
                "effectiveFrom", "2026-01-01T00:00:00Z")));
        PriceBook book = PriceBookParser.parse(d, Set.of("H100"));

        assertThat(book.gpuPrice("H100", null, Instant.parse("2026-05-31T23:59:59.999Z"))).isEqualByComparingTo("2.5");
        assertThat(book.gpuPrice("H100", null, Instant.parse("2026-06-01T00:00:00Z"))).isEqualByComparingTo("3");
        assertThat(book.gpuPrice("H100", null, Instant.parse("2025-12-31T00:00:00Z"))).isNull();
        assertThat(PriceBookParser.parse(PriceBookParser.toTree(book), Set.of())).isEqualTo(book);
        List<?> gpu = (List<?>) PriceBookParser.toTree(book).get("gpu");
        assertThat(gpu.stream().map(m -> (Object) ((Map<?, ?>) m).get("perGpuHour")).toList())
                .as("prices shown with at least the currency's minor digits").containsExactly((Object) "2.50", "3.00");
        assertThat(Money.text(new BigDecimal("2.4375"), 2)).as("never rounded").isEqualTo("2.4375");
    }

    static Stream<Arguments> badBooks() {
        return Stream.of(
                Arguments.of("a negative price", doc(h100("-1", "2026-01-01T00:00:00Z")), "gpu[0].perGpuHour"),
                Arguments.of("two prices for one model from the same instant",
                        doc(h100("1", "2026-01-01T00:00:00Z"), h100("2", "2026-01-01T00:00:00Z")),
                        "gpu[1].effectiveFrom"),
                Arguments.of("a price as a binary floating-point number", doc(h100(2.5d, "2026-01-01T00:00:00Z")),
                        "gpu[0].perGpuHour"),
                Arguments.of("more than six decimals", doc(h100("0.0000001", "2026-01-01T00:00:00Z")),
                        "gpu[0].perGpuHour"),
                Arguments.of("a date that is not an instant", doc(h100("1", "next monday")), "gpu[0].effectiveFrom"),
                Arguments.of("an unknown field", doc(Map.of("model", "H100", "perGpuHour", "1", "effectiveFrom",
                        "2026-01-01T00:00:00Z", "discount", "5")), "gpu[0].discount"),
                Arguments.of("no currency", Map.of("gpu", List.of()), "currency"),
                Arguments.of("a made-up currency", Map.of("currency", "EURO"), "currency"),
                Arguments.of("a multiplier naming both queue and class", Map.of("currency", "EUR", "multipliers",
                        List.of(Map.of("queue", "q", "priorityClass", "c", "factor", "1",
                                "effectiveFrom", "2026-01-01T00:00:00Z"))), "multipliers[0].priorityClass"),
                Arguments.of("a negative CPU rate", Map.of("currency", "EUR", "cpu", List.of(Map.of("perCoreHour",
                        "-0.1", "effectiveFrom", "2026-01-01T00:00:00Z"))), "cpu[0].perCoreHour"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("badBooks")
    void badBooksAreRefusedNamingTheField(String name, Object tree, String field) {
        assertThatThrownBy(() -> PriceBookParser.parse(tree, Set.of()))
                .isInstanceOfSatisfying(InvalidInput.class, e ->
                        assertThat(e.fields()).extracting(InvalidInput.Field::field).contains(field));
    }

    @Test
    void aModelNoNodeHasIsRefusedOnceModelsAreKnown() {
        Object tree = doc(h100("1", "2026-01-01T00:00:00Z"));
        assertThatThrownBy(() -> PriceBookParser.parse(tree, Set.of("A100")))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .extracting(InvalidInput.Field::field).containsExactly("gpu[0].model"));
        assertThat(PriceBookParser.parse(tree, Set.of()).gpu()).hasSize(1);
    }

    static final Instant NOW = Instant.parse("2026-06-15T00:00:00Z");

    static PriceBook v1() {
        return PriceBookParser.parse(doc(h100("2.50", "2026-01-01T00:00:00Z")), Set.of()).withVersion(1);
    }

    @Test
    void aNewPriceFromAFutureDateIsAccepted() {
        PriceBook next = PriceBookParser.parse(doc(h100("2.50", "2026-01-01T00:00:00Z"),
                h100("3.00", "2026-07-01T00:00:00Z")), Set.of());
        PriceBook.requireNoRetroactiveChange(v1(), next, NOW);
    }

    static Stream<Arguments> retroactive() {
        return Stream.of(
                Arguments.of("changing a price already in force", doc(h100("2.00", "2026-01-01T00:00:00Z")), "gpu"),
                Arguments.of("adding a price from a past date",
                        doc(h100("2.50", "2026-01-01T00:00:00Z"), h100("3.00", "2026-06-01T00:00:00Z")),
                        "gpu[1].effectiveFrom"),
                Arguments.of("dropping a price in force", doc(h100("3.00", "2026-07-01T00:00:00Z")), "gpu"),
                Arguments.of("changing the currency", Map.of("currency", "USD", "gpu",
                        List.of(h100("2.50", "2026-01-01T00:00:00Z"))), "currency"));
    }

    @ParameterizedTest(name = "refuses {0}")
    @MethodSource("retroactive")
    void aChangeNeverAppliesRetroactively(String name, Object tree, String field) {
        PriceBook next = PriceBookParser.parse(tree, Set.of());
        assertThatThrownBy(() -> PriceBook.requireNoRetroactiveChange(v1(), next, NOW))
                .isInstanceOfSatisfying(InvalidInput.class, e ->
                        assertThat(e.fields()).extracting(InvalidInput.Field::field).contains(field));
    }

    @Test
    void aRefusedChangeNamesTheEntryInForceAsTheBookWritesIt() {
        PriceBook next = PriceBookParser.parse(doc(h100("2.00", "2026-01-01T00:00:00Z")), Set.of());
        assertThatThrownBy(() -> PriceBook.requireNoRetroactiveChange(v1(), next, NOW))
                .isInstanceOfSatisfying(InvalidInput.class, e -> assertThat(e.fields())
                        .filteredOn(f -> f.field().equals("gpu")).singleElement()
                        .satisfies(f -> assertThat(f.message()).contains("(gpu H100 at 2.50 per GPU-hour from "
                                + "2026-01-01T00:00:00Z)").doesNotContain("GpuPrice[")));
    }

    @Test
    void theFirstBookMayPriceThePast() {
        PriceBook first = PriceBookParser.parse(doc(h100("2.50", "2020-01-01T00:00:00Z")), Set.of());
        PriceBook.requireNoRetroactiveChange(PriceBook.empty("EUR"), first, NOW);
    }
}
