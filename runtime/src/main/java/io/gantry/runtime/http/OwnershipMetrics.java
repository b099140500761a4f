package io.gantry.runtime.http;

import io.gantry.runtime.kafka.Ownership;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;

/**
 * {@code gantry_instance_owner} on {@code /prometheus}: 1 while this instance owns its service's work, 0 while it
 * stands by or starts. A standby's domain gauges are empty, so dashboards read the owner's (the one with 1).
 */
@Context
@Requires(beans = {OwnedWork.class, MeterRegistry.class})
public class OwnershipMetrics {
    public OwnershipMetrics(OwnedWork work, MeterRegistry registry) {
        Gauge.builder("gantry.instance.owner", work.ownership(), o -> o.role() == Ownership.Role.OWNER ? 1 : 0)
                .description("1 while this instance owns its service's work (queue, placement, recovery), else 0")
                .register(registry);
    }
}
