package io.gantry.recovery.http;

import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.core.NodeState;
import io.gantry.recovery.kafka.RecoveryProcessor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.TaskScheduler;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Named;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Node health as recovery sees it, as Prometheus metrics refreshed every {@code gantry.recovery.metrics.refresh}:
 * <ul>
 *   <li>{@code gantry_recovery_nodes{state}}: nodes HEALTHY or FAILED</li>
 *   <li>{@code gantry_recovery_node_up{node}}: 1 while the node is healthy, 0 once declared failed</li>
 *   <li>{@code gantry_recovery_node_heartbeat_age_seconds{node}}: silence since its last sign of life</li>
 *   <li>{@code gantry_recovery_node_failures_total}: nodes this process saw go from healthy to failed</li>
 * </ul>
 * Nodes are bounded by the inventory; jobs are never labels. Only the owner exports them: a standby exports none of
 * them, not even zeros, so a sum over the instances Prometheus scrapes is the cluster's figure. The failure counter
 * counts what this instance saw while it owned the work (from zero each time it takes it over).
 */
@Context
public class RecoveryMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(RecoveryMetrics.class);

    private final RecoveryProcessor recovery;
    private final MeterRegistry registry;
    private final MultiGauge nodes;
    private final MultiGauge up;
    private final MultiGauge heartbeatAge;
    /** Registered while this instance owns the work (null otherwise). */
    private Counter failures;
    private final Map<String, NodeState> lastState = new HashMap<>();

    private final java.util.concurrent.ScheduledFuture<?> refreshing;

    public RecoveryMetrics(RecoveryProcessor recovery, MeterRegistry registry,
            @Named(TaskExecutors.SCHEDULED) TaskScheduler scheduler,
            @Value("${gantry.recovery.metrics.refresh:5s}") java.time.Duration refresh) {
        this.recovery = recovery;
        this.registry = registry;
        this.nodes = MultiGauge.builder("gantry.recovery.nodes").description("Nodes by health state")
                .register(registry);
        this.up = MultiGauge.builder("gantry.recovery.node.up")
                .description("1 while the node is healthy, 0 once recovery declared it failed").register(registry);
        this.heartbeatAge = MultiGauge.builder("gantry.recovery.node.heartbeat.age").baseUnit("seconds")
                .description("Time since the node's last sign of life").register(registry);
        // the bean schedules itself and stops at close: a task that looked the bean up after the context closed
        // would create it again, and with it a second event loop
        this.refreshing = scheduler.scheduleWithFixedDelay(java.time.Duration.ofMillis(1000), refresh,
                this::refresh);
    }

    synchronized void refresh() {
        if (!recovery.isReady()) {
            if (recovery.ownership().role() == io.gantry.runtime.kafka.Ownership.Role.STANDBY) {
                // a standby (maybe the owner until a moment ago) reports nothing: the owner's series are the figures
                nodes.register(List.of(), true);
                up.register(List.of(), true);
                heartbeatAge.register(List.of(), true);
                if (failures != null) {
                    registry.remove(failures);
                    failures = null;
                }
                lastState.clear();
            }
            return;
        }
        try {
            if (failures == null) {
                failures = Counter.builder("gantry.recovery.node.failures")
                        .description("Nodes seen going from healthy to failed").register(registry);
            }
            publish(recovery.nodes().get(10, TimeUnit.SECONDS), Instant.now());
        } catch (Exception e) {
            LOG.warn("recovery metrics not refreshed; the next run retries: {}", e.toString());
        }
    }

    private void publish(List<NodeHealth> health, Instant now) {
        Map<NodeState, Integer> byState = new EnumMap<>(NodeState.class);
        for (NodeState s : NodeState.values()) {
            byState.put(s, 0);
        }
        List<MultiGauge.Row<?>> upRows = new ArrayList<>();
        List<MultiGauge.Row<?>> ageRows = new ArrayList<>();
        for (NodeHealth n : health) {
            byState.merge(n.state(), 1, Integer::sum);
            upRows.add(MultiGauge.Row.of(Tags.of("node", n.nodeId()), n.state() == NodeState.HEALTHY ? 1 : 0));
            Instant seen = n.lastHeartbeatAt() != null ? n.lastHeartbeatAt() : n.lastSeenAt();
            if (seen != null) {
                ageRows.add(MultiGauge.Row.of(Tags.of("node", n.nodeId()),
                        Math.max(0, Duration.between(seen, now).toMillis() / 1000.0)));
            }
            NodeState before = lastState.put(n.nodeId(), n.state());
            if (before == NodeState.HEALTHY && n.state() == NodeState.FAILED) {
                failures.increment();
            }
        }
        List<MultiGauge.Row<?>> stateRows = new ArrayList<>();
        byState.forEach((s, n) -> stateRows.add(MultiGauge.Row.of(Tags.of("state", s.name()), n)));
        nodes.register(stateRows, true);
        up.register(upRows, true);
        heartbeatAge.register(ageRows, true);
    }

    @PreDestroy
    void stop() {
        refreshing.cancel(false);
    }
}
