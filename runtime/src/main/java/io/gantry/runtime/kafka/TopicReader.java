package io.gantry.runtime.kafka;

import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads a whole topic once, from the beginning to its current end (committed records only). */
public final class TopicReader {
    private static final Logger LOG = LoggerFactory.getLogger(TopicReader.class);

    private TopicReader() {
    }

    /** Every decodable value on {@code topic}, in partition order; undecodable records are skipped with a warning. */
    public static <V> List<V> readAll(String bootstrap, Topic<V> topic) {
        return readAll(bootstrap, KafkaSecurity.NONE, topic);
    }

    /** The same, connecting with {@code security}. */
    public static <V> List<V> readAll(String bootstrap, KafkaSecurity security, Topic<V> topic) {
        Map<String, Object> p = security.on(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.CLIENT_ID_CONFIG, "gantry-reader-" + topic.name()));
        List<V> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = c.partitionsFor(topic.name(), Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                return out;
            }
            List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    try {
                        out.add(AvroWire.decode(topic, r.value()));
                    } catch (RuntimeException e) {
                        LOG.warn("skipping undecodable record {}-{}@{}: {}", r.topic(), r.partition(), r.offset(),
                                e.toString());
                    }
                }
            }
        }
        return out;
    }
}
