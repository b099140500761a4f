package io.gantry.schemas;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.FailureReason;
import io.gantry.events.GpuDevice;
import io.gantry.events.JobFailed;
import io.gantry.events.JobQueued;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records a topic kept from an older release decode at runtime: {@link AvroWire} knows the writer schema of every
 * frozen envelope, so its deserializer reads them into today's generated classes, fields added since as their
 * documented defaults. Topics keep their records for years and services rebuild their state from them, so a release
 * that could not read its own history would dead-letter it.
 */
class ReleasedRecordsDecodingTest {
    private static final Instant AT = Instant.parse("2025-03-04T05:06:07Z");

    @Test
    void theIndexInTheJarListsEveryFrozenFileInAnOrderEachVersionParsesIn() throws IOException {
        String expected = FrozenSchemas.index(FrozenSchemas.ROOT);
        String committed = Files.exists(FrozenSchemas.INDEX)
                ? Files.readString(FrozenSchemas.INDEX).replace("\r\n", "\n") : "";
        if (!committed.equals(expected)) {
            Files.createDirectories(FrozenSchemas.EXPECTED_INDEX.getParent());
            Files.writeString(FrozenSchemas.EXPECTED_INDEX, expected);
        }

        assertThat(committed).withFailMessage("%s does not list the frozen files as they are now (frozen a version"
                        + " since?), so AvroWire would not register them. The index they call for is written to %s:"
                        + " %s", FrozenSchemas.INDEX, FrozenSchemas.EXPECTED_INDEX, FrozenSchemas.REFRESH_INDEX)
                .isEqualTo(expected);
    }

    @Test
    void everyFrozenEnvelopeSchemaIsRegisteredSoItsFingerprintResolves() {
        List<String> unresolved = new ArrayList<>();
        int envelopes = 0;
        for (FrozenSchemas.Version version : FrozenSchemas.released()) {
            for (Topic<?> topic : Topics.eventTopics()) {
                Schema frozen = version.schemas().get(current(topic).getFullName());
                if (frozen == null) {
                    continue;
                }
                envelopes++;
                long fingerprint = SchemaNormalization.parsingFingerprint64(frozen);
                Schema registered = AvroWire.SCHEMAS.findByFingerprint(fingerprint);
                if (registered == null || SchemaNormalization.parsingFingerprint64(registered) != fingerprint) {
                    unresolved.add(version + " " + topic.name() + " (" + frozen.getFullName() + ")");
                }
            }
        }

        assertThat(envelopes).as("frozen envelopes").isGreaterThanOrEqualTo(Topics.eventTopics().size());
        assertThat(unresolved).as("frozen envelopes whose fingerprint AvroWire cannot resolve").isEmpty();
    }

