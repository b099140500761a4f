package io.gantry.recovery.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.recovery.core.InterruptedRun;
import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.core.Recovery;
import io.gantry.recovery.core.RecoveryFact;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Maps recovery's topics to the core and back. Every decision is replayed into the core in the same batch that
 * publishes it, so the in-memory state is exactly what the committed topics say.
 */
final class RecoveryHandler implements EventHandler {
    private final Recovery core;
    private final Clock clock;

    RecoveryHandler(RecoveryPolicy policy, Clock clock) {
        this.core = new Recovery(policy);
        this.clock = clock;
    }

    List<NodeHealth> nodes() {
        return core.nodes();
    }

    boolean watching() {
        return core.watching();
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        if (topic.equals(Topics.RECOVERY_NODE_EVENTS) && value instanceof NodeHealthEvent e) {
            core.replay(WireMapping.fromWire(e));
        } else if (topic.equals(Topics.RECOVERY_JOB_EVENTS) && value instanceof RecoveryJobEvent e) {
            core.replay(WireMapping.fromWire(e));
        } else if (value instanceof CheckpointEvent e && e.getPayload() instanceof CheckpointCommitted c) {
            checkpoint(e, c);
        } else if (topic.equals(Topics.PLACEMENT_NODE_EVENTS) && value instanceof NodeEvent e
                && e.getNodeId() != null && !e.getNodeId().isBlank()) {
            // only the node's existence: its timestamps are on the sender's (possibly virtual) clock
            core.replay(new RecoveryFact.NodeKnown(e.getNodeId()));
        }
    }

    @Override
    public void restored(Output out) {
        apply(core.onRestart(clock.instant()), out);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        if (value instanceof NodeEvent e) {
            // liveness is measured when the heartbeat is received, on our clock, never by e.getOccurredAt()
            apply(core.onRegistration(e.getNodeId(), clock.instant()), out);
        } else if (value instanceof NodeHeartbeatEvent e) {
            apply(core.onSignOfLife(e.getNodeId(), clock.instant()), out);
        } else if (value instanceof CheckpointEvent e && e.getPayload() instanceof CheckpointCommitted c) {
            checkpoint(e, c);
        } else if (value instanceof AllocationEvent e && e.getPayload() instanceof AllocationReleased released
                && released.getReason() == ReleaseReason.NODE_FAILED) {
            apply(core.onNodeFailureRelease(interruptedRun(e.getJobId(), released)), out);
        }
    }

    @Override
    public void caughtUp(Instant now, Output out) {
        apply(core.onCaughtUp(clock.instant()), out);
    }

    /** Remembered for the job's next resume; validated (by the fact's constructor) before state changes. */
    private void checkpoint(CheckpointEvent e, CheckpointCommitted c) {
        core.onCheckpoint(e.getJobId(), c.getAttempt(), c.getStep(), c.getPath()).forEach(core::replay);
    }

    @Override
    public void tick(Instant now, Output out) {
        apply(core.tick(now), out);
    }

    private static InterruptedRun interruptedRun(String jobId, AllocationReleased released) {
        Set<String> nodes = new LinkedHashSet<>();
        for (TaskPlacement p : released.getPlacements()) {
            nodes.add(p.getNodeId());
        }
        // the constructor rejects a blank job, tenant or attempt < 1: thrown here, before any state changes
        return new InterruptedRun(jobId, released.getTenant(), released.getAttempt(), List.copyOf(nodes));
    }

    private void apply(List<RecoveryFact> facts, Output out) {
        Instant now = clock.instant();
        for (RecoveryFact fact : facts) {
            core.replay(fact);
            publish(fact, now, out);
        }
    }

    private static void publish(RecoveryFact fact, Instant now, Output out) {
        String eventId = UUID.randomUUID().toString();
        WireMapping.toNodeEvent(fact, eventId, now)
                .ifPresent(e -> out.send(Topics.RECOVERY_NODE_EVENTS, e.getNodeId(), e));
        WireMapping.toJobEvent(fact, eventId, now)
                .ifPresent(e -> out.send(Topics.RECOVERY_JOB_EVENTS, e.getJobId(), e));
    }
}
