package io.gantry.billing.streams;

import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthResult;
import org.apache.kafka.streams.KafkaStreams.State;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class MonthToDateHealthIndicatorTest {

    @ParameterizedTest(name = "state {0} (failure: {1}) is {2} on /health")
    @CsvSource({
            "RUNNING, false, UP",
            "REBALANCING, false, UP",
            "CREATED, false, UP",
            "CREATED, true, DOWN",
            "PENDING_ERROR, true, DOWN",
            "ERROR, true, DOWN",
            "ERROR, false, DOWN"})
    void aFailedStreamsApplicationIsDownAndAStartingOrRestoringOneIsUp(State state, boolean failed, String status) {
        HealthResult r = MonthToDateHealthIndicator.result(state, failed ? new IllegalStateException("boom") : null);
        assertThat(r.getName()).isEqualTo("billing-streams");
        assertThat(r.getStatus()).isEqualTo("UP".equals(status) ? HealthStatus.UP : HealthStatus.DOWN);
        @SuppressWarnings("unchecked")
        Map<String, Object> details = (Map<String, Object>) r.getDetails();
        assertThat(details).containsEntry("state", state.name());
        if (failed) {
            assertThat(details).containsEntry("error", "java.lang.IllegalStateException: boom");
        }
    }
}
