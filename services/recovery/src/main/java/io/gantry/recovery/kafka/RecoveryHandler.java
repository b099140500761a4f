package io.gantry.recovery.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.DeviceEvent;
import io.gantry.events.DeviceFaultReported;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.GpuDevice;
import io.gantry.events.GpuShare;
import io.gantry.events.NodeRegistered;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.recovery.core.DeviceFaultReport;
import io.gantry.recovery.core.FaultKind;
import io.gantry.recovery.core.InterruptedRun;
import io.gantry.recovery.core.NodeHealth;
import io.gantry.recovery.core.Recovery;
import io.gantry.recovery.core.RecoveryFact;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.recovery.core.XidCatalog;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.SnapshotRecords;
import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.time.Clock;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps recovery's topics to the core and back. Every decision is replayed into the core in the same batch that
 * publishes it, so the in-memory state is exactly what the committed topics say.
 */
final class RecoveryHandler implements EventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RecoveryHandler.class);
    /** Placement's control labels, read off its registrations (placement owns the names; the values are ours to read). */
    static final String CORDONED_LABEL = "gantry.io/cordoned";
    static final String CORDONED_GPUS_LABEL = "gantry.io/cordoned-gpus";
    private final Recovery core;
    private final Clock clock;
    /**
     * The records of the restore topics the state is made of, for snapshots: per node its newest registration and
     * its last failure with the recovery after it; per live run its grant; per job its restart decisions and newest
     * checkpoint per attempt until it ends for good; every device decision. What a restore of the whole history
     * would leave, from these alone (a job's runs that ended and their steps are gone).
     */
    private final SnapshotRecords kept = new SnapshotRecords();

    RecoveryHandler(RecoveryPolicy policy, Clock clock) {
        this.core = new Recovery(policy);
        this.clock = clock;
    }

    Clock clock() {
        return clock;
    }

    List<NodeHealth> nodes() {
        return core.nodes();
    }

    List<Recovery.OutOfService> outOfService() {
        return core.outOfService();
    }

    boolean watching() {
        return core.watching();
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        restoreOne(topic, value);
        remember(value);
    }

    private void restoreOne(Topic<?> topic, Object value) {
        if (topic.equals(Topics.RECOVERY_NODE_EVENTS) && value instanceof NodeHealthEvent e) {
            core.replay(WireMapping.fromWire(e));
        } else if (topic.equals(Topics.RECOVERY_JOB_EVENTS) && value instanceof RecoveryJobEvent e) {
            core.replay(WireMapping.fromWire(e));
        } else if (value instanceof CheckpointEvent e && e.getPayload() instanceof CheckpointCommitted c) {
            checkpoint(e, c);
        } else if (topic.equals(Topics.RECOVERY_DEVICE_EVENTS) && value instanceof DeviceHealthEvent e) {
            core.replay(WireMapping.fromWire(e));
        } else if (value instanceof AllocationEvent e) {
            // the live runs, for joining device faults with the runs they hit
            allocation(e).forEach(core::replay);
        } else if (topic.equals(Topics.PLACEMENT_NODE_EVENTS) && value instanceof NodeEvent e
                && e.getNodeId() != null && !e.getNodeId().isBlank()) {
            // the node's existence, for the liveness watch: its timestamps are on the sender's (possibly virtual)
            // clock, so no sign of life; its control labels say which devices are out of service
            core.replay(new RecoveryFact.NodeKnown(e.getNodeId(), poolOf(e)));
            control(e).forEach(core::replay);
        }
    }

    /** The run-table facts of an allocation event: a grant (GPUs held per node) or a release. */
    private List<RecoveryFact> allocation(AllocationEvent e) {
        if (e.getPayload() instanceof AllocationGranted g) {
            Map<String, Set<Integer>> held = new HashMap<>();
            for (TaskPlacement p : g.getPlacements()) {
                Set<Integer> gpus = held.computeIfAbsent(p.getNodeId(), n -> new TreeSet<>());
                gpus.addAll(p.getGpuIndices());
                if (p.getGpuShares() != null) {
                    for (GpuShare s : p.getGpuShares()) {
                        gpus.add(s.getIndex());
                    }
                }
            }
            return core.onRunGranted(e.getJobId(), g.getAttempt(), held);
        }
        if (e.getPayload() instanceof AllocationReleased r) {
            return core.onRunReleased(e.getJobId(), r.getAttempt(), jobOver(r));
        }
        return List.of();
    }

    /** Whether the release ends the job for good: nothing will resume it. */
    private static boolean jobOver(AllocationReleased r) {
        return r.getReason() == ReleaseReason.RUN_SUCCEEDED || r.getReason() == ReleaseReason.CANCELLED;
    }

    /** The control labels of a registration (which GPUs and whether the node are cordoned), at placement's time. */
    private List<RecoveryFact> control(NodeEvent e) {
        if (!(e.getPayload() instanceof NodeRegistered r) || e.getOccurredAt() == null) {
            return List.of();
        }
        Map<String, String> labels = r.getLabels() == null ? Map.of() : r.getLabels();
        Set<Integer> cordonedGpus = new TreeSet<>();
        String v = labels.get(CORDONED_GPUS_LABEL);
        if (v != null) {
            for (String part : v.split(",")) {
                try {
                    cordonedGpus.add(Integer.parseInt(part.trim()));
                } catch (NumberFormatException ignored) {
                    // placement writes the label; a stray part must not make the registration unreadable
                }
            }
        }
        Set<Integer> gpus = new TreeSet<>();
        for (GpuDevice g : r.getGpus()) {
            gpus.add(g.getIndex());
        }
        return core.onNodeControl(e.getNodeId(), e.getOccurredAt(), "true".equals(labels.get(CORDONED_LABEL)),
                cordonedGpus, gpus);
    }

    @Override
    public boolean snapshot(SnapshotWriter out) {
        kept.writeTo(out);
        return true;
    }

    /** How many records the next snapshot holds. */
    long snapshotRecords() {
        return kept.size();
    }

    /** Keeps (or drops) what a record of a restore topic contributes to the state, once the core has taken it. */
    private void remember(Object value) {
        if (value instanceof NodeHealthEvent e) {
            // the node's state comes from its last fact, when it was last seen from its last recovery, its last
            // heartbeat from its last failure that knew one: those three, in order
            String slot = "health/" + e.getNodeId();
            List<NodeHealthEvent> facts = new java.util.ArrayList<>();
            kept.values(slot).forEach(v -> facts.add((NodeHealthEvent) v));
            facts.add(e);
            NodeHealthEvent lastRecovery = null;
            NodeHealthEvent lastHeartbeat = null;
            for (NodeHealthEvent f : facts) {
                if (f.getPayload() instanceof io.gantry.events.NodeRecovered) {
                    lastRecovery = f;
                } else if (f.getPayload() instanceof io.gantry.events.NodeFailed nf && nf.getLastHeartbeatAt() != null) {
                    lastHeartbeat = f;
                }
            }
            kept.remove(slot);
            for (NodeHealthEvent f : facts) {
                if (f == e || f == lastRecovery || f == lastHeartbeat) {
                    kept.append(slot, Topics.RECOVERY_NODE_EVENTS, f.getNodeId(), f);
                }
            }
        } else if (value instanceof RecoveryJobEvent e) {
            kept.append("job/" + e.getJobId(), Topics.RECOVERY_JOB_EVENTS, e.getJobId(), e);
        } else if (value instanceof DeviceHealthEvent e) {
            kept.append("device/" + e.getNodeId(), Topics.RECOVERY_DEVICE_EVENTS, e.getNodeId(), e);
        } else if (value instanceof NodeEvent e && e.getNodeId() != null && !e.getNodeId().isBlank()) {
            String slot = "node/" + e.getNodeId();
            if (!(e.getPayload() instanceof NodeRegistered)) {
                if (!kept.has(slot)) {
                    kept.put(slot, Topics.PLACEMENT_NODE_EVENTS, e.getNodeId(), e); // the node's existence
                }
                return;
            }
            List<NodeEvent> registrations = new java.util.ArrayList<>();
            kept.values(slot).forEach(v -> registrations.add((NodeEvent) v));
            registrations.removeIf(r -> !(r.getPayload() instanceof NodeRegistered));
            registrations.add(e);
            // the newest registration, and for the node and each GPU the latest one that had it in service (the
            // core takes the latest such time: when it came back after a fault)
            Map<String, NodeEvent> inService = new HashMap<>();
            for (NodeEvent r : registrations) {
                for (RecoveryFact f : control(r)) {
                    RecoveryFact.NodeControlSeen c = (RecoveryFact.NodeControlSeen) f;
                    List<String> what = new java.util.ArrayList<>();
                    if (!c.cordoned()) {
                        what.add("node");
                    }
                    c.gpus().stream().filter(g -> !c.cordonedGpus().contains(g)).forEach(g -> what.add("gpu " + g));
                    for (String w : what) {
                        inService.merge(w, r, (old, now) -> now.getOccurredAt().isBefore(old.getOccurredAt()) ? old : now);
                    }
                }
            }
            kept.remove(slot);
            for (NodeEvent r : registrations) {
                if (r == e || inService.containsValue(r)) {
                    kept.append(slot, Topics.PLACEMENT_NODE_EVENTS, r.getNodeId(), r);
                }
            }
        } else if (value instanceof CheckpointEvent e && e.getPayload() instanceof CheckpointCommitted c) {
            String slot = "checkpoint/" + e.getJobId();
            boolean newer = kept.values(slot).stream().map(v -> (CheckpointCommitted) ((CheckpointEvent) v).getPayload())
                    .noneMatch(o -> o.getAttempt() == c.getAttempt() && o.getStep() > c.getStep());
            if (newer) {
                kept.removeIf(slot, v -> ((CheckpointCommitted) ((CheckpointEvent) v).getPayload()).getAttempt()
                        == c.getAttempt());
                kept.append(slot, Topics.ADMISSION_CHECKPOINT_EVENTS, e.getJobId(), e);
            }
        } else if (value instanceof AllocationEvent e && e.getPayload() instanceof AllocationGranted g) {
            // only the grant the core holds (not one read again after its release, nor an older attempt's)
            if (Integer.valueOf(g.getAttempt()).equals(core.heldAttempt(e.getJobId()))) {
                kept.put("run/" + e.getJobId(), Topics.PLACEMENT_ALLOCATION_EVENTS, e.getJobId(), e);
            }
        } else if (value instanceof AllocationEvent e && e.getPayload() instanceof AllocationReleased r) {
            kept.removeIf("run/" + e.getJobId(),
                    v -> ((AllocationGranted) ((AllocationEvent) v).getPayload()).getAttempt() <= r.getAttempt());
            if (jobOver(r)) {
                kept.remove("job/" + e.getJobId());
                kept.remove("checkpoint/" + e.getJobId());
            }
        }
    }

    @Override
    public void restored(Output out) {
        apply(core.onRestart(clock.instant()), out);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        handleOne(value, out);
        if (value instanceof NodeEvent || value instanceof AllocationEvent || value instanceof CheckpointEvent) {
            remember(value); // restore topics too
        }
    }

    private void handleOne(Object value, Output out) {
        if (value instanceof NodeEvent e) {
            // liveness is measured when the heartbeat is received, on our clock, never by e.getOccurredAt()
            apply(core.onRegistration(e.getNodeId(), poolOf(e), clock.instant()), out);
            apply(control(e), out);
        } else if (value instanceof DeviceEvent e && e.getPayload() instanceof DeviceFaultReported f) {
            DeviceFaultReport report = new DeviceFaultReport(e.getEventId(), e.getNodeId(), f.getGpuIndex(),
                    FaultKind.valueOf(f.getKind().name()), f.getXid(), f.getMessage(), e.getOccurredAt());
            if (report.kind() == FaultKind.XID && !XidCatalog.known(report.xid())) {
                LOG.warn("unknown Xid {} on node {} GPU {} ({}): treated as a hardware fault", report.xid(),
                        report.nodeId(), report.gpuIndex(), report.message());
            }
            apply(core.onDeviceFault(report), out);
        } else if (value instanceof AllocationEvent e && !(e.getPayload() instanceof AllocationReleased)) {
            apply(allocation(e), out);
        } else if (value instanceof NodeHeartbeatEvent e) {
            apply(core.onSignOfLife(e.getNodeId(), clock.instant()), out);
        } else if (value instanceof CheckpointEvent e && e.getPayload() instanceof CheckpointCommitted c) {
            checkpoint(e, c);
        } else if (value instanceof AllocationEvent e && e.getPayload() instanceof AllocationReleased released) {
            // validated (the run's fields) before any state changes
            InterruptedRun run = released.getReason() == ReleaseReason.NODE_FAILED
                    || released.getReason() == ReleaseReason.DEVICE_FAULT ? interruptedRun(e.getJobId(), released) : null;
            apply(allocation(e), out);
            if (run != null) {
                // infrastructure failures: requeued automatically within the job's failure budget
                apply(core.onInfrastructureRelease(run, released.getReason() == ReleaseReason.DEVICE_FAULT), out);
            }
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
        java.util.SortedSet<String> held = core.heldPools(now);
        if (!held.equals(heldPools)) {
            for (String pool : held) {
                if (!heldPools.contains(pool)) {
                    LOG.warn("every node of pool {} is silent past the heartbeat timeout ({}): their heartbeats all "
                            + "come from placement, which is probably restarting or failing over; none is declared "
                            + "failed for up to {} unless heartbeats of the pool come again", name(pool),
                            core.policy().heartbeatTimeout(), core.policy().disruptionHold());
                }
            }
            for (String pool : heldPools) {
                if (!held.contains(pool)) {
                    LOG.info("pool {} is no longer held: its nodes are judged one by one again", name(pool));
                }
            }
            heldPools = held;
        }
        apply(core.tick(now), out);
    }

    /** The pools held at the last tick ({@link Recovery#heldPools}), for a log line when that changes. */
    private java.util.SortedSet<String> heldPools = new java.util.TreeSet<>();

    private static String name(String pool) {
        return pool.isEmpty() ? "(not registered yet)" : pool;
    }

    /** The pool a registration lists the node in (`default` in records written before pools); null for other events. */
    private static String poolOf(NodeEvent e) {
        if (e.getPayload() instanceof NodeRegistered r) {
            return r.getPool() == null || r.getPool().isBlank() ? "default" : r.getPool();
        }
        return null;
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

    private void publish(RecoveryFact fact, Instant now, Output out) {
        String eventId = UUID.randomUUID().toString();
        WireMapping.toNodeEvent(fact, eventId, now).ifPresent(e -> {
            out.send(Topics.RECOVERY_NODE_EVENTS, e.getNodeId(), e);
            remember(e);
        });
        WireMapping.toJobEvent(fact, eventId, now).ifPresent(e -> {
            out.send(Topics.RECOVERY_JOB_EVENTS, e.getJobId(), e);
            remember(e);
        });
        // an operator reads recovery's decisions in its log too, not only on its topics
        if (fact instanceof RecoveryFact.NodeFailed f) {
            LOG.warn("node {} declared failed: {}", f.nodeId(), f.message());
        } else if (fact instanceof RecoveryFact.JobRequeued r) {
            LOG.info("job {} of {} requeued after attempt {}: {}", r.jobId(), r.tenant(), r.interruptedAttempt(),
                    r.message());
        } else if (fact instanceof RecoveryFact.JobRecoveryAbandoned a) {
            LOG.warn("job {} of {} not run again after attempt {}: {}", a.jobId(), a.tenant(), a.interruptedAttempt(),
                    a.message());
        }
        if (fact instanceof RecoveryFact.DeviceFaultDecided d) {
            // derived from the fault: deciding the same report again is the same fact
            String id = UUID.nameUUIDFromBytes(("recovery.device/" + d.faultEventId()).getBytes(StandardCharsets.UTF_8))
                    .toString();
            DeviceHealthEvent e = WireMapping.toDeviceEvent(d, id, now);
            out.send(Topics.RECOVERY_DEVICE_EVENTS, e.getNodeId(), e);
            remember(e);
            LOG.info("device fault decided on {}: {}", d.nodeId(), d.message());
        }
    }
}
