package io.gantry.recovery.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Fluent driver for the core: {@code aRecovery().timeout(10).build().heartbeat("a", 0).tick(12)}. Times are
 * seconds after an arbitrary origin. Every decision is replayed, as the Kafka adapter does, and the published
 * facts are recorded as short sentences for table assertions.
 */
final class RecoveryScenario {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private Recovery recovery;
    private final List<RecoveryFact> published = new ArrayList<>();
    private final List<RecoveryFact> all = new ArrayList<>();

    private RecoveryScenario(RecoveryPolicy policy) {
        this.recovery = new Recovery(policy);
    }

    static Builder aRecovery() {
        return new Builder();
    }

    static Instant at(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }

    RecoveryScenario heartbeat(String node, double at) {
        return apply(recovery.onSignOfLife(node, at(at)));
    }

    RecoveryScenario registration(String node, double at) {
        return apply(recovery.onRegistration(node, at(at)));
    }

    RecoveryScenario tick(double at) {
        return apply(recovery.tick(at(at)));
    }

    RecoveryScenario nodeFailure(String jobId, int attempt, String... nodes) {
        return apply(recovery.onNodeFailureRelease(new InterruptedRun(jobId, "vision", attempt, List.of(nodes))));
    }

    /**
     * Simulates a process restart: a fresh core rebuilt only from the published facts (what recovery's topics
     * hold) plus the nodes known from the registry, then the restart's grace period.
     */
    RecoveryScenario restart(double at) {
        Recovery fresh = new Recovery(recovery.policy());
        published.forEach(fresh::replay);
        // restored from admission's checkpoint topic
        all.stream().filter(f -> f instanceof RecoveryFact.CheckpointRecorded).forEach(fresh::replay);
        recovery.nodes().forEach(n -> fresh.replay(new RecoveryFact.NodeKnown(n.nodeId())));
        recovery = fresh;
        return apply(recovery.onRestart(at(at)));
    }

    /** A run of the job reported a committed checkpoint. */
    RecoveryScenario checkpoint(String jobId, int attempt, long step, String path) {
        return apply(recovery.onCheckpoint(jobId, attempt, step, path));
    }

    /** The restarted loop has read the heartbeats that waited for it. */
    RecoveryScenario caughtUp(double at) {
        return apply(recovery.onCaughtUp(at(at)));
    }

    RecoveryScenario apply(List<RecoveryFact> facts) {
        for (RecoveryFact f : facts) {
            recovery.replay(f);
            all.add(f);
            if (isPublished(f)) {
                published.add(f);
            }
        }
        return this;
    }

    static boolean isPublished(RecoveryFact f) {
        return f instanceof RecoveryFact.NodeFailed || f instanceof RecoveryFact.NodeRecovered
                || f instanceof RecoveryFact.JobRequeued || f instanceof RecoveryFact.JobRecoveryAbandoned;
    }

    Recovery core() {
        return recovery;
    }

    List<RecoveryFact> publishedFacts() {
        return List.copyOf(published);
    }

    List<RecoveryFact> allFacts() {
        return List.copyOf(all);
    }

    /** Published facts as sentences: {@code NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)}. */
    List<String> published() {
        return published.stream().map(RecoveryScenario::describe).toList();
    }

    static String describe(RecoveryFact f) {
        if (f instanceof RecoveryFact.NodeFailed x) {
            return "NodeFailed " + x.nodeId() + ": " + x.message();
        }
        if (f instanceof RecoveryFact.NodeRecovered x) {
            return "NodeRecovered " + x.nodeId();
        }
        if (f instanceof RecoveryFact.JobRequeued x) {
            return "JobRequeued " + x.jobId() + "#" + x.interruptedAttempt() + ": " + x.message();
        }
        if (f instanceof RecoveryFact.JobRecoveryAbandoned x) {
            return "JobRecoveryAbandoned " + x.jobId() + "#" + x.interruptedAttempt() + ": " + x.message();
        }
        return f.toString();
    }

    static final class Builder {
        private Duration timeout = Duration.ofSeconds(10);
        private int maxRestarts = 3;

        Builder timeoutSeconds(long seconds) {
            this.timeout = Duration.ofSeconds(seconds);
            return this;
        }

        Builder maxRestarts(int n) {
            this.maxRestarts = n;
            return this;
        }

        RecoveryScenario build() {
            return new RecoveryScenario(new RecoveryPolicy(timeout, maxRestarts));
        }
    }
}
