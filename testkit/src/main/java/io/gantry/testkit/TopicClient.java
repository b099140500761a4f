package io.gantry.testkit;

import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

/** Produces to and reads back whole topics of the shared test broker, as another service would. */
public final class TopicClient implements AutoCloseable {
    private final String bootstrap;
    private final Map<String, Object> security;
    private final KafkaProducer<String, byte[]> producer;

    public TopicClient(String bootstrap) {
        this(bootstrap, Map.of());
    }

    /** A client of a broker that wants {@code security} (e.g. {@code security.protocol}, {@code sasl.*}). */
    public TopicClient(String bootstrap, Map<String, Object> security) {
        this.bootstrap = bootstrap;
        this.security = Map.copyOf(security);
        this.producer = new KafkaProducer<>(with(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all")), new StringSerializer(), new ByteArraySerializer());
    }

    private Map<String, Object> with(Map<String, Object> client) {
        Map<String, Object> all = new java.util.HashMap<>(client);
        all.putAll(security);
        return all;
    }

    public <V> void send(Topic<V> topic, String key, V value) {
        sendRaw(topic, key, AvroWire.encode(topic, value));
    }

    public void sendRaw(Topic<?> topic, String key, byte[] bytes) {
        try {
            producer.send(new ProducerRecord<>(topic.name(), key, bytes)).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every committed record of the topic, decoded. */
    public <V> List<V> readAll(Topic<V> topic) {
        List<V> values = new ArrayList<>();
        for (ConsumerRecord<String, byte[]> r : readAllRaw(topic)) {
            values.add(AvroWire.decode(topic, r.value()));
        }
        return values;
    }

    public List<ConsumerRecord<String, byte[]>> readAllRaw(Topic<?> topic) {
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(with(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false)), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            List<PartitionInfo> infos = c.partitionsFor(topic.name(), Duration.ofSeconds(10));
            if (infos == null) {
                return List.of();
            }
            infos.forEach(p -> parts.add(new TopicPartition(p.topic(), p.partition())));
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            return out;
        }
    }

    @Override
    public void close() {
        producer.close();
    }
}
