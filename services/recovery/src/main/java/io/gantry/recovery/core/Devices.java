package io.gantry.recovery.core;

import io.gantry.recovery.core.RecoveryFact.DeviceFaultDecided;
import io.gantry.recovery.core.RecoveryFact.NodeControlSeen;
import io.gantry.recovery.core.RecoveryFact.RunHeld;
import io.gantry.recovery.core.RecoveryFact.RunReleased;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The device-health half of recovery: which runs hold which devices (the table a fault is joined with), which
 * devices and nodes were already acted upon, and each node's recent hardware faults. Package-private: {@link Recovery}
 * is the state machine; {@link #decide} only reads, {@link #replay} is the only mutator.
 *
 * <p>Every time compared here is on placement's clock (the report's time, a registration's time), so the rules hold
 * however recovery's own clock relates to it, and however the topics are interleaved on replay: each piece of state
 * is a maximum or a set union, so the order facts are replayed in does not change the result.
 */
final class Devices {
    /** Hardware decisions remembered per node to name the cause of a requeue. */
    static final int RECENT = 16;
    /** Decided fault ids remembered against redelivery; the oldest are forgotten beyond this. */
    static final int REMEMBERED_DECISIONS = 10_000;

    private final RecoveryPolicy.HealthPolicy policy;
    private final Map<String, NodeDevices> nodes = new TreeMap<>();
    /** Job id to its live run (the newest attempt granted and not released). */
    private final Map<String, RunHeld> runs = new HashMap<>();
    /** Job id to the highest attempt released: a grant of that attempt or older, read again, is stale. */
    private final Map<String, Integer> released = new HashMap<>();
    /** Node id to the jobs whose live runs have tasks there: a fault touches only its node's runs. */
    private final Map<String, Set<String>> jobsOnNode = new HashMap<>();
    private final LinkedHashSet<String> decided = new LinkedHashSet<>();

    Devices(RecoveryPolicy.HealthPolicy policy) {
        this.policy = policy;
    }

    private static final class NodeDevices {
        /** GPU index to the newest hardware decision about it. */
        final TreeMap<Integer, DeviceFaultDecided> gpuActed = new TreeMap<>();
        /** GPU index to the newest registration showing it in service (not cordoned). */
        final TreeMap<Integer, Instant> gpuInService = new TreeMap<>();
        DeviceFaultDecided nodeActed;
        Instant nodeInService;
        Instant drainedAt;
        /** The newest hardware fault times (at most MAX_REMEMBERED_FAULTS), for the drain window. */
        final TreeSet<Instant> faults = new TreeSet<>();
        /** The newest hardware decisions (at most RECENT), for the sentence on a requeue, oldest first. */
        final TreeSet<DeviceFaultDecided> recent = new TreeSet<>(java.util.Comparator
                .comparing(DeviceFaultDecided::faultAt).thenComparing(DeviceFaultDecided::faultEventId));
    }

    // ---------------------------------------------------------------- decisions

    List<RecoveryFact> decide(DeviceFaultReport r) {
        if (decided.contains(r.eventId()) || r.kind() == FaultKind.PREFLIGHT_FAILED) {
            // placement cordoned a node that failed its pre-flight check itself: nothing left to decide
            return List.of();
        }
        FaultCategory category = XidCatalog.category(r.kind(), r.xid());
        List<String> affected = affected(r.nodeId(), r.gpuIndex());
        String what = what(r);
        if (category == FaultCategory.APPLICATION) {
            return List.of(decision(r, category, FaultAction.FAIL_RUNS, affected, what + ": application fault, the "
                    + "device stays in service; " + (affected.isEmpty() ? "no run held it" : "fails " + jobs(affected))));
        }
        NodeDevices n = nodes.get(r.nodeId());
        if (n != null && alreadyActed(n, r.gpuIndex())) {
            return List.of(); // a repeat, or a flood, about a device already out of service
        }
        int inWindow = 1 + faultsInWindow(n, r.reportedAt());
        boolean drained = n != null && n.drainedAt != null && (n.nodeInService == null
                || n.drainedAt.isAfter(n.nodeInService));
        FaultAction action;
        String done;
        if (policy.drainAfter() > 0 && inWindow >= policy.drainAfter() && !drained) {
            action = FaultAction.DRAIN_NODE;
            done = "node drained for repair (" + inWindow + " hardware faults within "
                    + Recovery.seconds(policy.drainWindow()) + ")";
        } else if (r.gpuIndex() == null || policy.cordonNode()) {
            action = FaultAction.CORDON_NODE;
            done = "node cordoned";
        } else {
            action = FaultAction.CORDON_DEVICE;
            done = "GPU " + r.gpuIndex() + " cordoned";
        }
        return List.of(decision(r, category, action, affected, what + ": hardware fault; " + done
                + (affected.isEmpty() ? "" : "; stops " + jobs(affected))));
    }

    private static DeviceFaultDecided decision(DeviceFaultReport r, FaultCategory c, FaultAction a,
                                               List<String> affected, String message) {
        return new DeviceFaultDecided(r.eventId(), r.nodeId(), r.reportedAt(), r.gpuIndex(), r.kind(), r.xid(), c, a,
                affected, message);
    }

    /** {@code Xid 79 (GPU has fallen off the bus) on GPU 3 of sim-1}, with the backend's words when it had any. */
    private static String what(DeviceFaultReport r) {
        String kind = r.kind() == FaultKind.XID ? "Xid " + r.xid() + " (" + XidCatalog.of(r.xid()).meaning() + ")"
                : r.kind().name();
        String where = r.gpuIndex() == null ? " on node " + r.nodeId() : " on GPU " + r.gpuIndex() + " of " + r.nodeId();
        return kind + where;
    }

    private String jobs(List<String> jobIds) {
        List<String> named = new ArrayList<>();
        for (String j : jobIds.subList(0, Math.min(5, jobIds.size()))) {
            RunHeld run = runs.get(j);
            named.add("job " + j + (run == null ? "" : " attempt " + run.attempt()));
        }
        return String.join(", ", named) + (jobIds.size() > 5 ? " and " + (jobIds.size() - 5) + " more" : "");
    }

    /** The jobs whose live runs hold the GPU of the node (any of the node for a node-wide fault), by id. */
    List<String> affected(String nodeId, Integer gpuIndex) {
        TreeSet<String> out = new TreeSet<>();
        for (String job : jobsOnNode.getOrDefault(nodeId, Set.of())) {
            RunHeld run = runs.get(job);
            Set<Integer> gpus = run == null ? null : run.gpusByNode().get(nodeId);
            if (gpus != null && (gpuIndex == null || gpus.contains(gpuIndex))) {
                out.add(job);
            }
        }
        return List.copyOf(out);
    }

    private static boolean alreadyActed(NodeDevices n, Integer gpu) {
        if (n.nodeActed != null && after(n.nodeActed.faultAt(), n.nodeInService)) {
            // the node is out of service for a node-wide fault: only a fault of a GPU still hosting runs matters
            if (gpu == null) {
                return true;
            }
        }
        if (gpu == null) {
            return false;
        }
        DeviceFaultDecided d = n.gpuActed.get(gpu);
        if (d == null) {
            return false;
        }
        Instant back = d.action() == FaultAction.CORDON_NODE ? n.nodeInService : n.gpuInService.get(gpu);
        return after(d.faultAt(), back);
    }

    /** Whether {@code t} is after {@code back} (no {@code back}: never returned to service). */
    private static boolean after(Instant t, Instant back) {
        return back == null || t.isAfter(back);
    }

    /** Hardware faults of the node remembered within the window before {@code at}, and after its last drain. */
    private int faultsInWindow(NodeDevices n, Instant at) {
        if (n == null) {
            return 0;
        }
        Instant from = at.minus(policy.drainWindow());
        if (n.drainedAt != null && n.drainedAt.isAfter(from)) {
            from = n.drainedAt;
        }
        if (!from.isBefore(at)) {
            return 0; // a fault reported late, from before the node's last drain
        }
        return n.faults.subSet(from, false, at, true).size();
    }

    /**
     * The hardware fault that stopped the job's run, for the requeue's sentence: the newest decision on the run's
     * nodes that named the job, else the newest on those nodes (the run was granted after recovery last saw the
     * table); null when none.
     */
    DeviceFaultDecided faultOf(String jobId, List<String> nodeIds) {
        DeviceFaultDecided named = null;
        DeviceFaultDecided any = null;
        for (String id : nodeIds) {
            NodeDevices n = nodes.get(id);
            if (n == null) {
                continue;
            }
            for (DeviceFaultDecided d : n.recent) {
                if (any == null || d.faultAt().isAfter(any.faultAt())) {
                    any = d;
                }
                if (d.affectedJobIds().contains(jobId) && (named == null || d.faultAt().isAfter(named.faultAt()))) {
                    named = d;
                }
            }
        }
        return named != null ? named : any;
    }

    // ---------------------------------------------------------------- the only mutator

    void replay(RecoveryFact fact) {
        if (fact instanceof DeviceFaultDecided d) {
            remember(d.faultEventId());
            if (d.category() != FaultCategory.HARDWARE) {
                return;
            }
            NodeDevices n = nodes.computeIfAbsent(d.nodeId(), id -> new NodeDevices());
            if (d.gpuIndex() == null) {
                n.nodeActed = newer(n.nodeActed, d);
            } else {
                n.gpuActed.merge(d.gpuIndex(), d, Devices::newer);
            }
            if (d.action() == FaultAction.DRAIN_NODE && (n.drainedAt == null || d.faultAt().isAfter(n.drainedAt))) {
                n.drainedAt = d.faultAt();
            }
            n.faults.add(d.faultAt());
            while (n.faults.size() > RecoveryPolicy.HealthPolicy.MAX_REMEMBERED_FAULTS) {
                n.faults.pollFirst();
            }
            n.recent.add(d);
            while (n.recent.size() > RECENT) {
                n.recent.pollFirst();
            }
        } else if (fact instanceof NodeControlSeen c) {
            NodeDevices n = nodes.computeIfAbsent(c.nodeId(), id -> new NodeDevices());
            if (!c.cordoned()) {
                n.nodeInService = max(n.nodeInService, c.at());
            }
            for (int g : c.gpus()) {
                if (!c.cordonedGpus().contains(g)) {
                    n.gpuInService.merge(g, c.at(), Devices::max);
                }
            }
        } else if (fact instanceof RunHeld h) {
            if (released.getOrDefault(h.jobId(), 0) >= h.attempt()) {
                return; // a grant read again after its release (restore, then the same records as input)
            }
            RunHeld old = runs.get(h.jobId());
            if (old != null && old.attempt() > h.attempt()) {
                return;
            }
            unindex(old);
            runs.put(h.jobId(), h);
            h.gpusByNode().keySet().forEach(node -> jobsOnNode.computeIfAbsent(node, k -> new TreeSet<>()).add(h.jobId()));
        } else if (fact instanceof RunReleased r) {
            released.merge(r.jobId(), r.attempt(), Math::max);
            RunHeld old = runs.get(r.jobId());
            if (old != null && old.attempt() <= r.attempt()) {
                runs.remove(r.jobId());
                unindex(old);
            }
        }
    }

    /** The attempt of the job's run on the devices, or null when none is held. */
    Integer heldAttempt(String jobId) {
        RunHeld h = runs.get(jobId);
        return h == null ? null : h.attempt();
    }

    private void unindex(RunHeld old) {
        if (old == null) {
            return;
        }
        for (String node : old.gpusByNode().keySet()) {
            Set<String> on = jobsOnNode.get(node);
            if (on != null) {
                on.remove(old.jobId());
                if (on.isEmpty()) {
                    jobsOnNode.remove(node);
                }
            }
        }
    }

    private void remember(String eventId) {
        if (decided.add(eventId) && decided.size() > REMEMBERED_DECISIONS) {
            decided.remove(decided.iterator().next());
        }
    }

    private static DeviceFaultDecided newer(DeviceFaultDecided a, DeviceFaultDecided b) {
        if (a == null) {
            return b;
        }
        int c = b.faultAt().compareTo(a.faultAt());
        return c > 0 || (c == 0 && b.faultEventId().compareTo(a.faultEventId()) > 0) ? b : a;
    }

    private static Instant max(Instant a, Instant b) {
        return a == null || b.isAfter(a) ? b : a;
    }

    // ---------------------------------------------------------------- queries

    /** GPUs of the node recovery holds out of service (cordoned and not seen back in service), ascending. */
    Set<Integer> cordonedGpus(String nodeId) {
        NodeDevices n = nodes.get(nodeId);
        TreeSet<Integer> out = new TreeSet<>();
        if (n != null) {
            n.gpuActed.forEach((g, d) -> {
                if (d.action() != FaultAction.CORDON_NODE && after(d.faultAt(), n.gpuInService.get(g))) {
                    out.add(g);
                }
            });
        }
        return out;
    }

    boolean drained(String nodeId) {
        NodeDevices n = nodes.get(nodeId);
        return n != null && n.drainedAt != null && after(n.drainedAt, n.nodeInService);
    }

    /** Nodes with a device or the whole node out of service after a hardware fault, by node id. */
    List<Recovery.OutOfService> outOfService() {
        List<Recovery.OutOfService> out = new ArrayList<>();
        nodes.forEach((id, n) -> {
            boolean node = n.nodeActed != null && after(n.nodeActed.faultAt(), n.nodeInService)
                    || n.gpuActed.values().stream().anyMatch(d -> d.action() != FaultAction.CORDON_DEVICE
                    && after(d.faultAt(), n.nodeInService));
            Set<Integer> gpus = cordonedGpus(id);
            if (node || !gpus.isEmpty()) {
                out.add(new Recovery.OutOfService(id, List.copyOf(gpus), node, drained(id)));
            }
        });
        return out;
    }

    /** How many runs the join table holds (for tests). */
    int liveRuns() {
        return runs.size();
    }

    Duration drainWindow() {
        return policy.drainWindow();
    }
}
