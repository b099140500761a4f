package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.QueueJobEvent;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads what the queue committed: {@code queue.job-events} and {@code queue.dead-letter}, from the beginning. */
final class KafkaProbe implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    private final List<QueueJobEvent> events = new ArrayList<>();
    private final List<ConsumerRecord<String, byte[]>> deadLetters = new ArrayList<>();

    KafkaProbe() {
        this(EmbeddedKafka.shared().bootstrapServers());
    }

    /** Reading from the broker at {@code bootstrap} (a test's own broker). */
    KafkaProbe(String bootstrap) {
        consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : List.of(Topics.QUEUE_JOB_EVENTS.name(), Topics.deadLetter(io.gantry.schemas.Service.QUEUE).name())) {
            consumer.partitionsFor(topic, Duration.ofSeconds(30))
                    .forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Everything the queue wrote about a tenant's jobs so far, in order. */
    List<QueueJobEvent> events(String tenant) {
        poll();
        return events.stream().filter(e -> tenant.equals(tenantOf(e))).toList();
    }

    /** Payloads of one job, in order. */
    List<Object> payloads(String tenant, String jobId) {
        return events(tenant).stream().filter(e -> e.getJobId().equals(jobId)).map(QueueJobEvent::getPayload).toList();
    }

    <T> List<T> payloads(String tenant, String jobId, Class<T> type) {
        return payloads(tenant, jobId).stream().filter(type::isInstance).map(type::cast).toList();
    }

    List<ConsumerRecord<String, byte[]>> deadLetters() {
        poll();
        return List.copyOf(deadLetters);
    }

    private void poll() {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(300))) {
            if (r.topic().equals(Topics.QUEUE_JOB_EVENTS.name())) {
                events.add(AvroWire.decode(Topics.QUEUE_JOB_EVENTS, r.value()));
            } else {
                deadLetters.add(r);
            }
        }
    }

    private static String tenantOf(QueueJobEvent e) {
        return String.valueOf(((SpecificRecordBase) e.getPayload()).get("tenant"));
    }

    @Override
    public void close() {
        consumer.close();
    }
}
