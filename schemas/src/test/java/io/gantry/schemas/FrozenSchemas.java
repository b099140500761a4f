package io.gantry.schemas;

import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The released schemas, frozen under {@code src/main/resources/released/v<N>/}: each version a copy of
 * {@code src/main/avro} as it was released, same layout.
 *
 * <p>To freeze: copy the whole current tree to the next version and commit it unchanged,
 * {@code cp -r schemas/src/main/avro schemas/src/main/resources/released/v<N+1>}. Do it at each release and whenever a
 * topic is added (the compatibility test fails until its value schema is frozen). A frozen file is never edited: when
 * the current schemas no longer agree with one, the current schemas are wrong.
 */
final class FrozenSchemas {
    static final Path ROOT = Path.of("src/main/resources/released");

    private static final Pattern VERSION = Pattern.compile("v([1-9][0-9]*)");

    /** One frozen release: its directory name and its schemas by full name. */
    record Version(String name, Map<String, Schema> schemas) {
        @Override
        public String toString() {
            return name;
        }
    }

    private FrozenSchemas() {
    }

    /** The versions frozen in this repository, oldest first (parsed once per test run). */
    static List<Version> released() {
        return Released.VERSIONS;
    }

    private static final class Released {
        static final List<Version> VERSIONS = versions(ROOT);
    }

    /**
     * The versions under {@code root}, in version order ({@code v2} before {@code v10}). Anything else in it is an
     * error, not skipped: a misnamed copy would otherwise be checked against nothing.
     */
    static List<Version> versions(Path root) {
        List<Path> dirs;
        try (Stream<Path> children = Files.list(root)) {
            dirs = children.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Path dir : dirs) {
            if (!Files.isDirectory(dir) || !VERSION.matcher(dir.getFileName().toString()).matches()) {
                throw new IllegalStateException(dir + " is not a frozen version: name each one v<N> (v1, v2, ...)");
            }
        }
        List<Version> versions = new ArrayList<>();
        dirs.stream().sorted(Comparator.comparingInt(FrozenSchemas::number))
                .forEach(dir -> versions.add(new Version(dir.getFileName().toString(), PublishedSchemas.parse(dir))));
        if (versions.isEmpty()) {
            throw new IllegalStateException("no frozen version under " + root);
        }
        return List.copyOf(versions);
    }

    /** The name the next frozen version takes after {@code frozen}. */
    static String nextVersion(List<Version> frozen) {
        return "v" + (frozen.stream().mapToInt(v -> number(Path.of(v.name()))).max().orElse(0) + 1);
    }

    /**
     * One sentence per topic whose value schema no version in {@code frozen} holds, saying how to freeze it: such a
     * schema is checked against nothing, so any change to it would pass. Raw-bytes topics (dead letters) have none.
     */
    static List<String> unfrozenTopicValues(List<Topic<?>> topics, List<Version> frozen) {
        List<String> unfrozen = new ArrayList<>();
        for (Topic<?> topic : topics) {
            if (!SpecificRecord.class.isAssignableFrom(topic.valueType())) {
                continue;
            }
            String value = SpecificData.get().getSchema(topic.valueType()).getFullName();
            if (frozen.stream().noneMatch(v -> v.schemas().containsKey(value))) {
                unfrozen.add(topic.name() + ": its value schema " + value + " is in no frozen version, so a breaking"
                        + " change to it would pass unnoticed. Freeze the current schemas: cp -r schemas/src/main/avro"
                        + " schemas/src/main/resources/released/" + nextVersion(frozen) + " (see FrozenSchemas)");
            }
        }
        return unfrozen;
    }

    private static int number(Path dir) {
        Matcher m = VERSION.matcher(dir.getFileName().toString());
        if (!m.matches()) {
            throw new IllegalArgumentException(dir + " is not a version name");
        }
        return Integer.parseInt(m.group(1));
    }
}
