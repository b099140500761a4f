package io.gantry.recovery.core;

import io.gantry.recovery.core.RecoveryFact.GraceStarted;
import io.gantry.recovery.core.RecoveryFact.JobRecoveryAbandoned;
import io.gantry.recovery.core.RecoveryFact.JobRequeued;
import io.gantry.recovery.core.RecoveryFact.NodeFailed;
import io.gantry.recovery.core.RecoveryFact.NodeKnown;
import io.gantry.recovery.core.RecoveryFact.NodeRecovered;
import io.gantry.recovery.core.RecoveryFact.NodeSeen;
import io.gantry.recovery.core.RecoveryFact.PoolResumed;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Recovery's state machine: node liveness and the requeue decision.
 *
 * <p>Decision methods ({@link #onSignOfLife}, {@link #onRestart}, {@link #onCaughtUp}, {@link #tick},
 * {@link #onNodeFailureRelease})
 * never change state; they return the facts that follow, and the caller replays them. So a decision that is
 * never committed (a crash before the Kafka transaction commits) leaves no trace, and restoring from the
 * published facts rebuilds exactly the state that produced them.
 */
public final class Recovery {
    private final RecoveryPolicy policy;
    // TreeMap: tick() reports overdue nodes in a stable order, which keeps tests and replays deterministic
    private final Map<String, Node> nodes = new TreeMap<>();
    private final Map<String, Job> jobs = new HashMap<>();
    /** Per job, per attempt, its newest checkpoint (highest step; the later report on a tie). */
    private final Map<String, TreeMap<Integer, RecoveryFact.CheckpointRecorded>> checkpoints = new HashMap<>();
    // silence counts only while watching: a new core watches (nothing to catch up with), a restart pauses it
    private boolean watching = true;
    private final Devices devices;
    /** Heartbeat gaps a node's phi is computed over (the newest); fewer than MIN_GAPS: the timeout alone decides. */
    static final int MAX_GAPS = 32;
    static final int MIN_GAPS = 4;
    /** However jittery a node's history, a silence this many timeouts long fails it. */
    static final int MAX_TIMEOUTS = 3;

    public Recovery(RecoveryPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.devices = new Devices(policy.health());
    }

    public RecoveryPolicy policy() {
        return policy;
    }

    // ---------------------------------------------------------------- decisions

    /** A registration or heartbeat of the node was received now; a failed node recovers. */
    public List<RecoveryFact> onSignOfLife(String nodeId, Instant receivedAt) {
        requireNodeId(nodeId);
        Objects.requireNonNull(receivedAt, "receivedAt");
        List<RecoveryFact> facts = new ArrayList<>(3);
        Node node = nodes.get(nodeId);
        if (node != null && node.state == NodeState.HEALTHY && !policy.disruptionHold().isZero()
                && silentAsAWhole(node.pool, receivedAt)) {
            facts.add(new PoolResumed(node.pool, receivedAt));
        }
        if (node != null && node.state == NodeState.FAILED) {
            facts.add(new NodeRecovered(nodeId, receivedAt,
                    "heartbeat received after " + seconds(Duration.between(node.failedAt, receivedAt))
                            + " of failure"));
        }
        facts.add(new NodeSeen(nodeId, receivedAt));
        return facts;
    }

    /**
     * The node's registration was received. A first registration is a sign of life; a re-registration of a node
     * already declared failed is not (placement re-publishes registrations when an operator cordons a node or a
     * drain starts or ends, and at every placement restart): only a heartbeat recovers a failed node.
     */
    public List<RecoveryFact> onRegistration(String nodeId, Instant receivedAt) {
        return onRegistration(nodeId, null, receivedAt);
    }

    /**
     * {@link #onRegistration(String, Instant)} of a node placement lists in {@code pool} (null: not said); a node
     * whose pool is new or changed is known in it from now (for the disruption hold, see {@link #tick}).
     */
    public List<RecoveryFact> onRegistration(String nodeId, String pool, Instant receivedAt) {
        requireNodeId(nodeId);
        Node node = nodes.get(nodeId);
        List<RecoveryFact> facts = new ArrayList<>(3);
        if (pool != null && (node == null || !pool.equals(node.pool))) {
            facts.add(new NodeKnown(nodeId, pool));
        }
        if (node != null && node.state == NodeState.FAILED) {
            return facts;
        }
        facts.addAll(onSignOfLife(nodeId, receivedAt));
        return facts;
    }

    /**
     * Recovery (re)started. Nothing is declared failed until {@link #onCaughtUp} says the heartbeats that arrived
     * meanwhile have been read: a restarted consumer may wait a whole session timeout before it owns its
     * partitions (after a kill -9 the group waits for the dead member), and that wait is not the nodes' silence.
     */
    public List<RecoveryFact> onRestart(Instant now) {
        return List.of(new GraceStarted(Objects.requireNonNull(now, "now"), false));
    }

    /**
     * Recovery has read its heartbeat input up to where it stood when recovery got it. Every known node gets a
     * fresh grace period from now: while recovery was down or catching up nobody measured silence.
     */
    public List<RecoveryFact> onCaughtUp(Instant now) {
        return List.of(new GraceStarted(Objects.requireNonNull(now, "now"), true));
    }

    /**
     * Declares failed every healthy node silent for longer than the timeout whose silence is also suspicious enough
     * by its own heartbeat history (phi accrual, see {@link #phi}); each failure is declared once. A node whose
     * heartbeats came steadily fails right at the timeout; one whose heartbeats have been jittery (delayed, bunched)
     * gets longer, up to {@value #MAX_TIMEOUTS} timeouts. Not while the node's pool is held ({@link #heldPools}).
     */
    public List<RecoveryFact> tick(Instant now) {
        Objects.requireNonNull(now, "now");
        if (!watching) {
            return List.of();
        }
        List<RecoveryFact> facts = new ArrayList<>();
        Duration timeout = policy.heartbeatTimeout();
        java.util.Set<String> held = heldPools(now);
        for (Node node : nodes.values()) {
            if (node.state != NodeState.HEALTHY || node.lastSeenAt == null || held.contains(node.pool)) {
                continue;
            }
            Duration silence = Duration.between(node.lastSeenAt, now);
            if (silence.compareTo(timeout) <= 0) {
                continue;
            }
            double phiAtTimeout = phi(node, timeout.toMillis());
            boolean capped = silence.compareTo(timeout.multipliedBy(MAX_TIMEOUTS)) > 0;
            if (!capped && phi(node, silence.toMillis()) < policy.phiThreshold()) {
                continue; // suspected, not yet failed: this node's heartbeats have been irregular
            }
            String why = "no heartbeat for " + seconds(silence) + " (timeout " + seconds(timeout) + ")";
            if (phiAtTimeout < policy.phiThreshold()) {
                why += "; its heartbeats were irregular (mean gap " + seconds(Duration.ofMillis((long) mean(node)))
                        + "), so the silence counted only once it was " + (capped ? MAX_TIMEOUTS + " timeouts long"
                        : "this improbable");
            }
            facts.add(new NodeFailed(node.nodeId, now, node.lastHeartbeatAt, why));
        }
        return facts;
    }

    /**
     * The phi-accrual suspicion (Hayashibara et al.) that a node silent for {@code silenceMillis} is gone, from the
     * gaps between its recent heartbeats: -log10 of the probability that a gap is at least that long, with the gaps
     * taken as normally distributed (the logistic approximation Akka uses). Infinite with fewer than
     * {@value #MIN_GAPS} gaps, so the timeout alone decides until there is a history. The deviation is at least a
     * tenth of the mean and 100 ms: a perfectly regular history must not turn a small delay into certainty.
     */
    static double phi(Node node, long silenceMillis) {
        if (node.gaps.size() < MIN_GAPS) {
            return Double.POSITIVE_INFINITY;
        }
        double mean = mean(node);
        double var = 0;
        for (long g : node.gaps) {
            var += (g - mean) * (g - mean);
        }
        double std = Math.max(Math.sqrt(var / node.gaps.size()), Math.max(mean / 10, 100));
        double y = (silenceMillis - mean) / std;
        double e = Math.exp(-y * (1.5976 + 0.070566 * y * y));
        double p = silenceMillis > mean ? e / (1.0 + e) : 1.0 - 1.0 / (1.0 + e);
        return p <= 0 ? Double.POSITIVE_INFINITY : -Math.log10(p);
    }

    private static double mean(Node node) {
        double sum = 0;
        for (long g : node.gaps) {
            sum += g;
        }
        return node.gaps.isEmpty() ? 0 : sum / node.gaps.size();
    }

    /**
     * Placement released a run because a node failed: requeue it while the job has restarts left, else abandon
     * it. An attempt that was already decided (a redelivered or repeated release) yields nothing.
     */
    public List<RecoveryFact> onNodeFailureRelease(InterruptedRun run) {
        return onInfrastructureRelease(run, false);
    }

    /**
     * Placement stopped a run because of an infrastructure failure: a node failed ({@code deviceFault} false) or a
     * device it held had a hardware fault (true). Requeue it while the job's failure budget
     * ({@code maxRestarts}, shared by both causes) lasts, else abandon it; the sentence names the cause. An attempt
     * already decided yields nothing.
     */
    public List<RecoveryFact> onInfrastructureRelease(InterruptedRun run, boolean deviceFault) {
        Objects.requireNonNull(run, "run");
        Job job = jobs.get(run.jobId());
        if (job != null && run.attempt() <= job.lastDecidedAttempt) {
            return List.of();
        }
        int restartsSoFar = job == null ? 0 : job.restarts;
        if (restartsSoFar < policy.maxRestarts()) {
            RecoveryFact.CheckpointRecorded from = resumePoint(run.jobId(), run.attempt());
            return List.of(new JobRequeued(run.jobId(), run.tenant(), run.attempt(),
                    (deviceFault ? faultyDevice(run) : failedNodes(run)) + "; restart " + (restartsSoFar + 1) + " of "
                            + policy.maxRestarts()
                            + (from == null ? "" : "; resumes from step " + from.step() + " (" + from.path() + ")"),
                    from == null ? null : from.path()));
        }
        return List.of(new JobRecoveryAbandoned(run.jobId(), run.tenant(), run.attempt(),
                (deviceFault ? faultyDevice(run) + "; " : "") + "restart limit " + policy.maxRestarts() + " reached"));
    }

    /**
     * A backend reported a device fault: classify it (application or hardware, {@link XidCatalog}) and decide what
     * placement does; the runs the device hits come from the live allocations joined with the fault. Nothing for a
     * report already decided, a failed pre-flight check (placement handled it), or a hardware fault of a device or
     * node already out of service (a repeat or a flood: bounded work, nothing published).
     */
    public List<RecoveryFact> onDeviceFault(DeviceFaultReport report) {
        return devices.decide(Objects.requireNonNull(report, "report"));
    }

    /** Placement granted the run; per node the GPU indices it holds (the table device faults are joined with). */
    public List<RecoveryFact> onRunGranted(String jobId, int attempt, Map<String, java.util.Set<Integer>> gpusByNode) {
        return List.of(new RecoveryFact.RunHeld(jobId, attempt, gpusByNode));
    }

    /**
     * Placement released the run; {@code jobOver}: because the job ended for good (the run succeeded, or the job was
     * cancelled), so nothing kept for its next resume is needed any more.
     */
    public List<RecoveryFact> onRunReleased(String jobId, int attempt, boolean jobOver) {
        RecoveryFact.RunReleased released = new RecoveryFact.RunReleased(jobId, attempt);
        return jobOver ? List.of(released, new RecoveryFact.JobOver(jobId)) : List.of(released);
    }

    /** Placement (re-)registered the node with these control labels at {@code at} (placement's clock). */
    public List<RecoveryFact> onNodeControl(String nodeId, Instant at, boolean cordoned,
                                            java.util.Set<Integer> cordonedGpus, java.util.Set<Integer> gpus) {
        return List.of(new RecoveryFact.NodeControlSeen(nodeId, at, cordoned, cordonedGpus, gpus));
    }

    /** The jobs whose live runs hold the GPU of the node (any of it for {@code gpuIndex} null), by id. */
    public List<String> runsHit(String nodeId, Integer gpuIndex) {
        return devices.affected(nodeId, gpuIndex);
    }

    /** GPUs of the node recovery cordoned and has not seen back in service. */
    public java.util.Set<Integer> cordonedGpus(String nodeId) {
        return devices.cordonedGpus(nodeId);
    }

    public boolean drained(String nodeId) {
        return devices.drained(nodeId);
    }

    /**
     * A node with something out of service after hardware faults, as recovery last decided and saw it.
     *
     * @param cordonedGpus GPUs cordoned, ascending
     * @param nodeCordoned the whole node is cordoned (node-wide fault, node policy or drain)
     * @param drained      the node was drained for repair
     */
    public record OutOfService(String nodeId, List<Integer> cordonedGpus, boolean nodeCordoned, boolean drained) {
    }

    /** Every node with a GPU or itself out of service after hardware faults, by node id. */
    public List<OutOfService> outOfService() {
        return devices.outOfService();
    }

    private String faultyDevice(InterruptedRun run) {
        RecoveryFact.DeviceFaultDecided d = devices.faultOf(run.jobId(), run.nodeIds());
        if (d == null) {
            return "a device of the allocation had a hardware fault";
        }
        String where = d.gpuIndex() == null ? "node " + d.nodeId() : "GPU " + d.gpuIndex() + " of " + d.nodeId();
        String what = d.kind() == FaultKind.XID ? "Xid " + d.xid() + ": " + XidCatalog.of(d.xid()).meaning()
                : d.kind().name();
        return where + " failed (" + what + ")";
    }

    /** A run reported a committed checkpoint: remembered for the job's next resume. */
    public List<RecoveryFact> onCheckpoint(String jobId, int attempt, long step, String path) {
        return List.of(new RecoveryFact.CheckpointRecorded(jobId, attempt, step, path));
    }

    /**
     * Where an interruption of {@code attempt} resumes: the newest checkpoint of the latest attempt up to it that has
     * one (a later attempt resumed from an earlier checkpoint and went on from there), or null. Never a checkpoint of
     * another job or of a later attempt.
     */
    public RecoveryFact.CheckpointRecorded resumePoint(String jobId, int attempt) {
        TreeMap<Integer, RecoveryFact.CheckpointRecorded> byAttempt = checkpoints.get(jobId);
        if (byAttempt == null) {
            return null;
        }
        Map.Entry<Integer, RecoveryFact.CheckpointRecorded> e = byAttempt.floorEntry(attempt);
        return e == null ? null : e.getValue();
    }

    // ---------------------------------------------------------------- the only mutator

    public void replay(RecoveryFact fact) {
        // Java 17: no pattern matching for switch yet, so an instanceof chain over the sealed hierarchy
        if (fact instanceof NodeSeen f) {
            Node node = node(f.nodeId());
            if (node.lastArrival != null && !f.receivedAt().isBefore(node.lastArrival)) {
                // a gap is counted at most as the timeout: a longer silence that phi tolerated must not make the
                // next one still more tolerable (the tolerance would feed on itself)
                node.gaps.addLast(Math.min(Duration.between(node.lastArrival, f.receivedAt()).toMillis(),
                        policy.heartbeatTimeout().toMillis()));
                if (node.gaps.size() > MAX_GAPS) {
                    node.gaps.removeFirst();
                }
            }
            node.lastArrival = f.receivedAt();
            node.lastSeenAt = f.receivedAt();
            node.lastHeartbeatAt = f.receivedAt();
        } else if (fact instanceof NodeKnown f) {
            Node node = node(f.nodeId());
            if (f.pool() != null) {
                node.pool = f.pool();
            }
        } else if (fact instanceof PoolResumed f) {
            // the time placement was away is no heartbeat gap of the pool's nodes, and no silence of theirs
            for (Node node : nodes.values()) {
                if (node.state == NodeState.HEALTHY && node.pool.equals(f.pool())) {
                    node.lastSeenAt = f.at();
                    node.lastArrival = null;
                }
            }
        } else if (fact instanceof GraceStarted f) {
            // the time recovery was down is no heartbeat gap
            nodes.values().forEach(n -> {
                n.lastSeenAt = f.at();
                n.lastArrival = null;
            });
            watching = f.watching();
        } else if (fact instanceof RecoveryFact.DeviceFaultDecided || fact instanceof RecoveryFact.RunHeld
                || fact instanceof RecoveryFact.RunReleased || fact instanceof RecoveryFact.NodeControlSeen) {
            devices.replay(fact);
        } else if (fact instanceof NodeFailed f) {
            Node node = node(f.nodeId());
            node.state = NodeState.FAILED;
            node.lastArrival = null; // the outage is no heartbeat gap
            node.failedAt = f.failedAt();
            if (f.lastHeartbeatAt() != null) {
                node.lastHeartbeatAt = f.lastHeartbeatAt();
            }
        } else if (fact instanceof NodeRecovered f) {
            Node node = node(f.nodeId());
            node.state = NodeState.HEALTHY;
            node.failedAt = null;
            node.lastSeenAt = f.recoveredAt();
        } else if (fact instanceof JobRequeued f) {
            Job job = jobs.computeIfAbsent(f.jobId(), id -> new Job());
            job.restarts++;
            job.lastDecidedAttempt = Math.max(job.lastDecidedAttempt, f.interruptedAttempt());
        } else if (fact instanceof RecoveryFact.CheckpointRecorded f) {
            checkpoints.computeIfAbsent(f.jobId(), id -> new TreeMap<>()).merge(f.attempt(), f,
                    (old, now) -> now.step() >= old.step() ? now : old);
        } else if (fact instanceof RecoveryFact.JobOver f) {
            jobs.remove(f.jobId());
            checkpoints.remove(f.jobId());
        } else if (fact instanceof JobRecoveryAbandoned f) {
            Job job = jobs.computeIfAbsent(f.jobId(), id -> new Job());
            job.lastDecidedAttempt = Math.max(job.lastDecidedAttempt, f.interruptedAttempt());
        } else {
            throw new IllegalArgumentException("unknown fact " + fact);
        }
    }

    public void replayAll(List<? extends RecoveryFact> facts) {
        facts.forEach(this::replay);
    }

    // ---------------------------------------------------------------- queries

    /** Every known node, ordered by id. */
    public List<NodeHealth> nodes() {
        return nodes.values().stream()
                .map(n -> new NodeHealth(n.nodeId, n.state, n.lastSeenAt, n.lastHeartbeatAt, n.failedAt))
                .toList();
    }

    /**
     * The pools whose nodes are not declared failed at {@code now} although silent: every healthy node of the pool
     * that was ever seen has been silent past the timeout, for less than the timeout plus the disruption hold since
     * the newest heartbeat of any of them. Placement sends every node's heartbeats, so a pool that falls silent as a
     * whole is placement restarting or failing over (a 10 s timeout is shorter than either) far likelier than every
     * node dying together, and declaring them failed would stop every run of the pool. Once any node of the pool
     * beats again ({@link RecoveryFact.PoolResumed}) or the hold is over, its nodes are judged one by one again.
     * Empty when the hold is zero.
     */
    public java.util.SortedSet<String> heldPools(Instant now) {
        java.util.SortedSet<String> held = new java.util.TreeSet<>();
        if (policy.disruptionHold().isZero()) {
            return held;
        }
        Map<String, Instant> newest = new HashMap<>();
        java.util.Set<String> beating = new java.util.HashSet<>();
        for (Node node : nodes.values()) {
            if (node.state != NodeState.HEALTHY || node.lastSeenAt == null) {
                continue;
            }
            if (Duration.between(node.lastSeenAt, now).compareTo(policy.heartbeatTimeout()) <= 0) {
                beating.add(node.pool);
            }
            newest.merge(node.pool, node.lastSeenAt, (a, b) -> a.isAfter(b) ? a : b);
        }
        newest.forEach((pool, last) -> {
            if (!beating.contains(pool)
                    && now.isBefore(last.plus(policy.heartbeatTimeout()).plus(policy.disruptionHold()))) {
                held.add(pool);
            }
        });
        return held;
    }

    /** Whether every healthy node of {@code pool} that was ever seen has been silent past the timeout at {@code t}. */
    private boolean silentAsAWhole(String pool, Instant t) {
        boolean any = false;
        for (Node node : nodes.values()) {
            if (node.state != NodeState.HEALTHY || node.lastSeenAt == null || !node.pool.equals(pool)) {
                continue;
            }
            if (Duration.between(node.lastSeenAt, t).compareTo(policy.heartbeatTimeout()) <= 0) {
                return false;
            }
            any = true;
        }
        return any;
    }

    /** False between a restart and catching up with the input: no node is declared failed meanwhile. */
    /** The attempt of the job's run that holds devices, or null when it holds none. */
    public Integer heldAttempt(String jobId) {
        return devices.heldAttempt(jobId);
    }

    public boolean watching() {
        return watching;
    }

    public NodeState state(String nodeId) {
        Node node = nodes.get(nodeId);
        return node == null ? null : node.state;
    }

    /** How many times the job has been requeued so far. */
    public int restarts(String jobId) {
        Job job = jobs.get(jobId);
        return job == null ? 0 : job.restarts;
    }

    // ---------------------------------------------------------------- helpers

    private String failedNodes(InterruptedRun run) {
        TreeSet<String> failed = new TreeSet<>();
        for (String id : run.nodeIds()) {
            if (state(id) == NodeState.FAILED) {
                failed.add(id);
            }
        }
        if (failed.isEmpty()) {
            // placement may release before our NodeFailed reached it through another path; still say why
            return "a node of the allocation failed";
        }
        return (failed.size() == 1 ? "node " : "nodes ") + String.join(", ", failed) + " failed";
    }

    /** {@code 12 s} for whole seconds, {@code 10.2 s} otherwise (tenths, truncated: exact enough for a sentence). */
    static String seconds(Duration d) {
        long millis = Math.max(0, d.toMillis());
        long whole = millis / 1000;
        long tenths = (millis % 1000) / 100;
        return millis % 1000 == 0 ? whole + " s" : whole + "." + tenths + " s";
    }

    private Node node(String nodeId) {
        return nodes.computeIfAbsent(nodeId, Node::new);
    }

    private static void requireNodeId(String nodeId) {
        if (nodeId == null || nodeId.isBlank()) {
            throw new IllegalArgumentException("nodeId must not be blank");
        }
    }

    static final class Node {
        final String nodeId;
        /** The pool placement lists the node in (its registrations); "" until one said. */
        String pool = "";
        /** Gaps between received heartbeats, newest last, in milliseconds (at most MAX_GAPS). */
        final java.util.ArrayDeque<Long> gaps = new java.util.ArrayDeque<>();
        /** When the last heartbeat of this process's watch arrived; null after a (re)start. */
        Instant lastArrival;
        NodeState state = NodeState.HEALTHY;
        Instant lastSeenAt;
        Instant lastHeartbeatAt;
        Instant failedAt;

        Node(String nodeId) {
            this.nodeId = nodeId;
        }
    }

    private static final class Job {
        int restarts;
        int lastDecidedAttempt;
    }
}
