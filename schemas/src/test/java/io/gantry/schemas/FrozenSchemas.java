package io.gantry.schemas;

import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

import java.io.File;
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
 * {@code src/main/avro} as it was released, same layout. They ship in the jar, where {@link AvroWire} reads them by
 * {@code released/index.txt} to decode records its topics kept from older releases.
 *
 * <p>To freeze: copy the whole current tree to the next version and commit it unchanged,
 * {@code cp -r schemas/src/main/avro schemas/src/main/resources/released/v<N+1>}, then refresh the index
 * ({@link #REFRESH_INDEX}). Do it at each release and whenever a topic is added (the compatibility test fails until its
 * value schema is frozen, the index test until the index lists it). A frozen file is never edited: when the current
 * schemas no longer agree with one, the current schemas are wrong.
 */
final class FrozenSchemas {
    private static final Path RESOURCES = Path.of("src/main/resources");
    static final Path ROOT = RESOURCES.resolve(AvroWire.RELEASED);
    static final Path INDEX = RESOURCES.resolve(AvroWire.RELEASED_INDEX);
    /** Where the index test writes the index the frozen files call for when the committed one differs. */
    static final Path EXPECTED_INDEX = Path.of("target/released-index.txt");
    /** How to bring the committed index up to date (from the repository root, after the schemas tests ran). */
    static final String REFRESH_INDEX = "cp schemas/" + EXPECTED_INDEX + " schemas/" + INDEX;

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
            dirs = children.filter(p -> !p.getFileName().toString().startsWith("."))
                    .filter(p -> !(Files.isRegularFile(p) && p.getFileName().equals(INDEX.getFileName()))).toList();
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

    /**
     * The index {@link AvroWire} reads the frozen files under {@code root} by: every {@code .avsc} file, relative to
     * {@code root}, version by version in version order, each version's files in an order one parser reads them in (a
     * type before the files that use it), since each version is parsed with its own named types.
     */
    static String index(Path root) {
        StringBuilder index = new StringBuilder()
                .append("# The frozen schema files AvroWire registers, in the order each version is parsed in\n")
                .append("# (a type before the files that use it). Generated from the directories beside it; do\n")
                .append("# not edit. After a freeze, run the schemas tests and: ").append(REFRESH_INDEX).append('\n');
        for (Version version : versions(root)) {
            Path dir = root.resolve(version.name());
            PublishedSchemas.parseInOrder(dir).keySet().forEach(file -> index
                    .append(root.relativize(file).toString().replace(File.separatorChar, '/')).append('\n'));
        }
        return index.toString();
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
                        + " schemas/src/main/resources/released/" + nextVersion(frozen) + ", run the schemas tests and"
                        + " refresh the index they write: " + REFRESH_INDEX + " (see FrozenSchemas)");
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
