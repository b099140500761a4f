package io.gantry.placement.backend.kubernetes;

import io.gantry.placement.backend.ExecutionBackend;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;

/**
 * Prometheus gauges of the Kubernetes backend: {@code gantry_placement_kubernetes_foreign_pods} and
 * {@code gantry_placement_kubernetes_foreign_gpus} (pods Gantry did not create holding GPUs on Gantry's nodes, and
 * their GPUs and MIG instances: capacity taken outside the one entrance), as the last scan found them. No labels:
 * the log names each pod and its node.
 */
@Context
@Requires(property = "gantry.placement.backend", value = KubernetesBackend.NAME)
public class KubernetesMetrics {
    public KubernetesMetrics(MeterRegistry registry, ExecutionBackend backend) {
        if (!(backend instanceof KubernetesBackend kubernetes)) {
            return;
        }
        Gauge.builder("gantry.placement.kubernetes.foreign.pods", kubernetes, b -> b.foreignPods().size())
                .description("Pods Gantry did not create holding GPUs on Gantry's nodes (pending or running)")
                .register(registry);
        Gauge.builder("gantry.placement.kubernetes.foreign.gpus", kubernetes, b -> b.foreignPods().stream()
                        .mapToLong(KubernetesBackend.ForeignPod::gpus).sum())
                .description("GPUs and MIG instances held on Gantry's nodes by pods Gantry did not create")
                .register(registry);
    }
}
