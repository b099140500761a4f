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
        // restored from admission's checkpoint topic, placement's allocations and registrations
        all.stream().filter(f -> f instanceof RecoveryFact.CheckpointRecorded || f instanceof RecoveryFact.RunHeld
                || f instanceof RecoveryFact.RunReleased || f instanceof RecoveryFact.NodeControlSeen)
                .forEach(fresh::replay);
        recovery.nodes().forEach(n -> fresh.replay(new RecoveryFact.NodeKnown(n.nodeId())));
        recovery = fresh;
        return apply(recovery.onRestart(at(at)));
    }

    /** A backend reported a fault ({@code xid} null for a kind other than XID) at {@code at} on placement's clock. */
    RecoveryScenario fault(String eventId, String node, Integer gpu, FaultKind kind, Integer xid, double at) {
        return apply(recovery.onDeviceFault(new DeviceFaultReport(eventId, node, gpu, kind, xid, "", at(at))));
    }

    RecoveryScenario xid(String eventId, String node, int gpu, int xid, double at) {
        return fault(eventId, node, gpu, FaultKind.XID, xid, at);
    }

    /** Placement granted the run: {@code node:gpu,gpu} per node, e.g. {@code "sim-1:0,1"}. */
    RecoveryScenario granted(String jobId, int attempt, String... nodeGpus) {
        java.util.Map<String, java.util.Set<Integer>> held = new java.util.HashMap<>();
        for (String ng : nodeGpus) {
            String[] parts = ng.split(":");
            java.util.Set<Integer> gpus = new java.util.TreeSet<>();
            if (parts.length > 1 && !parts[1].isEmpty()) {
                for (String g : parts[1].split(",")) {
                    gpus.add(Integer.parseInt(g));
                }
            }
            held.put(parts[0], gpus);
        }
        return apply(recovery.onRunGranted(jobId, attempt, held));
    }

    RecoveryScenario released(String jobId, int attempt) {
        return apply(recovery.onRunReleased(jobId, attempt, false));
    }

    /** Placement re-registered the node (8 GPUs) at {@code at} with these cordoned GPUs. */
    RecoveryScenario registered(String node, double at, boolean cordoned, Integer... cordonedGpus) {
        return apply(recovery.onNodeControl(node, at(at), cordoned, java.util.Set.of(cordonedGpus),
                java.util.Set.of(0, 1, 2, 3, 4, 5, 6, 7)));
    }

    /** Placement released the run DEVICE_FAULT. */
    RecoveryScenario deviceFaultRelease(String jobId, int attempt, String... nodes) {
        return apply(recovery.onInfrastructureRelease(new InterruptedRun(jobId, "vision", attempt, List.of(nodes)),
                true));
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
                || f instanceof RecoveryFact.JobRequeued || f instanceof RecoveryFact.JobRecoveryAbandoned
                || f instanceof RecoveryFact.DeviceFaultDecided;
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
        if (f instanceof RecoveryFact.DeviceFaultDecided x) {
            return x.action() + " " + x.nodeId() + (x.gpuIndex() == null ? "" : "#" + x.gpuIndex()) + ": "
                    + x.message();
        }
        if (f instanceof RecoveryFact.JobRecoveryAbandoned x) {
            return "JobRecoveryAbandoned " + x.jobId() + "#" + x.interruptedAttempt() + ": " + x.message();
        }
        return f.toString();
    }

    static final class Builder {
        private Duration timeout = Duration.ofSeconds(10);
        private int maxRestarts = 3;
        private double phi = RecoveryPolicy.DEFAULT_PHI_THRESHOLD;
        private RecoveryPolicy.HealthPolicy health = RecoveryPolicy.HealthPolicy.defaults();
        // the scenarios judge nodes one by one, most of them a node alone in its pool: without the hold a pool gets
        // when all its nodes fall silent (DisruptionHoldTest has its own)
        private Duration disruptionHold = Duration.ZERO;

        Builder disruptionHoldSeconds(long seconds) {
            this.disruptionHold = Duration.ofSeconds(seconds);
            return this;
        }

        Builder phiThreshold(double threshold) {
            this.phi = threshold;
            return this;
        }

        /** Cordon the node (not the GPU) on a hardware fault. */
        Builder cordonNodes() {
            this.health = new RecoveryPolicy.HealthPolicy(true, health.drainAfter(), health.drainWindow());
            return this;
        }

        Builder drainAfter(int faults, long windowSeconds) {
            this.health = new RecoveryPolicy.HealthPolicy(health.cordonNode(), faults, Duration.ofSeconds(windowSeconds));
            return this;
        }

        Builder timeoutSeconds(long seconds) {
            this.timeout = Duration.ofSeconds(seconds);
            return this;
        }

        Builder maxRestarts(int n) {
            this.maxRestarts = n;
            return this;
        }

        RecoveryScenario build() {
            return new RecoveryScenario(new RecoveryPolicy(timeout, maxRestarts, phi, health, disruptionHold));
        }
    }
}
