package io.gantry.schemas;

import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order schemas/README.md gives an outside consumer works with one plain Avro parser: the common files as
 * pom.xml's {@code <imports>} list them, then events/, then topics/; and that list names every common file.
 */
class DocumentedParseOrderTest {
    private static final Path AVRO = Path.of("src/main/avro");

    @Test
    void everyPublishedSchemaParsesInTheDocumentedOrder() throws IOException {
        List<Path> commons = new ArrayList<>();
        Matcher m = Pattern.compile("<import>\\$\\{project.basedir}/src/main/avro/(common/[A-Za-z]+\\.avsc)</import>")
                .matcher(Files.readString(Path.of("pom.xml")));
        while (m.find()) {
            commons.add(AVRO.resolve(m.group(1)));
        }
        try (Stream<Path> all = Files.list(AVRO.resolve("common"))) {
            assertThat(commons).as("pom.xml's <imports> name every common file")
                    .containsExactlyInAnyOrderElementsOf(all.filter(p -> p.toString().endsWith(".avsc")).toList());
        }
        Schema.Parser parser = new Schema.Parser();
        List<Path> order = new ArrayList<>(commons);
        order.addAll(sorted(AVRO.resolve("events")));
        order.addAll(sorted(AVRO.resolve("topics")));
        for (Path p : order) {
            parser.parse(p.toFile());
        }
        assertThat(parser.getTypes()).containsKeys("io.gantry.events.SnapshotEntry", "io.gantry.events.UsageEvent",
                "io.gantry.events.StopEvent");
    }

    private static List<Path> sorted(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".avsc")).sorted().toList();
        }
    }
}
