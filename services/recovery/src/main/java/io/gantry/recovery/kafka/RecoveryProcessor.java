package io.gantry.recovery.kafka;

import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.runtime.kafka.ServiceLoop;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Recovery's one event loop (transactional): node events and allocation releases in, node health and job
 * recovery decisions out. State is restored from recovery's own topics, plus the node registry so that nodes
 * that never failed are watched again after a restart.
 */
@Context
public class RecoveryProcessor implements AutoCloseable, io.gantry.runtime.http.OwnedWork, io.gantry.runtime.http.EventLoops {
    private final EventProcessor processor;
    private final AtomicReference<RecoveryHandler> current = new AtomicReference<>();

    public RecoveryProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                             @Value("${gantry.kafka.partitions:1}") int partitions,
                             @Value("${gantry.recovery.heartbeat-timeout:10s}") Duration heartbeatTimeout,
                             @Value("${gantry.recovery.max-restarts:3}") int maxRestarts,
                             @Value("${gantry.recovery.check-interval:1s}") Duration checkInterval,
                             @Value("${gantry.recovery.phi-threshold:8.0}") double phiThreshold,
                             @Value("${gantry.recovery.health.cordon-scope:device}") String cordonScope,
                             @Value("${gantry.recovery.health.drain-after:3}") int drainAfter,
                             @Value("${gantry.recovery.health.drain-window:1h}") Duration drainWindow,
                             @Value("${gantry.recovery.disruption-hold:5m}") Duration disruptionHold,
                             io.gantry.runtime.http.Instance instance) {
        if (!cordonScope.equals("device") && !cordonScope.equals("node")) {
            throw new io.micronaut.context.exceptions.ConfigurationException(
                    "gantry.recovery.health.cordon-scope must be `device` or `node`, was " + cordonScope);
        }
        RecoveryPolicy policy;
        try {
            policy = new RecoveryPolicy(heartbeatTimeout, maxRestarts, phiThreshold,
                    new RecoveryPolicy.HealthPolicy(cordonScope.equals("node"), drainAfter, drainWindow),
                    disruptionHold);
        } catch (IllegalArgumentException e) {
            throw new io.micronaut.context.exceptions.ConfigurationException("gantry.recovery: " + e.getMessage(), e);
        }
        this.processor = instance.configure(EventProcessor.builder(Service.RECOVERY, bootstrap))
                .loop(loop(policy, Clock.systemUTC(), checkInterval).observed(h -> current.set((RecoveryHandler) h)))
                .clock(Clock.systemUTC())
                .partitions(partitions)
                .build()
                .start();
    }

    /**
     * Recovery's event loop, declared once: node registrations, heartbeats, releases and reported checkpoints in; its
     * own decisions, the node registry (node ids only) and the checkpoints to restore from; a liveness check every
     * {@code checkInterval}.
     */
    public static ServiceLoop loop(RecoveryPolicy policy, Clock clock, Duration checkInterval) {
        return new ServiceLoop(Service.RECOVERY,
                List.of(Topics.PLACEMENT_NODE_EVENTS, Topics.PLACEMENT_HEARTBEAT_EVENTS,
                        Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                        Topics.PLACEMENT_DEVICE_EVENTS),
                // checkpoints are restored too: a resume after a restart still finds the newest one; the allocations
                // rebuild the live runs a device fault is joined with; the device decisions what is out of service
                List.of(Topics.RECOVERY_NODE_EVENTS, Topics.RECOVERY_JOB_EVENTS, Topics.RECOVERY_DEVICE_EVENTS,
                        Topics.PLACEMENT_NODE_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                        Topics.PLACEMENT_ALLOCATION_EVENTS),
                checkInterval, () -> new RecoveryHandler(policy, clock));
    }

    /** How the last start rebuilt the state (from a snapshot and the history after it, or the whole history). */
    public io.gantry.runtime.kafka.EventProcessor.Restored lastRestore() {
        return processor.lastRestore();
    }

    /** The health of every known node, read on the loop thread. */
    public CompletableFuture<List<NodeHealth>> nodes() {
        return processor.submit(out -> current.get().nodes());
    }

    /** Nodes with GPUs (or themselves) out of service after hardware faults, read on the loop thread. */
    public CompletableFuture<List<io.gantry.recovery.core.Recovery.OutOfService>> outOfService() {
        return processor.submit(out -> current.get().outOfService());
    }

    /** Whether silence counts yet (false from a start until the heartbeat input is caught up). */
    public CompletableFuture<Boolean> watching() {
        return processor.submit(out -> current.get().watching());
    }

    /** Whether this instance owns recovery's work and has its state (a standby forwards its requests). */
    public boolean isReady() {
        return processor.isOwner();
    }

    @Override
    public io.gantry.runtime.kafka.Ownership ownership() {
        return processor.ownership();
    }

    @PreDestroy
    @Override
    public void close() {
        processor.close();
    }

    @Override
    public java.util.List<EventProcessor> eventLoops() {
        return java.util.List.of(processor);
    }
}
