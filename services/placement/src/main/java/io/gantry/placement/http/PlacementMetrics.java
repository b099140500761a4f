package io.gantry.placement.http;

import io.gantry.placement.kafka.PlacementProcessor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;

/** Prometheus gauges: {@code gantry_placement_fragmentation} (0..1, refreshed every tick). */
@Context
public class PlacementMetrics {
    public PlacementMetrics(MeterRegistry registry, PlacementProcessor placement) {
        Gauge.builder("gantry.placement.fragmentation", placement, PlacementProcessor::fragmentation)
                .description("Share of free GPUs stranded on nodes that cannot host a typical request "
                        + "(gantry.placement.fragmentation.typical-gpus), averaged over the typical sizes")
                .register(registry);
    }
}
