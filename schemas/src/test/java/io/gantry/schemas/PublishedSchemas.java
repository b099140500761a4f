package io.gantry.schemas;

import org.apache.avro.Schema;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Parses a directory of published .avsc files the way an outside consumer would: plain Avro, common types first,
 * retrying files whose references are not parsed yet. Knows nothing of Gantry's generated classes.
 */
final class PublishedSchemas {
    private PublishedSchemas() {
    }

    static Map<String, Schema> parse(Path root) {
        Map<String, Schema> known = new LinkedHashMap<>();
        parseInOrder(root).values().forEach(s -> known.put(s.getFullName(), s));
        return known;
    }

    /**
     * Every .avsc file under {@code root} with its schema, in an order one parser reads them in: each file after the
     * files defining the types it uses (sorted by path, then as many rounds as the references need).
     */
    static Map<Path, Schema> parseInOrder(Path root) {
        List<Path> pending;
        try (Stream<Path> files = Files.walk(root)) {
            pending = new ArrayList<>(files.filter(f -> f.toString().endsWith(".avsc")).sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<Path, Schema> parsed = new LinkedHashMap<>();
        while (!pending.isEmpty()) {
            int before = pending.size();
            for (var it = pending.iterator(); it.hasNext(); ) {
                Path file = it.next();
                Schema.Parser parser = new Schema.Parser();
                parser.addTypes(parsed.values());
                try {
                    parsed.put(file, parser.parse(file.toFile()));
                    it.remove();
                } catch (org.apache.avro.AvroRuntimeException e) {
                    // references a type defined in a file not parsed yet; try again next round
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            if (pending.size() == before) {
                throw new IllegalStateException("unresolvable schemas: " + pending);
            }
        }
        return parsed;
    }
}
