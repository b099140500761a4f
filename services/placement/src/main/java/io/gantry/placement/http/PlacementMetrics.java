package io.gantry.placement.http;

import io.gantry.placement.kafka.PlacementService;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;

/** Prometheus gauges: {@code gantry_placement_fragmentation} (0..1, refreshed every tick). */
@Context
public class PlacementMetrics {
    public PlacementMetrics(MeterRegistry registry, PlacementService placement) {
        Gauge.builder("gantry.placement.fragmentation", placement, PlacementService::fragmentation)
                .description("Share of free GPUs stranded on nodes that cannot host a typical request "
                        + "(gantry.placement.fragmentation.typical-gpus), averaged over the typical sizes")
                .register(registry);
    }
}
