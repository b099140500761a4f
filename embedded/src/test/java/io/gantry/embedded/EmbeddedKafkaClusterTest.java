package io.gantry.embedded;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three KRaft nodes in this JVM: topics replicated three times with two in sync required, and a broker stopped
 * under load then restarted without losing or repeating a record.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EmbeddedKafkaClusterTest {
    EmbeddedKafkaCluster cluster;

    @BeforeAll
    void startThreeBrokers() throws Exception {
        long t0 = System.nanoTime();
        cluster = EmbeddedKafkaCluster.start(3);
        System.out.printf("3 KRaft nodes started in %d ms: %s%n", (System.nanoTime() - t0) / 1_000_000,
                cluster.bootstrapServers());
    }

    @AfterAll
    void stopThem() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void newTopicsAndTheOffsetAndTransactionLogsAreReplicatedThreeTimesWithTwoInSyncRequired() throws Exception {
        cluster.createTopics(List.of("jobs"), 2);
        // the internal topics appear with their first users: a transactional producer and a consumer group
        try (KafkaProducer<String, String> tx = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-config"))) {
            tx.initTransactions();
            tx.beginTransaction();
            tx.send(new ProducerRecord<>("jobs", "k", "v"));
            tx.commitTransaction();
        }
        try (KafkaConsumer<String, String> c = consumer("config-check")) {
            c.commitSync(Map.of(new TopicPartition("jobs", 0), new OffsetAndMetadata(0)));
        }

        try (Admin admin = cluster.admin()) {
            List<String> topics = List.of("jobs", "__consumer_offsets", "__transaction_state");
            Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get();
            Map<ConfigResource, Config> configs = admin.describeConfigs(topics.stream()
                    .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList()).all().get();
            for (String topic : topics) {
                described.get(topic).partitions().forEach(p -> assertThat(p.replicas()).as(topic).hasSize(3));
                assertThat(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic))
                        .get("min.insync.replicas").value()).as(topic).isEqualTo("2");
            }
        }
    }

    @Test
    @Order(2)
    void everyRecordWrittenWhileABrokerIsDownIsThereExactlyOnceAfterItComesBack() throws Exception {
        String topic = "chaos";
        cluster.createTopics(List.of(topic), 3);
        Map<String, Integer> seenByGroup = new ConcurrentHashMap<>();
        AtomicBoolean consuming = new AtomicBoolean(true);
        Thread reader = new Thread(() -> {
            try (KafkaConsumer<String, String> c = consumer("chaos-readers")) {
                c.subscribe(List.of(topic));
                while (consuming.get()) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                        seenByGroup.merge(r.value(), 1, Integer::sum);
                    }
                    c.commitAsync();
                }
            }
        }, "chaos-reader");
        reader.start();

        int perPhase = 300;
        int sent = 0;
        try (KafkaProducer<String, String> producer = producer(Map.of())) {
            sent += produce(producer, topic, sent, perPhase);

            // the broker that leads the first partition, so its writes have to move
            int victim = cluster.leaderOf(topic, 0);
            long stopAt = System.nanoTime();
            cluster.stop(victim);
            long stopped = System.nanoTime();
            sent += produce(producer, topic, sent, perPhase);
            long writtenWhileDown = System.nanoTime();
            // a transaction commits too with one broker of three down (transaction log min ISR 2)
            try (KafkaProducer<String, String> tx = producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                    "tx-" + UUID.randomUUID()))) {
                tx.initTransactions();
                tx.beginTransaction();
                for (int i = 0; i < 50; i++, sent++) {
                    tx.send(new ProducerRecord<>(topic, "k" + sent, "v" + sent));
                }
                tx.commitTransaction();
            }
            int leaderNow = cluster.leaderOf(topic, 0);

            cluster.restart(victim);
            long restarted = System.nanoTime();
            Duration caughtUp = cluster.awaitFullyReplicated(Duration.ofSeconds(60));
            sent += produce(producer, topic, sent, perPhase);

            System.out.printf("broker %d stopped in %d ms; %d records written while it was down in %d ms (partition 0 "
                            + "now led by %d); restarted in %d ms, all replicas in sync %d ms later%n",
                    victim, (stopped - stopAt) / 1_000_000, perPhase + 50, (writtenWhileDown - stopped) / 1_000_000,
                    leaderNow, (restarted - writtenWhileDown) / 1_000_000, caughtUp.toMillis());
            assertThat(leaderNow).as("the partition moved to a live broker").isNotIn(victim, -1);
        }

        int total = sent;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (seenByGroup.size() < total && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(100);
        }
        consuming.set(false);
        reader.join(10_000);
        assertThat(seenByGroup).as("the consumer group kept reading through the outage").hasSize(total);

        // the log itself, read from the beginning: every record once, none twice
        Map<String, Long> inLog = readAll(topic).stream().collect(Collectors.groupingBy(Function.identity(),
                Collectors.counting()));
        assertThat(inLog).hasSize(total);
        assertThat(inLog.values()).allMatch(n -> n == 1);
        assertThat(inLog.keySet()).isEqualTo(java.util.stream.IntStream.range(0, total).mapToObj(i -> "v" + i)
                .collect(Collectors.toSet()));
    }

    @Test
    @Order(3)
    void closingStopsEveryNodeAndDeletesItsDirectories() throws Exception {
        EmbeddedKafkaCluster another = EmbeddedKafkaCluster.start(3);
        List<Path> dirs = List.of(another.logDir(0), another.logDir(1), another.logDir(2));
        assertThat(dirs).allMatch(Files::isDirectory);
        another.close();
        assertThat(dirs).noneMatch(Files::exists);
        assertThat(dirs.get(0).getParent()).doesNotExist();
    }

    @Test
    @Order(4)
    void aClusterStartedAgainOnItsDataDirectoryKeepsItsTopicsAndRecords() throws Exception {
        Path data = Files.createTempDirectory("gantry-kafka-kept-");
        try {
            try (EmbeddedKafkaCluster first = EmbeddedKafkaCluster.start(3, data, 0, Map.of());
                 KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(
                         ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, first.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all"),
                         new StringSerializer(), new StringSerializer())) {
                first.createTopics(List.of("kept"), 1);
                p.send(new ProducerRecord<>("kept", "k", "before the restart")).get(30, TimeUnit.SECONDS);
            }
            // every port but node 0's is new: the quorum and the brokers' registrations follow the configuration
            EmbeddedKafkaCluster previous = cluster;
            try (EmbeddedKafkaCluster again = EmbeddedKafkaCluster.start(3, data, 0, Map.of())) {
                cluster = again;
                assertThat(readAll("kept")).containsExactly("before the restart");
            } finally {
                cluster = previous;
            }
        } finally {
            org.apache.kafka.common.utils.Utils.delete(data.toFile());
        }
    }

    private int produce(KafkaProducer<String, String> producer, String topic, int from, int count) throws Exception {
        List<Future<?>> acks = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            acks.add(producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)));
        }
        for (Future<?> ack : acks) {
            ack.get(90, TimeUnit.SECONDS);
        }
        return count;
    }

    private List<String> readAll(String topic) {
        try (KafkaConsumer<String, String> c = consumer(null)) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            List<String> out = new ArrayList<>();
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                c.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
            }
            return out;
        }
    }

    private KafkaProducer<String, String> producer(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 90_000);
        p.putAll(extra);
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer(String group) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }
}
