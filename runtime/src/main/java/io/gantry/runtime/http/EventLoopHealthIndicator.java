package io.gantry.runtime.http;

import io.gantry.runtime.kafka.EventProcessor;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.async.publisher.Publishers;
import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import io.micronaut.management.health.indicator.annotation.Liveness;
import jakarta.inject.Singleton;
import org.reactivestreams.Publisher;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code event-loops} on {@code /health}: DOWN when a loop of the service stopped for good
 * ({@link EventProcessor#failure()}: an Error, e.g. a class of another build), with the error by loop; UP otherwise
 * (starting, restoring, owning the work or standing by are all normal). It is a liveness check too
 * ({@code /health/liveness}), so an orchestrator restarts the instance instead of leaving it up doing nothing.
 */
@Singleton
@Liveness
@Requires(beans = EventLoops.class)
public class EventLoopHealthIndicator implements HealthIndicator {
    static final String NAME = "event-loops";

    private final EventLoops loops;

    public EventLoopHealthIndicator(EventLoops loops) {
        this.loops = loops;
    }

    @Override
    public Publisher<HealthResult> getResult() {
        Map<String, Throwable> failures = new LinkedHashMap<>();
        for (EventProcessor p : loops.eventLoops()) {
            failures.put(p.name(), p.failure().orElse(null));
        }
        return Publishers.just(result(failures));
    }

    /** The result for each loop by name and the Error that stopped it (null: it runs). */
    static HealthResult result(Map<String, Throwable> failures) {
        Map<String, Object> details = new LinkedHashMap<>();
        boolean down = false;
        for (Map.Entry<String, Throwable> e : failures.entrySet()) {
            down |= e.getValue() != null;
            details.put(e.getKey(), e.getValue() == null ? "running" : "stopped: " + e.getValue());
        }
        return HealthResult.builder(NAME, down ? HealthStatus.DOWN : HealthStatus.UP).details(details).build();
    }
}