    /**
     * Every (frozen version, topic, payload) whose envelope differs from the current one: a record written with the
     * frozen schema must be resolved against today's class. Topics whose envelope is unchanged are read as current.
     */
    static Stream<Arguments> olderEnvelopes() {
        List<Arguments> cases = new ArrayList<>();
        for (FrozenSchemas.Version version : FrozenSchemas.released()) {
            for (Topic<?> topic : Topics.eventTopics()) {
                Schema frozen = version.schemas().get(current(topic).getFullName());
                if (frozen == null || SchemaNormalization.parsingFingerprint64(frozen)
                        == SchemaNormalization.parsingFingerprint64(current(topic))) {
                    continue;
                }
                for (Schema payload : frozen.getField("payload").schema().getTypes()) {
                    cases.add(Arguments.of(version, topic, payload.getName()));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "a {2} on {1} written with {0}")
    @MethodSource("olderEnvelopes")
    void aRecordWrittenWithAnOlderEnvelopeDecodesIntoTheCurrentClassWithDefaultsForTheFieldsAddedSince(
            FrozenSchemas.Version version, Topic<?> topic, String payload) throws IOException {
        Schema frozen = version.schemas().get(current(topic).getFullName());
        GenericRecord written = new GenericData.Record(frozen);
        for (Schema.Field field : frozen.getFields()) {
            written.put(field.pos(), field.name().equals("payload")
                    ? sample(branch(field.schema(), payload)) : sample(field.schema()));
        }

        Object read = AvroWire.decode(topic, writtenWith(frozen, written));

        assertThat(read).isInstanceOf(topic.valueType());
        assertThat(((GenericRecord) ((GenericRecord) read).get("payload")).getSchema().getName()).isEqualTo(payload);
        assertThat(readBackWith(frozen, topic, read)).as("every value written with %s, read back with it", version)
                .isEqualTo(body(frozen, written));
        List<String> notDefault = new ArrayList<>();
        fieldsAddedSince(frozen, current(topic), read, topic.name(), SpecificData.getForClass(topic.valueType()),
                notDefault);
        assertThat(notDefault).as("fields added since %s that did not read as their default", version).isEmpty();
    }

    @Test
    void aNodeRegisteredWrittenWithV1DecodesInThePoolDefaultWithItsGpusOnNumaNodeZeroWithoutMigOrNics()
            throws IOException {
        Schema envelope = v1("NodeEvent");
        GenericRecord gpu = new GenericRecordBuilder(v1("GpuDevice")).set("index", 3).set("model", "H100")
                .set("memoryMiB", 81_559L).build();
        GenericRecord registered = new GenericRecordBuilder(v1("NodeRegistered")).set("gpus", List.of(gpu))
                .set("cpuMillis", 96_000).set("memoryMiB", 1_048_576L).set("labels", Map.of("rack", "r7"))
                .set("backend", "slurm").build();

        NodeEvent read = AvroWire.decode(Topics.PLACEMENT_NODE_EVENTS, writtenWith(envelope,
                envelope(envelope, "nodeId", "gpu-node-7", registered)));

        assertThat(read.getNodeId()).isEqualTo("gpu-node-7");
        assertThat(read.getOccurredAt()).isEqualTo(AT);
        NodeRegistered node = (NodeRegistered) read.getPayload();
        assertThat(node.getBackend()).isEqualTo("slurm");
        assertThat(node.getLabels()).containsEntry("rack", "r7");
        assertThat(node.getPool()).as("records written before pools").isEqualTo("default");
        assertThat(node.getRdmaNics()).isEmpty();
        assertThat(node.getNumaCpuMillis()).isEmpty();
        assertThat(node.getNumaMemoryMiB()).isEmpty();
        GpuDevice device = node.getGpus().get(0);
        assertThat(device.getIndex()).isEqualTo(3);
        assertThat(device.getMemoryMiB()).isEqualTo(81_559L);
        assertThat(List.of(device.getNumaNode(), device.getPcieSwitch(), device.getNvlinkDomain()))
                .containsExactly(0, 0, 0);
        assertThat(device.getMigCapable()).isFalse();
    }

    @Test
    void aJobSubmittedWrittenWithV1DecodesAsAnInteractiveUnsuspendedJobWithNoDependenciesPoolOrImage()
            throws IOException {
        Schema envelope = v1("AdmissionJobEvent");
        GenericRecord submitted = new GenericRecordBuilder(v1("JobSubmitted")).set("tenant", "vision")
                .set("spec", aV1JobSpec()).set("idempotencyKey", "req-42").build();

        AdmissionJobEvent read = AvroWire.decode(Topics.ADMISSION_JOB_EVENTS, writtenWith(envelope,
                envelope(envelope, "jobId", "job-1", submitted)));

        JobSubmitted job = (JobSubmitted) read.getPayload();
        assertThat(job.getTenant()).isEqualTo("vision");
        assertThat(job.getIdempotencyKey()).isEqualTo("req-42");
        JobSpec spec = job.getSpec();
        assertThat(spec.getName()).isEqualTo("resnet");
        assertThat(spec.getTimeLimitSeconds()).isEqualTo(3_600L);
        assertThat(spec.getInteractive()).isTrue();
        assertThat(spec.getSuspend()).isFalse();
        assertThat(spec.getDependencies()).isEmpty();
        assertThat(spec.getPool()).as("no pool named: the queue chooses").isNull();
        assertThat(spec.getQueue()).as("the tenant's default queue").isNull();
        assertThat(spec.getTopology()).isNull();
        assertThat(spec.getRetry()).as("a failed run fails the job").isNull();
        TaskSpec task = spec.getTasks().get(0);
        assertThat(task.getCommand()).containsExactly("python", "train.py");
        assertThat(task.getGpuModel()).isEqualTo("A100");
        assertThat(task.getGpuModels()).isEmpty();
        assertThat(task.getGpuMilli()).as("whole GPUs").isNull();
        assertThat(task.getEnv()).isEmpty();
        assertThat(task.getImage()).isNull();
        assertThat(task.getMounts()).isEmpty();
    }

    @Test
    void aJobQueuedAndAJobFailedWrittenWithV1DecodeAsAFirstQueuingWithNoRetriesAndARunFailure() throws IOException {
        Schema envelope = v1("QueueJobEvent");
        GenericRecord queued = new GenericRecordBuilder(v1("JobQueued")).set("tenant", "vision").set("attempt", 1)
                .set("spec", aV1JobSpec()).set("submittedAt", AT.toEpochMilli()).set("gpus", 8).build();
        GenericRecord failed = new GenericRecordBuilder(v1("JobFailed")).set("tenant", "vision").set("attempt", 2)
                .set("message", "worker-0 exited 137").build();

        JobQueued q = (JobQueued) AvroWire.decode(Topics.QUEUE_JOB_EVENTS,
                writtenWith(envelope, envelope(envelope, "jobId", "job-1", queued))).getPayload();
        QueueJobEvent f = AvroWire.decode(Topics.QUEUE_JOB_EVENTS,
                writtenWith(envelope, envelope(envelope, "jobId", "job-1", failed)));

        assertThat(q.getSubmittedAt()).isEqualTo(AT);
        assertThat(q.getGpus()).isEqualTo(8);
        assertThat(q.getRequeuedBecause()).as("a first queuing").isNull();
        assertThat(q.getResumeFrom()).as("no checkpoint to resume from").isNull();
        assertThat(q.getFailureRetries()).isZero();
        assertThat(q.getNotBefore()).isNull();
        assertThat(q.getSpec().getInteractive()).isTrue();
        JobFailed failure = (JobFailed) f.getPayload();
        assertThat(failure.getAttempt()).isEqualTo(2);
        assertThat(failure.getMessage()).isEqualTo("worker-0 exited 137");
        assertThat(failure.getReason()).isEqualTo(FailureReason.RUN_FAILED);
    }

    @Test
    void anAllocationGrantedAndReleasedWithV1DecodeInThePoolDefaultWithWholeGpusAndNoFreeCapacityReported()
            throws IOException {
        Schema envelope = v1("AllocationEvent");
        GenericRecord placement = new GenericRecordBuilder(v1("TaskPlacement")).set("task", "worker").set("replica", 0)
                .set("nodeId", "gpu-node-7").set("gpuModel", "H100").set("gpuIndices", List.of(0, 1, 2, 3))
                .set("cpuMillis", 8_000).set("memoryMiB", 65_536L).build();
        GenericRecord granted = new GenericRecordBuilder(v1("AllocationGranted")).set("allocationId", "alloc-1")
                .set("tenant", "vision").set("attempt", 1).set("placements", List.of(placement))
                .set("grantedAt", AT.toEpochMilli()).set("backend", "slurm").build();
        GenericRecord released = new GenericRecordBuilder(v1("AllocationReleased")).set("allocationId", "alloc-1")
                .set("tenant", "vision").set("attempt", 1)
                .set("reason", new GenericData.EnumSymbol(v1("ReleaseReason"), "NODE_FAILED"))
                .set("grantedAt", AT.toEpochMilli()).set("releasedAt", AT.plusSeconds(600).toEpochMilli())
                .set("placements", List.of(placement)).set("backend", "slurm").build();

        AllocationGranted g = (AllocationGranted) AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS,
                writtenWith(envelope, envelope(envelope, "jobId", "job-1", granted))).getPayload();
        AllocationReleased r = (AllocationReleased) AvroWire.decode(Topics.PLACEMENT_ALLOCATION_EVENTS,
                writtenWith(envelope, envelope(envelope, "jobId", "job-1", released))).getPayload();

        assertThat(g.getPool()).as("records written before pools").isEqualTo("default");
        assertThat(g.getTimeLimitSeconds()).isNull();
        assertThat(g.getRunTokenSha256()).as("no run token: the run cannot report checkpoints").isNull();
        TaskPlacement task = g.getPlacements().get(0);
        assertThat(task.getGpuIndices()).containsExactly(0, 1, 2, 3);
        assertThat(task.getGpuShares()).as("whole GPUs").isEmpty();
        assertThat(task.getCpuSet()).isEmpty();
        assertThat(task.getRdmaNics()).isEmpty();
        assertThat(task.getRunSeconds()).isNull();
        assertThat(r.getReason()).isEqualTo(ReleaseReason.NODE_FAILED);
        assertThat(r.getReleasedAt()).isEqualTo(AT.plusSeconds(600));
        assertThat(r.getFreeCapacity()).isEmpty();
        assertThat(r.getDeferredChecks()).isEmpty();
    }

    private static Schema current(Topic<?> topic) {
        return SpecificData.get().getSchema(topic.valueType());
    }

    private static Schema v1(String name) {
        return FrozenSchemas.released().get(0).schemas().get("io.gantry.events." + name);
    }

    private static GenericRecord aV1JobSpec() {
        GenericRecord task = new GenericRecordBuilder(v1("TaskSpec")).set("name", "worker").set("replicas", 2)
                .set("command", List.of("python", "train.py")).set("gpus", 4).set("gpuModel", "A100")
                .set("cpuMillis", 8_000).set("memoryMiB", 65_536L).set("runSeconds", null).build();
        return new GenericRecordBuilder(v1("JobSpec")).set("name", "resnet").set("priority", 0)
                .set("timeLimitSeconds", 3_600L).set("tasks", List.of(task)).build();
    }

    private static GenericRecord envelope(Schema envelope, String keyField, String key, GenericRecord payload) {
        return new GenericRecordBuilder(envelope).set("eventId", "e-" + key).set(keyField, key)
                .set("occurredAt", AT.toEpochMilli()).set("payload", payload).build();
    }

    /** The record as a writer of that release put it on the topic: single-object encoding with its own fingerprint. */
    private static byte[] writtenWith(Schema writer, GenericRecord record) throws IOException {
        ByteBuffer buffer = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), writer).encode(record);
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }

