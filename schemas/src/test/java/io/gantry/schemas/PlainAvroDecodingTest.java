package io.gantry.schemas;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.TaskPlacement;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** An outside consumer decodes a record produced by Gantry with nothing but the published .avsc files. */
class PlainAvroDecodingTest {

    @Test
    void aRecordOnATopicDecodesWithPlainAvroAndThePublishedSchemas() throws Exception {
        EmbeddedKafka kafka = EmbeddedKafka.shared();
        String topic = Topics.PLACEMENT_ALLOCATION_EVENTS.name();
        kafka.createTopics(List.of(topic), 1);
        String jobId = "job-" + UUID.randomUUID();
        AllocationEvent event = AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(jobId)
                .setOccurredAt(Instant.parse("2026-11-22T10:00:00Z"))
                .setPayload(AllocationGranted.newBuilder().setAllocationId("a1").setTenant("vision").setAttempt(1)
                        .setPlacements(List.of(TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId("sim-1").setGpuModel("H100").setGpuIndices(List.of(0, 1, 2, 3)).setCpuMillis(8000).setMemoryMiB(1024L).build()))
                        .setGrantedAt(Instant.parse("2026-11-22T10:00:00Z")).setBackend("simulated").build())
                .build();
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, jobId, AvroWire.encode(Topics.PLACEMENT_ALLOCATION_EVENTS, event))).get();
        }

        byte[] bytes = null;
        try (var consumer = new KafkaConsumer<>(Map.<String, Object>of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers()), new StringDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (jobId.equals(r.key())) {
                        bytes = r.value();
                    }
                }
            }
        }
        assertThat(bytes).isNotNull();

        // From here on: plain Avro and the .avsc files only.
        Map<String, Schema> published = PublishedSchemas.parse(Path.of("src/main/avro"));
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(buf.get()).isEqualTo((byte) 0xC3);
        assertThat(buf.get()).isEqualTo((byte) 0x01);
        long fingerprint = buf.getLong();
        Schema writer = published.values().stream()
                .filter(s -> SchemaNormalization.parsingFingerprint64(s) == fingerprint)
                .findFirst().orElseThrow();
        assertThat(writer.getFullName()).isEqualTo("io.gantry.events.AllocationEvent");
        GenericRecord decoded = new GenericDatumReader<GenericRecord>(writer).read(null,
                DecoderFactory.get().binaryDecoder(bytes, 10, bytes.length - 10, null));
        assertThat(decoded.get("jobId").toString()).isEqualTo(jobId);
        GenericRecord payload = (GenericRecord) decoded.get("payload");
        assertThat(payload.getSchema().getName()).isEqualTo("AllocationGranted");
        GenericRecord placement = (GenericRecord) ((List<?>) payload.get("placements")).get(0);
        assertThat(placement.get("nodeId").toString()).isEqualTo("sim-1");
        assertThat(List.copyOf((List<?>) placement.get("gpuIndices"))).isEqualTo(List.of(0, 1, 2, 3));
        assertThat(payload.get("grantedAt")).isEqualTo(Instant.parse("2026-11-22T10:00:00Z").toEpochMilli());
    }
}
