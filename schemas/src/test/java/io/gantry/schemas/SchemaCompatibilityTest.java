package io.gantry.schemas;

import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The current schemas against the released ones frozen in this repository, in Gantry's compatibility mode
 * ({@link CompatibilityMode#GANTRY}), and what readers of each release see of the facts added since.
 */
class SchemaCompatibilityTest {
    static final Path CURRENT = Path.of("src/main/avro");
    static final Path RELEASED = FrozenSchemas.ROOT;

    private static final Map<String, Schema> CURRENT_SCHEMAS = PublishedSchemas.parse(CURRENT);

    /** Every (frozen version, schema) pair Gantry's compatibility mode checks, oldest version first. */
    static Stream<Arguments> frozenSchemas() {
        return CompatibilityMode.GANTRY.versionsToCheck(FrozenSchemas.released()).stream().flatMap(version ->
                version.schemas().keySet().stream().map(name -> Arguments.of(name, version, CompatibilityMode.GANTRY)));
    }

    @ParameterizedTest(name = "{0} of {1} and its current version read each other''s data ({2})")
    @MethodSource("frozenSchemas")
    void everyFrozenSchemaAndItsCurrentVersionReadEachOthersData(String name, FrozenSchemas.Version version,
                                                                  CompatibilityMode mode) {
        List<String> problems = mode.problems(name, CURRENT_SCHEMAS.get(name), version.schemas().get(name),
                version.name());

        assertThat(problems).withFailMessage("%s", String.join("\n", problems)).isEmpty();
    }

    @Test
    void everyTopicsValueSchemaIsFrozenInSomeReleasedVersionSoNoChangeToItEscapesTheCheck() {
        List<String> unfrozen = FrozenSchemas.unfrozenTopicValues(Topics.all(), FrozenSchemas.released());

        assertThat(unfrozen).withFailMessage("%s", String.join("\n", unfrozen)).isEmpty();
    }

    @Test
    void aJobSpecWrittenBeforeTheTaskRuntimeFieldsReadsWithNoEnvNoImageNoMountsAndTheDefaultSuccessPolicy()
            throws java.io.IOException {
        Map<String, Schema> released = PublishedSchemas.parse(RELEASED.resolve("v1"));
        Schema oldJob = released.get("io.gantry.events.JobSpec");
        Schema oldTask = released.get("io.gantry.events.TaskSpec");
        org.apache.avro.generic.GenericRecord task = new org.apache.avro.generic.GenericRecordBuilder(oldTask)
                .set("name", "worker").set("replicas", 2).set("command", List.of("python", "train.py"))
                .set("gpus", 4).set("gpuModel", null).set("cpuMillis", 1000).set("memoryMiB", 1024L)
                .set("runSeconds", null).build();
        org.apache.avro.generic.GenericRecord job = new org.apache.avro.generic.GenericRecordBuilder(oldJob)
                .set("name", "old").set("priority", 0).set("timeLimitSeconds", null).set("tasks", List.of(task))
                .build();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(bytes, null);
        new org.apache.avro.generic.GenericDatumWriter<org.apache.avro.generic.GenericRecord>(oldJob).write(job, encoder);
        encoder.flush();

        io.gantry.events.JobSpec read = new org.apache.avro.specific.SpecificDatumReader<io.gantry.events.JobSpec>(
                oldJob, io.gantry.events.JobSpec.getClassSchema()).read(null,
                org.apache.avro.io.DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));

        assertThat(read.getSuccessPolicy()).isNull();
        assertThat(read.getPool()).as("no pool named: the queue chooses").isNull();
        io.gantry.events.TaskSpec t = read.getTasks().get(0);
        assertThat(t.getEnv()).isEmpty();
        assertThat(t.getWorkingDir()).isNull();
        assertThat(t.getImage()).isNull();
        assertThat(t.getMounts()).isEmpty();
        assertThat(t.getCommand()).containsExactly("python", "train.py");
    }

    @Test
    void aJobSpecWrittenBeforeDependenciesAndSuspendReadsAsNoDependenciesAndNotSuspended() throws java.io.IOException {
        io.gantry.events.JobSpec read = aV1JobSpecReadNow();

        assertThat(read.getDependencies()).isEmpty();
        assertThat(read.getSuspend()).isFalse();
    }

    @Test
    void aReaderThatPredatesTheNewWaitAndPreemptionReasonsSeesTheirDocumentedDefaults() throws java.io.IOException {
        Map<String, Schema> released = PublishedSchemas.parse(RELEASED.resolve("v1"));
        Schema current = io.gantry.events.JobWaiting.getClassSchema();
        for (String symbol : List.of("DEPENDENCY", "SUSPENDED")) {
            org.apache.avro.generic.GenericRecord waiting = new org.apache.avro.generic.GenericRecordBuilder(current)
                    .set("tenant", "a").set("attempt", 1).set("message", "m")
                    .set("reason", new org.apache.avro.generic.GenericData.EnumSymbol(
                            current.getField("reason").schema(), symbol)).build();
            org.apache.avro.generic.GenericRecord old = readAs(current, waiting,
                    released.get("io.gantry.events.JobWaiting"));
            assertThat(old.get("reason").toString()).as(symbol).isEqualTo("CAPACITY");
        }
        // PreemptionReason came after v1; a reader from before SUSPENDED falls back to its default
        assertThat(io.gantry.events.PreemptionReason.getClassSchema().getEnumDefault()).isEqualTo("PRIORITY");
    }

    /** A one-task job spec written with the released v1 schema, read with the current one. */
    private static io.gantry.events.JobSpec aV1JobSpecReadNow() throws java.io.IOException {
        Map<String, Schema> released = PublishedSchemas.parse(RELEASED.resolve("v1"));
        Schema oldJob = released.get("io.gantry.events.JobSpec");
        org.apache.avro.generic.GenericRecord task = new org.apache.avro.generic.GenericRecordBuilder(
                released.get("io.gantry.events.TaskSpec")).set("name", "worker").set("replicas", 1)
                .set("command", List.of("true")).set("gpus", 1).set("gpuModel", null).set("cpuMillis", 1000)
                .set("memoryMiB", 1024L).set("runSeconds", null).build();
        org.apache.avro.generic.GenericRecord job = new org.apache.avro.generic.GenericRecordBuilder(oldJob)
                .set("name", "old").set("priority", 0).set("timeLimitSeconds", null).set("tasks", List.of(task))
                .build();
        return readAs(oldJob, job, io.gantry.events.JobSpec.getClassSchema());
    }

    @SuppressWarnings("unchecked")
    private static <T> T readAs(Schema writer, Object datum, Schema reader) throws java.io.IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(bytes, null);
        new org.apache.avro.generic.GenericDatumWriter<Object>(writer).write(datum, encoder);
        encoder.flush();
        var decoder = org.apache.avro.io.DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null);
        // into the generated class when the reader is a current schema, else into a generic record
        Class<?> generated = org.apache.avro.specific.SpecificData.get().getClass(reader);
        if (generated != null && org.apache.avro.specific.SpecificData.get().getSchema(generated) == reader) {
            return (T) new org.apache.avro.specific.SpecificDatumReader<Object>(writer, reader).read(null, decoder);
        }
        return (T) new org.apache.avro.generic.GenericDatumReader<Object>(writer, reader).read(null, decoder);
    }

    @Test
    void aJobHeldForBudgetReadsAsWaitingForCapacityWithAReaderOfV1() throws java.io.IOException {
        Schema oldWaiting = PublishedSchemas.parse(RELEASED.resolve("v1")).get("io.gantry.events.JobWaiting");
        io.gantry.events.JobWaiting held = io.gantry.events.JobWaiting.newBuilder().setTenant("vision").setAttempt(1)
                .setReason(io.gantry.events.WaitReason.BUDGET)
                .setMessage("held: the monthly budget of tenant vision is exhausted").build();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        org.apache.avro.io.BinaryEncoder encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(bytes, null);
        new org.apache.avro.specific.SpecificDatumWriter<io.gantry.events.JobWaiting>(
                io.gantry.events.JobWaiting.getClassSchema()).write(held, encoder);
        encoder.flush();

        org.apache.avro.generic.GenericRecord read = new org.apache.avro.generic.GenericDatumReader<
                org.apache.avro.generic.GenericRecord>(io.gantry.events.JobWaiting.getClassSchema(), oldWaiting)
                .read(null, org.apache.avro.io.DecoderFactory.get().binaryDecoder(bytes.toByteArray(), null));

        assertThat(read.get("reason").toString()).isEqualTo("CAPACITY");
        assertThat(read.get("message").toString()).startsWith("held: ");
    }

    @Test
    void aNodeRegisteredBeforePoolsReadsAsThePoolDefaultAndANodeOfAPoolReadsWithV1() throws java.io.IOException {
        Schema old = PublishedSchemas.parse(RELEASED.resolve("v1")).get("io.gantry.events.NodeRegistered");
        org.apache.avro.generic.GenericRecord before = new org.apache.avro.generic.GenericRecordBuilder(old)
                .set("gpus", List.of()).set("cpuMillis", 1000).set("memoryMiB", 1024L).set("labels", Map.of())
                .set("backend", "simulated").build();
        io.gantry.events.NodeRegistered read = readAs(old, before, io.gantry.events.NodeRegistered.getClassSchema());
        assertThat(read.getPool()).isEqualTo("default");

        io.gantry.events.NodeRegistered inPool = io.gantry.events.NodeRegistered.newBuilder(read).setPool("gpu").build();
        org.apache.avro.generic.GenericRecord v1 = readAs(io.gantry.events.NodeRegistered.getClassSchema(), inPool, old);
        assertThat(v1.get("backend").toString()).isEqualTo("simulated");
    }

    @Test
    void aJobSpecWrittenBeforeInteractiveReadsAsInteractiveSoOnlyQueuesThatOptedInReclaimIt() throws java.io.IOException {
        io.gantry.events.JobSpec read = aV1JobSpecReadNow();

        assertThat(read.getInteractive()).isTrue();
        assertThat(read.getPool()).as("no pool named: the queue's map chooses").isNull();
    }

    @Test
    void aReaderOfV1SeesAnIdleReleaseAsRunFailedAndTheIdleReasonsHaveTheirDocumentedDefaults()
            throws java.io.IOException {
        Map<String, Schema> released = PublishedSchemas.parse(RELEASED.resolve("v1"));
        Schema current = io.gantry.events.ReleaseReason.getClassSchema();
        Object read = readAs(current, new org.apache.avro.generic.GenericData.EnumSymbol(current, "IDLE"),
                released.get("io.gantry.events.ReleaseReason"));
        assertThat(read.toString()).isEqualTo("RUN_FAILED");
        // PreemptionReason and FailureReason came after v1: a reader from before IDLE falls back to its default
        assertThat(io.gantry.events.PreemptionReason.getClassSchema().getEnumDefault()).isEqualTo("PRIORITY");
        assertThat(io.gantry.events.FailureReason.getClassSchema().getEnumDefault()).isEqualTo("RUN_FAILED");
        Schema failure = io.gantry.events.FailureReason.getClassSchema();
        Schema beforeIdle = new Schema.Parser().parse(failure.toString().replace(",\"IDLE\"", ""));
        assertThat(readAs(failure, new org.apache.avro.generic.GenericData.EnumSymbol(failure, "IDLE"), beforeIdle)
                .toString()).isEqualTo("RUN_FAILED");
    }

    @Test
    void idleWarningsTravelOnATopicOfTheirOwnSoNoReleasedEnvelopeGainsAUnionBranch() {
        assertThat(Topics.QUEUE_IDLE_EVENTS.name()).isEqualTo("queue.idle-events");
        assertThat(io.gantry.events.IdleEvent.getClassSchema().getField("payload").schema().getTypes())
                .extracting(Schema::getName).containsExactly("JobIdleWarned", "JobIdleCleared");
        assertThat(io.gantry.events.QueueJobEvent.getClassSchema().getField("payload").schema().getTypes())
                .extracting(Schema::getName).doesNotContain("JobIdleWarned", "JobIdleCleared");
    }

    @Test
    void everyTypeAndFieldIsDocumentedEveryEnumSymbolIsExplainedAndEveryEnumHasADefaultInlineTypesIncluded() {
        Map<String, Schema> types = namedTypes(CURRENT_SCHEMAS.values());
        assertThat(types).as("types defined inside another type's file are checked too")
                .containsKeys("io.gantry.events.PlacementPool", "io.gantry.events.DependencyCondition");
        List<String> missing = new ArrayList<>();
        types.values().forEach(s -> {
            if (s.getDoc() == null || s.getDoc().isBlank()) {
                missing.add(s.getFullName() + " has no doc");
            }
            if (s.getType() == Schema.Type.RECORD) {
                s.getFields().forEach(f -> {
                    if (f.doc() == null || f.doc().isBlank()) {
                        missing.add(s.getFullName() + "." + f.name() + " has no doc");
                    }
                });
            }
            if (s.getType() == Schema.Type.ENUM) {
                if (s.getEnumDefault() == null) {
                    missing.add(s.getFullName() + " has no default symbol");
                }
                // Avro has no doc per symbol: the enum's doc says what each one means
                s.getEnumSymbols().stream()
                        .filter(symbol -> s.getDoc() == null
                                || !Pattern.compile("\\b" + symbol + "\\b").matcher(s.getDoc()).find())
                        .forEach(symbol -> missing.add(s.getFullName() + "." + symbol + " is not explained in its doc"));
            }
        });

        assertThat(missing).withFailMessage("%s", String.join("\n", missing)).isEmpty();
    }

    /** Every record, enum and fixed type reachable from {@code roots} by full name, those defined inline included. */
    private static Map<String, Schema> namedTypes(Collection<Schema> roots) {
        Map<String, Schema> found = new LinkedHashMap<>();
        roots.forEach(root -> collectNamed(root, found));
        return found;
    }

    private static void collectNamed(Schema s, Map<String, Schema> found) {
        switch (s.getType()) {
            case RECORD -> {
                if (found.putIfAbsent(s.getFullName(), s) == null) {
                    s.getFields().forEach(f -> collectNamed(f.schema(), found));
                }
            }
            case ENUM, FIXED -> found.putIfAbsent(s.getFullName(), s);
            case ARRAY -> collectNamed(s.getElementType(), found);
            case MAP -> collectNamed(s.getValueType(), found);
            case UNION -> s.getTypes().forEach(t -> collectNamed(t, found));
            default -> {
            }
        }
    }

    @Test
    void theGeneratedClassesAreTheSchemasPublishedInTheRepository() {
        Map<String, Schema> published = PublishedSchemas.parse(CURRENT);
        for (Topic<?> topic : Topics.eventTopics()) {
            Schema generated = org.apache.avro.specific.SpecificData.get().getSchema(topic.valueType());
            // the wire fingerprint is over the parsing canonical form, so that is what must agree
            assertThat(org.apache.avro.SchemaNormalization.parsingFingerprint64(published.get(generated.getFullName())))
                    .as(topic.name()).isEqualTo(org.apache.avro.SchemaNormalization.parsingFingerprint64(generated));
        }
    }
}