    private static byte[] body(Schema schema, Object datum) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<>(schema).write(datum, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    /** What a reader of {@code frozen} sees of the decoded record once it is written again as today's writers do. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static byte[] readBackWith(Schema frozen, Topic<?> topic, Object read) throws IOException {
        byte[] now = AvroWire.encode((Topic) topic, read);
        Object old = new GenericDatumReader<>(current(topic), frozen)
                .read(null, DecoderFactory.get().binaryDecoder(now, 10, now.length - 10, null));
        return body(frozen, old);
    }

    private static Schema branch(Schema union, String name) {
        return union.getTypes().stream().filter(t -> t.getName().equals(name)).findFirst().orElseThrow();
    }

    /**
     * A value of {@code schema} with every field set and no collection empty, so every nested record is written and
     * resolved: the last enum symbol (not the default one), the first non-null branch of a union.
     */
    private static Object sample(Schema schema) {
        return switch (schema.getType()) {
            case RECORD -> {
                GenericRecord record = new GenericData.Record(schema);
                schema.getFields().forEach(f -> record.put(f.pos(), sample(f.schema())));
                yield record;
            }
            case ENUM -> new GenericData.EnumSymbol(schema,
                    schema.getEnumSymbols().get(schema.getEnumSymbols().size() - 1));
            case ARRAY -> List.of(sample(schema.getElementType()));
            case MAP -> Map.of("key", sample(schema.getValueType()));
            case UNION -> sample(schema.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL).findFirst()
                    .orElseThrow());
            case STRING -> "sample";
            case INT -> 7;
            case LONG -> AT.toEpochMilli();
            case BOOLEAN -> true;
            case FLOAT -> 0.5f;
            case DOUBLE -> 0.25;
            case BYTES -> ByteBuffer.wrap(new byte[] {1, 2});
            case FIXED -> new GenericData.Fixed(schema, new byte[schema.getFixedSize()]);
            case NULL -> null;
        };
    }

