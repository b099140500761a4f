package io.gantry.admission.kafka;

import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.gantry.events.AdmissionJobEvent;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import io.gantry.runtime.kafka.KafkaSecurity;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes what the HTTP API decided onto {@code admission.job-events} and waits for the broker's ack, so a
 * 202 means the event is durably on the log. Idempotent producer, acks=all; the whole send (metadata, retries,
 * ack) is bounded by {@code gantry.admission.publish-timeout}, after which the caller answers 503.
 */
@Singleton
public class EventPublisher implements AutoCloseable {
    private final KafkaProducer<String, byte[]> producer;
    private final Duration timeout;

    public EventPublisher(String bootstrap, Duration timeout) {
        this(bootstrap, timeout, KafkaSecurity.NONE);
    }

    @jakarta.inject.Inject
    public EventPublisher(@Value("${kafka.bootstrap.servers}") String bootstrap,
                          @Value("${gantry.admission.publish-timeout:5s}") Duration timeout, KafkaSecurity security) {
        this.timeout = timeout;
        int ms = (int) Math.max(1000, timeout.toMillis());
        this.producer = new KafkaProducer<>(security.on(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.CLIENT_ID_CONFIG, "gantry-admission-api",
                ProducerConfig.LINGER_MS_CONFIG, 0,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, ms,
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, ms,
                // give up on retries once the caller has been told 503, so a late write is as unlikely as can be
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, ms)),
                new StringSerializer(), new ByteArraySerializer());
    }

    /** Sends and waits for the ack; throws {@link PublishFailedException} if there is none in time. */
    public void publish(AdmissionJobEvent event) {
        publish(Topics.ADMISSION_JOB_EVENTS, event.getJobId(), event);
    }

    /** Any of admission's own topics; sends and waits for the ack like {@link #publish(AdmissionJobEvent)}. */
    public <V> void publish(io.gantry.schemas.Topic<V> topic, String key, V event) {
        byte[] value = AvroWire.encode(topic, event);
        try {
            producer.send(new ProducerRecord<>(topic.name(), key, value))
                    .get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PublishFailedException(e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            throw new PublishFailedException(e instanceof ExecutionException ? e.getCause() : e);
        }
    }

    @PreDestroy
    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
    }

    /** Kafka did not acknowledge the event in time; it may or may not be on the log. */
    public static final class PublishFailedException extends RuntimeException {
        PublishFailedException(Throwable cause) {
            super("event not acknowledged by Kafka: " + cause, cause);
        }
    }
}
