package io.gantry.admission.http;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micronaut.scheduling.ScheduledExecutorTaskScheduler;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

/** The dead-letter counts on a real broker: records, not offsets, and labelled by the topic's owner. */
class KafkaMetricsTest {

    @Test
    void deadLettersWrittenInTransactionsCountOncePerRecordUnderTheirOwner() throws Exception {
        String bootstrap = EmbeddedKafka.shared().bootstrapServers();
        KafkaTopics.ensureAll(bootstrap, 1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
        try (KafkaMetrics metrics = new KafkaMetrics(bootstrap, registry, () -> true,
                new ScheduledExecutorTaskScheduler(executor), Duration.ofHours(1),
                io.gantry.runtime.kafka.KafkaSecurity.NONE)) {
            metrics.refresh();
            double queueBefore = deadLetters(registry, Service.QUEUE);
            double recoveryBefore = deadLetters(registry, Service.RECOVERY);

            // as the queue writes them: each poison record in a transaction of its own, an aborted one besides
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG, "dead-letter-count-" + UUID.randomUUID()),
                    new ByteArraySerializer(), new ByteArraySerializer())) {
                p.initTransactions();
                for (int i = 0; i < 3; i++) {
                    p.beginTransaction();
                    p.send(new ProducerRecord<>(Topics.deadLetter(Service.QUEUE).name(), ("poison-" + i).getBytes()));
                    p.commitTransaction();
                }
                p.beginTransaction();
                p.send(new ProducerRecord<>(Topics.deadLetter(Service.QUEUE).name(), "aborted".getBytes()));
                p.flush();
                p.abortTransaction();
            }
            metrics.refresh();

            assertThat(deadLetters(registry, Service.QUEUE) - queueBefore).isEqualTo(3);
            assertThat(deadLetters(registry, Service.RECOVERY)).isEqualTo(recoveryBefore);
            metrics.refresh();
            assertThat(deadLetters(registry, Service.QUEUE) - queueBefore).as("counted once").isEqualTo(3);
        } finally {
            executor.shutdownNow();
        }
    }

    private static double deadLetters(SimpleMeterRegistry registry, Service owner) {
        FunctionCounter c = registry.get("gantry.dead.letters").tag("owner", owner.id())
                .tag("topic", Topics.deadLetter(owner).name()).functionCounter();
        return c.count();
    }
}