    /**
     * Walks {@code value} (read with {@code reader} from data written with {@code writer}) and names every field the
     * writer did not have whose value is not the field's default.
     */
    private static void fieldsAddedSince(Schema writer, Schema reader, Object value, String path, SpecificData model,
                                         List<String> notDefault) {
        switch (reader.getType()) {
            case RECORD -> {
                GenericRecord record = (GenericRecord) value;
                for (Schema.Field field : reader.getFields()) {
                    Schema.Field written = writer.getField(field.name());
                    Object v = record.get(field.pos());
                    if (written == null) {
                        Object expected = model.getDefaultValue(field);
                        if (!Objects.equals(v, expected)) {
                            notDefault.add(path + "." + field.name() + " is " + v + ", not " + expected);
                        }
                    } else {
                        fieldsAddedSince(written.schema(), field.schema(), v, path + "." + field.name(), model,
                                notDefault);
                    }
                }
            }
            case ARRAY -> ((List<?>) value).forEach(e -> fieldsAddedSince(writer.getElementType(),
                    reader.getElementType(), e, path + "[]", model, notDefault));
            case MAP -> ((Map<?, ?>) value).values().forEach(v -> fieldsAddedSince(writer.getValueType(),
                    reader.getValueType(), v, path + "{}", model, notDefault));
            case UNION -> {
                Schema read = reader.getTypes().get(model.resolveUnion(reader, value));
                List<Schema> written = writer.getType() == Schema.Type.UNION ? writer.getTypes() : List.of(writer);
                written.stream().filter(w -> w.getFullName().equals(read.getFullName())).findFirst()
                        .ifPresent(w -> fieldsAddedSince(w, read, value, read.getType() == Schema.Type.RECORD
                                ? path + "(" + read.getName() + ")" : path, model, notDefault));
            }
            default -> {
            }
        }
    }
}
