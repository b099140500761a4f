package io.gantry.billing.money;

import io.gantry.billing.core.PriceBook;
import io.gantry.billing.core.PriceBookParser;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class ExactYamlTest {
    @Test
    void theExamplePriceBookIsReadWithItsDecimalsAndDatesExactlyAsWritten() throws Exception {
        Object tree = ExactYaml.load(Files.readString(Path.of("price-book.example.yml")));
        PriceBook book = PriceBookParser.parse(tree, Set.of());

        assertThat(book.currency()).isEqualTo("EUR");
        assertThat(book.gpuPrice("H100", null, Instant.parse("2026-06-30T23:59:59.999Z")).toPlainString())
                .isEqualTo("2.5");
        assertThat(book.memoryPrice(Instant.parse("2026-03-01T00:00:00Z")).toPlainString()).isEqualTo("0.005");
        assertThat(book.factor("research", "preemptible", Instant.parse("2026-03-01T00:00:00Z")).toPlainString())
                .isEqualTo("0.54");
        assertThat(book.migPrice("A100", "1g.10gb", Instant.parse("2026-03-01T00:00:00Z")).toPlainString())
                .isEqualTo("0.2");
    }

    @Test
    void aDuplicateKeyIsAnErrorNotASilentOverride() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExactYaml.load("currency: EUR\ncurrency: USD\n"))
                .isInstanceOfSatisfying(RuntimeException.class, e -> assertThat(ExactYaml.problem(e))
                        .as("says which key, and where").isEqualTo("found duplicate key currency (line 2, column 1)"));
    }
}
