package io.gantry.recovery.kafka;

import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.kafka.EventProcessor;
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
public class RecoveryProcessor implements AutoCloseable {
    private final EventProcessor processor;
    private final AtomicReference<RecoveryHandler> current = new AtomicReference<>();

    public RecoveryProcessor(@Value("${kafka.bootstrap.servers}") String bootstrap,
                             @Value("${gantry.kafka.partitions:1}") int partitions,
                             @Value("${gantry.recovery.heartbeat-timeout:10s}") Duration heartbeatTimeout,
                             @Value("${gantry.recovery.max-restarts:3}") int maxRestarts,
                             @Value("${gantry.recovery.check-interval:1s}") Duration checkInterval) {
        RecoveryPolicy policy = new RecoveryPolicy(heartbeatTimeout, maxRestarts);
        Clock clock = Clock.systemUTC();
        this.processor = EventProcessor.builder(Service.RECOVERY, bootstrap)
                .inputs(Topics.PLACEMENT_NODE_EVENTS, Topics.PLACEMENT_HEARTBEAT_EVENTS, Topics.PLACEMENT_ALLOCATION_EVENTS)
                .restoreFrom(Topics.RECOVERY_NODE_EVENTS, Topics.RECOVERY_JOB_EVENTS, Topics.PLACEMENT_NODE_EVENTS)
                .handler(() -> {
                    RecoveryHandler h = new RecoveryHandler(policy, clock);
                    current.set(h);
                    return h;
                })
                .tickEvery(checkInterval)
                .clock(clock)
                .partitions(partitions)
                .build()
                .start();
    }

    /** The health of every known node, read on the loop thread. */
    public CompletableFuture<List<NodeHealth>> nodes() {
        return processor.submit(out -> current.get().nodes());
    }

    /** Whether silence counts yet (false from a start until the heartbeat input is caught up). */
    public CompletableFuture<Boolean> watching() {
        return processor.submit(out -> current.get().watching());
    }

    public boolean isReady() {
        return processor.isReady();
    }

    @PreDestroy
    @Override
    public void close() {
        processor.close();
    }
}
