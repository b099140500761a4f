package io.gantry.admission.kafka;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.runtime.kafka.KafkaSecurity;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The publisher of a test that needs Kafka's answer to be lost: its first job event reaches the real broker, and
 * then the call fails as a timed-out ack does ("it may or may not be on the log"); later events go as usual. Only
 * where {@code gantry.test.first-ack-lost} is set.
 */
@Singleton
@Replaces(EventPublisher.class)
@Requires(property = "gantry.test.first-ack-lost", value = "true")
public class AckLostPublisher extends EventPublisher {
    private final AtomicBoolean lost = new AtomicBoolean();

    public AckLostPublisher(@Value("${kafka.bootstrap.servers}") String bootstrap,
                            @Value("${gantry.admission.publish-timeout:5s}") Duration timeout, KafkaSecurity security) {
        super(bootstrap, timeout, security);
    }

    @Override
    public void publish(AdmissionJobEvent event) {
        super.publish(event);
        if (lost.compareAndSet(false, true)) {
            throw new PublishFailedException(new TimeoutException("the ack was lost after the broker appended it"));
        }
    }
}
