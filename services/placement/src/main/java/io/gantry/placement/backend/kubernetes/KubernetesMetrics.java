package io.gantry.placement.backend.kubernetes;

import io.gantry.placement.kafka.PlacementProcessor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;

import java.util.List;

/**
 * Prometheus gauges of the Kubernetes backend, summed over the pools it runs:
 * {@code gantry_placement_kubernetes_foreign_pods} and {@code gantry_placement_kubernetes_foreign_gpus} (pods Gantry
 * did not create holding GPUs on Gantry's nodes, and their GPUs and MIG instances: capacity taken outside the one
 * entrance), as the last scan found them. No labels: the log names each pod and its node. None without a Kubernetes
 * pool.
 */
@Context
public class KubernetesMetrics {
    @jakarta.inject.Inject
    public KubernetesMetrics(MeterRegistry registry, PlacementProcessor placement) {
        this(registry, placement.backends(KubernetesBackend.class));
    }

    /** The gauges of these backends (none when there are none); they hold the list (a gauge's state is weak). */
    KubernetesMetrics(MeterRegistry registry, List<KubernetesBackend> kubernetes) {
        if (kubernetes.isEmpty()) {
            return;
        }
        Gauge.builder("gantry.placement.kubernetes.foreign.pods", kubernetes,
                        all -> all.stream().mapToLong(b -> b.foreignPods().size()).sum())
                .description("Pods Gantry did not create holding GPUs on Gantry's nodes (pending or running)")
                .strongReference(true).register(registry);
        Gauge.builder("gantry.placement.kubernetes.foreign.gpus", kubernetes, all -> all.stream()
                        .flatMap(b -> b.foreignPods().stream()).mapToLong(KubernetesBackend.ForeignPod::gpus).sum())
                .description("GPUs and MIG instances held on Gantry's nodes by pods Gantry did not create")
                .strongReference(true).register(registry);
    }
}
