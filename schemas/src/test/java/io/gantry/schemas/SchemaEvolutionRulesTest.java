package io.gantry.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The compatibility rule bites: a copy of the current schemas with one deliberate change is checked by the same code
 * as the real ones, against the real frozen versions, so that check cannot pass by checking nothing. Nothing here
 * writes to the frozen directories.
 */
class SchemaEvolutionRulesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NS = "io.gantry.events.";

    @TempDir
    Path tree;

    /** A change to the copy of src/main/avro under test. */
    @FunctionalInterface
    interface Change {
        void apply(Path tree) throws IOException;
    }

    static Stream<Arguments> breakingChanges() {
        return Stream.of(
                Arguments.of("removing a field that has no default: v2 readers of the stop notice cannot do without it",
                        edit("events/RunStopRequested.avsc", removeField("deadline")),
                        Set.of("RunStopRequested", "StopEvent"),
                        List.of(NS + "RunStopRequested: v2 cannot read data written with the current schema: "
                                + "READER_FIELD_MISSING_DEFAULT_VALUE deadline")),
                Arguments.of("adding a field without a default: faults reported before it cannot be read",
                        edit("events/DeviceFaultReported.avsc",
                                addField("{\"name\": \"severity\", \"type\": \"int\", \"doc\": \"How bad.\"}")),
                        Set.of("DeviceFaultReported", "DeviceEvent"),
                        List.of(NS + "DeviceFaultReported: the current schema cannot read data written with v2: "
                                + "READER_FIELD_MISSING_DEFAULT_VALUE severity")),
                Arguments.of("removing a symbol from an enum without a default symbol: older waits cannot be read",
                        edit("common/WaitReason.avsc", removeSymbolAndDefault("NEVER_FITS")),
                        Set.of("WaitReason", "JobWaiting", "QueueJobEvent"),
                        List.of(NS + "WaitReason: the current schema cannot read data written with v1: "
                                        + "MISSING_ENUM_SYMBOLS [NEVER_FITS]",
                                NS + "WaitReason: the current schema cannot read data written with v2: "
                                        + "MISSING_ENUM_SYMBOLS [NEVER_FITS]")),
                Arguments.of("changing a field's type: neither side reads the other",
                        edit("events/CheckpointCommitted.avsc", fieldType("step", "\"string\"")),
                        Set.of("CheckpointCommitted", "CheckpointEvent"),
                        List.of(NS + "CheckpointCommitted: the current schema cannot read data written with v2: "
                                        + "TYPE_MISMATCH",
                                NS + "CheckpointCommitted: v2 cannot read data written with the current schema: "
                                        + "TYPE_MISMATCH")),
                Arguments.of("widening int to long: the current reader copes, but readers of v1 and v2 do not",
                        edit("events/JobWaiting.avsc", fieldType("attempt", "\"long\"")),
                        Set.of("JobWaiting", "QueueJobEvent"),
                        List.of(NS + "JobWaiting: v1 cannot read data written with the current schema: TYPE_MISMATCH",
                                NS + "JobWaiting: v2 cannot read data written with the current schema: TYPE_MISMATCH")),
                Arguments.of("a new payload in a released topic's union: its readers meet a branch they do not know",
                        edit("topics/QueueJobEvent.avsc", addUnionBranch("payload", NS + "JobIdleWarned")),
                        Set.of("QueueJobEvent"),
                        List.of(NS + "QueueJobEvent: v1 cannot read data written with the current schema: "
                                        + "MISSING_UNION_BRANCH",
                                NS + "QueueJobEvent: v2 cannot read data written with the current schema: "
                                        + "MISSING_UNION_BRANCH")),
                Arguments.of("removing a released schema",
                        (Change) t -> Files.delete(t.resolve("topics/UtilisationEvent.avsc")),
                        Set.of("UtilisationEvent"),
                        List.of(NS + "UtilisationEvent is frozen in v2 but gone from src/main/avro")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("breakingChanges")
    void aBreakingChangeIsReportedWithTheSchemaAndAvrosReason(String name, Change change, Set<String> reported,
                                                             List<String> expected) throws IOException {
        List<String> problems = CompatibilityMode.GANTRY.problems(currentWith(change), FrozenSchemas.released());

        assertThat(problems.stream().map(SchemaEvolutionRulesTest::schemaOf).collect(Collectors.toSet()))
                .as("the changed schema and every schema that carries it, nothing else; problems: %s", problems)
                .isEqualTo(reported.stream().map(s -> NS + s).collect(Collectors.toSet()));
        for (String sentence : expected) {
            assertThat(problems).anySatisfy(p -> assertThat(p).startsWith(sentence));
        }
    }

    @Test
    void anOptionalFieldWithADefaultIsCompatibleWithEveryFrozenVersion() throws IOException {
        Change since = edit("events/JobWaiting.avsc", addField("""
                {"name": "since", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}],
                 "default": null, "doc": "When the job started waiting; null in records written before."}"""));

        assertThat(CompatibilityMode.GANTRY.problems(currentWith(since), FrozenSchemas.released())).isEmpty();
    }

    @Test
    void aWideningThatOnlyBackwardCompatibilityAcceptsIsRefusedBecauseTheModeIsFull() throws IOException {
        Map<String, Schema> widened = currentWith(edit("events/JobWaiting.avsc", fieldType("attempt", "\"long\"")));

        assertThat(CompatibilityMode.BACKWARD_TRANSITIVE.problems(widened, FrozenSchemas.released())).isEmpty();
        assertThat(CompatibilityMode.GANTRY.problems(widened, FrozenSchemas.released())).isNotEmpty();
    }

    @Test
    void removingAFieldThatGainedADefaultOnlyAfterV1IsRefusedBecauseTheModeIsTransitive() {
        String name = NS + "Sample";
        var v1 = new FrozenSchemas.Version("v1", Map.of(name, sample("{\"name\": \"x\", \"type\": \"int\"}")));
        var v2 = new FrozenSchemas.Version("v2",
                Map.of(name, sample("{\"name\": \"x\", \"type\": \"int\", \"default\": 0}")));
        Map<String, Schema> current = Map.of(name, sample());

        assertThat(CompatibilityMode.FULL.problems(current, List.of(v1, v2))).as("against v2 alone").isEmpty();
        assertThat(CompatibilityMode.GANTRY.problems(current, List.of(v1, v2))).singleElement().asString()
                .startsWith(name + ": v1 cannot read data written with the current schema: "
                        + "READER_FIELD_MISSING_DEFAULT_VALUE x");
    }

    @Test
    void withOnlyV1FrozenTheGuardNamesEveryTopicAddedSinceAndSaysHowToFreezeIt() {
        List<FrozenSchemas.Version> onlyV1 = FrozenSchemas.released().subList(0, 1);

        List<String> unfrozen = FrozenSchemas.unfrozenTopicValues(Topics.all(), onlyV1);

        assertThat(unfrozen).as("every event topic but the 7 v1 froze, and the snapshot topics")
                .hasSize(Topics.eventTopics().size() - 7 + Topics.snapshotTopics().size());
        assertThat(unfrozen).anySatisfy(m -> assertThat(m)
                .startsWith("placement.stop-events: its value schema " + NS + "StopEvent is in no frozen version")
                .contains("cp -r schemas/src/main/avro schemas/src/main/resources/released/v2"));
        assertThat(unfrozen).noneSatisfy(m -> assertThat(m).startsWith("queue.job-events"));
    }

    @Test
    void frozenVersionsAreReadInVersionOrderAndAStrayDirectoryIsAnError(@TempDir Path root) throws IOException {
        for (String version : List.of("v10", "v2", "v1")) {
            Files.createDirectories(root.resolve(version));
            Files.writeString(root.resolve(version).resolve("Sample.avsc"), sample().toString());
        }

        assertThat(FrozenSchemas.versions(root)).extracting(FrozenSchemas.Version::name)
                .containsExactly("v1", "v2", "v10");
        assertThat(FrozenSchemas.nextVersion(FrozenSchemas.versions(root))).isEqualTo("v11");

        Files.createDirectories(root.resolve("v3-draft"));
        assertThatThrownBy(() -> FrozenSchemas.versions(root)).hasMessageContaining("v3-draft")
                .hasMessageContaining("v<N>");
    }

    /** The current schemas as an outside consumer parses them, after {@code change} to a copy of them. */
    private Map<String, Schema> currentWith(Change change) throws IOException {
        try (Stream<Path> files = Files.walk(SchemaCompatibilityTest.CURRENT)) {
            for (Path f : files.toList()) {
                Path copy = tree.resolve(SchemaCompatibilityTest.CURRENT.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(f, copy);
                }
            }
        }
        change.apply(tree);
        return PublishedSchemas.parse(tree);
    }

    private static Change edit(String file, Consumer<ObjectNode> change) {
        return tree -> {
            Path f = tree.resolve(file);
            ObjectNode schema = (ObjectNode) JSON.readTree(f.toFile());
            change.accept(schema);
            JSON.writerWithDefaultPrettyPrinter().writeValue(f.toFile(), schema);
        };
    }

    private static Consumer<ObjectNode> removeField(String name) {
        return schema -> {
            ArrayNode fields = (ArrayNode) schema.get("fields");
            fields.remove(indexOf(fields, name));
        };
    }

    private static Consumer<ObjectNode> addField(String json) {
        return schema -> ((ArrayNode) schema.get("fields")).add(parse(json));
    }

    private static Consumer<ObjectNode> fieldType(String name, String typeJson) {
        return schema -> {
            ArrayNode fields = (ArrayNode) schema.get("fields");
            ((ObjectNode) fields.get(indexOf(fields, name))).set("type", parse(typeJson));
        };
    }

    private static Consumer<ObjectNode> addUnionBranch(String field, String branch) {
        return schema -> {
            ArrayNode fields = (ArrayNode) schema.get("fields");
            ((ArrayNode) fields.get(indexOf(fields, field)).get("type")).add(branch);
        };
    }

    private static Consumer<ObjectNode> removeSymbolAndDefault(String symbol) {
        return schema -> {
            ArrayNode symbols = (ArrayNode) schema.get("symbols");
            for (int i = 0; i < symbols.size(); i++) {
                if (symbols.get(i).asText().equals(symbol)) {
                    symbols.remove(i);
                    schema.remove("default");
                    return;
                }
            }
            throw new IllegalArgumentException("no symbol " + symbol);
        };
    }

    /** Where the field {@code name} is; a change to a field that does not exist must not pass as a harmless one. */
    private static int indexOf(ArrayNode fields, String name) {
        for (int i = 0; i < fields.size(); i++) {
            if (fields.get(i).get("name").asText().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no field " + name);
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    private static String schemaOf(String problem) {
        return problem.split("[: ]", 2)[0];
    }

    private static Schema sample(String... fields) {
        return new Schema.Parser().parse("{\"type\": \"record\", \"name\": \"Sample\", \"namespace\": \"io.gantry.events\","
                + " \"fields\": [" + String.join(", ", fields) + "]}");
    }
}
