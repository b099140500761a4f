package io.gantry.runtime.http;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;

/**
 * {@code gantry_instance_reporter} on {@code /prometheus} of admission and billing: 1 while this instance exports its
 * service's cluster-wide series ({@link ClusterReporter}), else 0. Of a service's instances exactly one says 1
 * (none for a moment during a rebalance), as {@code gantry_instance_owner} does for queue, placement and recovery.
 */
@Context
@Requires(beans = {ClusterReporter.class, MeterRegistry.class})
public class ReporterMetrics {
    public ReporterMetrics(ClusterReporter reporter, MeterRegistry registry) {
        Gauge.builder("gantry.instance.reporter", reporter, r -> r.reportsCluster() ? 1 : 0)
                .description("1 while this instance exports its service's cluster-wide series (jobs by state, "
                        + "consumer lag, month-to-date figures), else 0")
                .register(registry);
    }
}
