package io.gantry.simulator;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.ServiceLoop;
import io.gantry.runtime.log.InMemoryLog;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * A service's restart to ready on a real broker: replays a workload (as {@code RestartBench}), copies the queue's
 * (or placement's, or recovery's) restore topics from the log the replay left into an embedded KRaft broker, then starts its event
 * processor on them four times and times each start until ready: from the whole history; once more from the whole
 * history, handling one input so that it takes a snapshot; and twice from that snapshot. Fetching and Avro decoding
 * included.
 *
 * <pre>java -Xmx12g -cp simulator/target/gantry-simulator.jar io.gantry.simulator.KafkaRestartBench
 *     [--service queue|placement|recovery] --trace scale --cluster uniform:5000x8 --policy gantry --max-jobs N</pre>
 */
public final class KafkaRestartBench {
    private KafkaRestartBench() {
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new java.util.ArrayList<>(List.of(args));
        int at = rest.indexOf("--service");
        Service service = Service.QUEUE;
        if (at >= 0) {
            service = at + 1 < rest.size() ? Service.valueOf(rest.get(at + 1).toUpperCase(Locale.ROOT)) : null;
            rest.subList(at, Math.min(at + 2, rest.size())).clear();
        }
        if (service == null) {
            throw new IllegalArgumentException("--service: queue, placement or recovery");
        }
        Simulation sim = RestartBench.replayed(Replay.parse(rest.toArray(String[]::new)));
        // the service's clock stands where the replay ended: its restart cycle decides at that time
        Clock clock = Clock.fixed(sim.now(), ZoneOffset.UTC);
        ServiceLoop loop = sim.loop(service, clock);
        try (EmbeddedKafka kafka = EmbeddedKafka.start(null, 0, Map.of())) {
            kafka.createTopics(Topics.allNames(), 1);
            long copied = copy(sim.log(), loop.restoreFrom(), kafka.bootstrapServers());
            System.out.printf(Locale.ROOT, "copied %,d records of %s to the broker%n", copied, loop.restoreFrom());

            // snapshots read but none taken (an interval no start reaches), then one after the first input
            start("whole history", loop, kafka, clock, Long.MAX_VALUE, false);
            start("whole history, then a snapshot", loop, kafka, clock, 1, true);
            start("from the snapshot", loop, kafka, clock, Long.MAX_VALUE, false);
            start("from the snapshot, again", loop, kafka, clock, Long.MAX_VALUE, false);
        }
        System.out.println("machine: " + Replay.machine());
    }

    /** Starts the queue's processor, times it to ready, and (asked to) handles one input so that it snapshots. */
    private static void start(String label, ServiceLoop loop, EmbeddedKafka kafka, Clock clock, long snapshotEvery,
                              boolean snapshot) throws Exception {
        System.gc();
        long began = System.nanoTime();
        try (EventProcessor p = EventProcessor.builder(loop.owner(), kafka.bootstrapServers()).loop(loop)
                .snapshotEvery(snapshotEvery).clock(clock).build().start()) {
            if (!p.awaitReady(Duration.ofMinutes(30))) {
                throw new IllegalStateException(loop.owner() + " did not get ready in 30 minutes");
            }
            long ready = System.nanoTime() - began;
            EventProcessor.Restored restored = p.lastRestore();
            System.out.printf(Locale.ROOT, "%-32s ready in %,8.0f ms (restore %,8d ms: %,d snapshot records, %,d of the"
                            + " history)%n", label, ready / 1e6, restored.took().toMillis(), restored.snapshotRecords(),
                    restored.historyRecords());
            if (snapshot) {
                String snapshots = Topics.snapshots(loop.owner()).name();
                long before = end(kafka, snapshots);
                trigger(loop, kafka.bootstrapServers());
                long t = System.nanoTime();
                while (end(kafka, snapshots) == before) {
                    if (System.nanoTime() - t > Duration.ofMinutes(10).toNanos()) {
                        throw new IllegalStateException("no snapshot in 10 minutes");
                    }
                    Thread.sleep(100);
                }
                // the parts and the transaction's commit marker
                System.out.printf(Locale.ROOT, "%-32s snapshot written %,d ms after the input (%,d parts)%n", "",
                        (System.nanoTime() - t) / 1_000_000, end(kafka, snapshots) - before - 1);
            }
        }
    }

    /**
     * One input that changes nothing the service decides: for the queue a resume request for a job it never saw,
     * for placement and recovery a checkpoint of one.
     */
    private static void trigger(ServiceLoop loop, String bootstrap) {
        try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
            String job = "bench-" + UUID.randomUUID();
            if (loop.owner() == Service.QUEUE) {
                producer.send(new ProducerRecord<>(Topics.ADMISSION_SUSPENSION_EVENTS.name(), job,
                        AvroWire.encode(Topics.ADMISSION_SUSPENSION_EVENTS, new io.gantry.events.SuspensionEvent(
                                UUID.randomUUID().toString(), job, Instant.now(),
                                new io.gantry.events.JobResumeRequested("bench", "bench")))));
            } else {
                producer.send(new ProducerRecord<>(Topics.ADMISSION_CHECKPOINT_EVENTS.name(), job,
                        AvroWire.encode(Topics.ADMISSION_CHECKPOINT_EVENTS, new io.gantry.events.CheckpointEvent(
                                UUID.randomUUID().toString(), job, Instant.now(),
                                io.gantry.events.CheckpointCommitted.newBuilder().setTenant("bench").setAttempt(1)
                                        .setStep(1).setPath("/bench").setReportedVia("bench")
                                        .setCommittedAt(Instant.now()).build()))));
            }
        }
    }

    private static long copy(InMemoryLog log, List<Topic<?>> topics, String bootstrap) {
        long n = 0;
        try (KafkaProducer<String, byte[]> producer = producer(bootstrap)) {
            for (Topic<?> t : topics) {
                for (InMemoryLog.Entry e : log.from(t.name(), 0)) {
                    producer.send(new ProducerRecord<>(t.name(), 0, e.key(), encode(t, e.value())));
                    n++;
                }
            }
            producer.flush();
        }
        return n;
    }

    @SuppressWarnings("unchecked")
    private static <V> byte[] encode(Topic<V> topic, Object value) {
        return AvroWire.encode(topic, (V) value);
    }

    private static KafkaProducer<String, byte[]> producer(String bootstrap) {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.LINGER_MS_CONFIG, 20, ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024,
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new ByteArraySerializer());
    }

    private static long end(EmbeddedKafka kafka, String topic) {
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            return c.endOffsets(List.of(tp)).get(tp);
        }
    }
}
