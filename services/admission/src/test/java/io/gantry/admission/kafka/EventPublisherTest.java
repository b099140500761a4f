package io.gantry.admission.kafka;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.JobCancelRequested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventPublisherTest {
    @Test
    void anUnreachableBrokerFailsThePublishSoTheApiCanAnswer503() {
        // nothing listens on port 1: the send never gets metadata, let alone an ack
        try (EventPublisher publisher = new EventPublisher("127.0.0.1:1", Duration.ofSeconds(1))) {
            AdmissionJobEvent event = AdmissionJobEvent.newBuilder()
                    .setEventId("e1").setJobId("j1").setOccurredAt(Instant.parse("2025-01-01T00:00:00Z"))
                    .setPayload(JobCancelRequested.newBuilder().setTenant("vision").setRequestedBy("vision").build())
                    .build();

            assertThatThrownBy(() -> publisher.publish(event))
                    .isInstanceOf(EventPublisher.PublishFailedException.class)
                    .hasMessageContaining("not acknowledged");
        }
    }
}
