package io.gantry.recovery.core;

import io.gantry.recovery.core.RecoveryFact.GraceStarted;
import io.gantry.recovery.core.RecoveryFact.JobRecoveryAbandoned;
import io.gantry.recovery.core.RecoveryFact.JobRequeued;
import io.gantry.recovery.core.RecoveryFact.NodeFailed;
import io.gantry.recovery.core.RecoveryFact.NodeKnown;
import io.gantry.recovery.core.RecoveryFact.NodeRecovered;
import io.gantry.recovery.core.RecoveryFact.NodeSeen;

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

    public Recovery(RecoveryPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    public RecoveryPolicy policy() {
        return policy;
    }

    // ---------------------------------------------------------------- decisions

    /** A registration or heartbeat of the node was received now; a failed node recovers. */
    public List<RecoveryFact> onSignOfLife(String nodeId, Instant receivedAt) {
        requireNodeId(nodeId);
        Objects.requireNonNull(receivedAt, "receivedAt");
        List<RecoveryFact> facts = new ArrayList<>(2);
        Node node = nodes.get(nodeId);
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
        requireNodeId(nodeId);
        Node node = nodes.get(nodeId);
        if (node != null && node.state == NodeState.FAILED) {
            return List.of();
        }
        return onSignOfLife(nodeId, receivedAt);
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

    /** Declares failed every healthy node silent for longer than the timeout; each failure is declared once. */
    public List<RecoveryFact> tick(Instant now) {
        Objects.requireNonNull(now, "now");
        if (!watching) {
            return List.of();
        }
        List<RecoveryFact> facts = new ArrayList<>();
        for (Node node : nodes.values()) {
            if (node.state != NodeState.HEALTHY || node.lastSeenAt == null) {
                continue;
            }
            Duration silence = Duration.between(node.lastSeenAt, now);
            if (silence.compareTo(policy.heartbeatTimeout()) > 0) {
                facts.add(new NodeFailed(node.nodeId, now, node.lastHeartbeatAt,
                        "no heartbeat for " + seconds(silence) + " (timeout " + seconds(policy.heartbeatTimeout())
                                + ")"));
            }
        }
        return facts;
    }

    /**
     * Placement released a run because a node failed: requeue it while the job has restarts left, else abandon
     * it. An attempt that was already decided (a redelivered or repeated release) yields nothing.
     */
    public List<RecoveryFact> onNodeFailureRelease(InterruptedRun run) {
        Objects.requireNonNull(run, "run");
        Job job = jobs.get(run.jobId());
        if (job != null && run.attempt() <= job.lastDecidedAttempt) {
            return List.of();
        }
        int restartsSoFar = job == null ? 0 : job.restarts;
        if (restartsSoFar < policy.maxRestarts()) {
            RecoveryFact.CheckpointRecorded from = resumePoint(run.jobId(), run.attempt());
            return List.of(new JobRequeued(run.jobId(), run.tenant(), run.attempt(),
                    failedNodes(run) + "; restart " + (restartsSoFar + 1) + " of " + policy.maxRestarts()
                            + (from == null ? "" : "; resumes from step " + from.step() + " (" + from.path() + ")"),
                    from == null ? null : from.path()));
        }
        return List.of(new JobRecoveryAbandoned(run.jobId(), run.tenant(), run.attempt(),
                "restart limit " + policy.maxRestarts() + " reached"));
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
            node.lastSeenAt = f.receivedAt();
            node.lastHeartbeatAt = f.receivedAt();
        } else if (fact instanceof NodeKnown f) {
            node(f.nodeId());
        } else if (fact instanceof GraceStarted f) {
            nodes.values().forEach(n -> n.lastSeenAt = f.at());
            watching = f.watching();
        } else if (fact instanceof NodeFailed f) {
            Node node = node(f.nodeId());
            node.state = NodeState.FAILED;
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

    /** False between a restart and catching up with the input: no node is declared failed meanwhile. */
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

    private static final class Node {
        final String nodeId;
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
