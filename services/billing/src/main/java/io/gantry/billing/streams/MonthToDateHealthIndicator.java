package io.gantry.billing.streams;

import io.micronaut.context.annotation.Requires;
import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import jakarta.inject.Singleton;
import org.apache.kafka.streams.KafkaStreams;
import org.reactivestreams.Publisher;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code billing-streams} on {@code /health}: DOWN when the month-to-date application has failed (state
 * {@code ERROR}, or it could not start); UP otherwise, with its state, since starting, rebalancing and restoring
 * are normal (the HTTP read answers 503 meanwhile).
 */
@Singleton
@Requires(beans = MonthToDateStreams.class)
public class MonthToDateHealthIndicator implements HealthIndicator {
    static final String NAME = "billing-streams";

    private final MonthToDateStreams streams;

    public MonthToDateHealthIndicator(MonthToDateStreams streams) {
        this.streams = streams;
    }

    @Override
    public Publisher<HealthResult> getResult() {
        return Publishers.just(result(streams.state(), streams.failure().orElse(null)));
    }

    static HealthResult result(KafkaStreams.State state, Throwable failure) {
        boolean failed = state == KafkaStreams.State.ERROR || state == KafkaStreams.State.PENDING_ERROR
                || (state == KafkaStreams.State.CREATED && failure != null);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("state", state.name());
        if (failure != null) {
            details.put("error", failure.toString());
        }
        return HealthResult.builder(NAME, failed ? HealthStatus.DOWN : HealthStatus.UP).details(details).build();
    }
}
