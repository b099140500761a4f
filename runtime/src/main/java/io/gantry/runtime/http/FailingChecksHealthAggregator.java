package io.gantry.runtime.http;

import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.annotation.Requires;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.endpoint.health.HealthEndpoint;
import io.micronaut.management.endpoint.health.HealthLevelOfDetail;
import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.management.health.aggregator.DefaultHealthAggregator;
import io.micronaut.management.health.aggregator.HealthAggregator;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import io.micronaut.runtime.ApplicationConfiguration;
import jakarta.inject.Singleton;
import org.reactivestreams.Publisher;

import java.util.Map;
import java.util.TreeMap;

/**
 * {@code /health} as Micronaut aggregates it, but an answer that is not UP names the checks that are not, even to a
 * caller who may not see details (every caller: Gantry's {@code /health} takes no token): e.g.
 * {@code {"status":"DOWN","details":{"jdbc":{"status":"DOWN"}}}} while the database is unreachable. Only the checks'
 * names and statuses: their details (a JDBC URL, an exception's message) stay hidden.
 */
@Singleton
@Replaces(DefaultHealthAggregator.class)
@Requires(beans = HealthEndpoint.class)
public class FailingChecksHealthAggregator implements HealthAggregator<HealthResult> {
    private final DefaultHealthAggregator micronauts;

    public FailingChecksHealthAggregator(ApplicationConfiguration applicationConfiguration) {
        this.micronauts = new DefaultHealthAggregator(applicationConfiguration);
    }

    @Override
    public Publisher<HealthResult> aggregate(HealthIndicator[] indicators, HealthLevelOfDetail levelOfDetail) {
        if (levelOfDetail != HealthLevelOfDetail.STATUS) {
            return micronauts.aggregate(indicators, levelOfDetail);
        }
        // the details are needed to name the failing checks; they are dropped before the answer leaves
        return Publishers.map(micronauts.aggregate(indicators, HealthLevelOfDetail.STATUS_DESCRIPTION_DETAILS),
                FailingChecksHealthAggregator::statusOnly);
    }

    @Override
    public Publisher<HealthResult> aggregate(String name, Publisher<HealthResult> results) {
        return micronauts.aggregate(name, results);
    }

    /** The overall status, and the checks (by name) that are not UP with their status only. */
    static HealthResult statusOnly(HealthResult detailed) {
        HealthResult.Builder result = HealthResult.builder(null, detailed.getStatus());
        Map<String, Object> failing = failing(detailed.getDetails());
        return HealthStatus.UP.equals(detailed.getStatus()) || failing.isEmpty() ? result.build()
                : result.details(failing).build();
    }

    /** The checks among {@code details} (by name, as the aggregator collects them) that are not UP, with status only. */
    static Map<String, Object> failing(Object details) {
        Map<String, Object> failing = new TreeMap<>();
        if (details instanceof Map<?, ?> byName) {
            byName.forEach((name, check) -> {
                if (check instanceof HealthResult r && !HealthStatus.UP.equals(r.getStatus())) {
                    failing.put(String.valueOf(name), Map.of("status", r.getStatus().getName()));
                }
            });
        }
        return failing;
    }
}
