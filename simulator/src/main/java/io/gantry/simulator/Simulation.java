package io.gantry.simulator;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.Fact;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.GangRequest;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.ReleaseCause;
import io.gantry.placement.core.RunResult;
import io.gantry.placement.core.Topology;
import io.gantry.placement.core.TopologyLevel;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.FreeCapacity;
import io.gantry.queue.core.Input;
import io.gantry.queue.core.JobSpec;
import io.gantry.queue.core.QueueCore;
import io.gantry.queue.core.QueueFact;
import io.gantry.queue.core.TaskGroup;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One replay of one workload under one policy: the production {@link QueueCore} and {@link ClusterState} wired as
 * the running services wire them over Kafka, in virtual time.
 *
 * <p>Events (arrivals, run ends, node failures) are ordered by virtual time, then by the order they were
 * scheduled; the messages one event causes are delivered in FIFO order, like records on a topic, before the next
 * event. Nothing reads the wall clock except the decisions-per-second figure, so the same inputs give the same
 * report.
 */
public final class Simulation {
    /** recovery's default: a run interrupted by a node failure is requeued this many times, then abandoned. */
    public static final int MAX_RESTARTS = 3;

    /** A node failure at {@code atMillis}; the node comes back after {@code recoverAfterMillis} (null: never). */
    public record Fault(long atMillis, String nodeId, Long recoverAfterMillis) {
    }

    private enum Kind { SUBMIT, RUN_END, FAIL, RECOVER, DEADLINE, TICK }

    /** Virtual time between the queue's ticks (time-driven decisions: preemption once runs are old enough). */
    static final long TICK_MILLIS = 10_000;

    private record Event(long at, long seq, Kind kind, int job, String ref) {
    }

    private sealed interface Msg {
    }

    private record ToQueue(Input input) implements Msg {
    }

    private record Dispatch(QueueFact.JobDispatched fact) implements Msg {
    }

    private final List<NodeSpec> nodes;
    private final Workload workload;
    private final Policy policy;
    private final QueueCore queue;
    private final ClusterState placement;
    private final List<Fault> faults;
    private final Consumer<String> progress;
    private final int maxNodeGpus;
    private final Map<String, String> rackOfNode = new HashMap<>();

    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) -> a.at != b.at
            ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private long seq;
    private long now;
    private final Deque<Msg> inbox = new ArrayDeque<>();
    private final Map<String, Integer> index = new HashMap<>();
    private final Deque<Integer> gate = new ArrayDeque<>();
    private final Set<Integer> ungranted = new LinkedHashSet<>();
    private final Map<String, Integer> restarts = new HashMap<>();
    private final Map<String, String> devices = new HashMap<>();

    private final Result r;

    public Simulation(List<NodeSpec> nodes, Workload workload, Policy policy, FairShareConfig baseConfig,
                      GangPlacer placer, List<Fault> faults, Consumer<String> progress) {
        this.nodes = List.copyOf(nodes);
        this.workload = workload;
        this.policy = policy;
        this.queue = new QueueCore(policy.config(baseConfig), policy.dispatchPolicy());
        this.placement = new ClusterState(Clusters.BACKEND, placer);
        this.faults = List.copyOf(faults);
        this.progress = progress == null ? s -> { } : progress;
        this.maxNodeGpus = nodes.stream().mapToInt(NodeSpec::gpuCount).max().orElse(0);
        nodes.forEach(n -> rackOfNode.put(n.nodeId(), Clusters.rackOf(n)));
        this.r = new Result(policy.label(), workload.jobs(), Clusters.totalGpus(nodes));
    }

    public Result run() {
        long wallStart = System.nanoTime();
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);
        for (NodeSpec n : nodes) {
            placement.register(n).forEach(placement::replay);
        }
        List<SimJob> jobs = workload.jobs();
        int capacity = r.clusterGpus;
        for (int i = 0; i < jobs.size(); i++) {
            SimJob j = jobs.get(i);
            index.put(j.id(), i);
            if (j.gpus() > capacity) {
                r.rejected[i] = true; // can never fit this cluster: not replayed, listed in the report
                continue;
            }
            schedule(j.submitMillis(), Kind.SUBMIT, i, null);
        }
        for (Fault f : faults) {
            schedule(f.atMillis(), Kind.FAIL, -1, f.nodeId());
            if (f.recoverAfterMillis() != null) {
                schedule(f.atMillis() + f.recoverAfterMillis(), Kind.RECOVER, -1, f.nodeId());
            }
        }
        events.stream().mapToLong(Event::at).min().ifPresent(first -> schedule(first + TICK_MILLIS, Kind.TICK, -1, null));
        int toEnd = (int) java.util.stream.IntStream.range(0, jobs.size()).filter(i -> !r.rejected[i]).count();
        int step = Math.max(1, toEnd / 10);
        int nextReport = step;
        while (!events.isEmpty()) {
            Event e = events.poll();
            now = e.at;
            Instant t = Instant.ofEpochMilli(now);
            switch (e.kind) {
                case SUBMIT -> {
                    if (policy.headOfLineGate()) {
                        gate.add(e.job);
                    } else {
                        submit(e.job);
                    }
                }
                case RUN_END -> placementFacts(placement.runEnded(e.ref, RunResult.succeeded(t)));
                case DEADLINE -> placementFacts(placement.expire(t));
                case TICK -> {
                    inbox.add(new ToQueue(new Input.Tick(false)));
                    // only while something else is still to happen: ticks alone never end a replay
                    if (!events.isEmpty()) {
                        schedule(now + TICK_MILLIS, Kind.TICK, -1, null);
                    }
                }
                case FAIL -> {
                    r.nodeFailures++;
                    placementFacts(placement.nodeFailed(e.ref, t));
                }
                case RECOVER -> {
                    placementFacts(placement.nodeRecovered(e.ref));
                    inbox.add(new ToQueue(new Input.CapacityChanged("node " + e.ref + " recovered")));
                }
            }
            drain();
            while (policy.headOfLineGate() && ungranted.isEmpty() && !gate.isEmpty()) {
                submit(gate.poll());
                drain();
            }
            if (r.ended >= nextReport) {
                progress.accept(String.format("[%s] %d/%d jobs ended (%d%%), virtual time %.1f h", policy.label(),
                        r.ended, toEnd, 100L * r.ended / Math.max(1, toEnd), now / 3_600_000.0));
                while (nextReport <= r.ended) {
                    nextReport += step;
                }
            }
        }
        r.wallNanos = System.nanoTime() - wallStart;
        r.peakHeapBytes = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        r.endMillis = now;
        r.leftAllocated = devices.size();
        return r;
    }

    private void schedule(long at, Kind kind, int job, String ref) {
        events.add(new Event(at, seq++, kind, job, ref));
    }

    private void submit(int i) {
        SimJob j = workload.jobs().get(i);
        ungranted.add(i);
        inbox.add(new ToQueue(new Input.Submitted(j.id(), j.tenant(), spec(j), Instant.ofEpochMilli(j.submitMillis()))));
    }

    /** The gang as the REST API would take it: GPUs split into equal replicas of at most one node each. */
    JobSpec spec(SimJob j) {
        int per = 1;
        for (int d = Math.min(j.gpus(), maxNodeGpus); d >= 1; d--) {
            if (j.gpus() % d == 0) {
                per = d;
                break;
            }
        }
        TaskGroup t = new TaskGroup("worker", j.gpus() / per, List.of("sim"), per, null, 0, 0, null);
        return new JobSpec(j.id(), 0, null, List.of(t));
    }

    private void drain() {
        while (!inbox.isEmpty()) {
            Msg m = inbox.poll();
            Instant t = Instant.ofEpochMilli(now);
            if (m instanceof ToQueue q) {
                r.decisions++;
                for (QueueFact f : queue.apply(q.input(), t)) {
                    queueFact(f);
                }
            } else if (m instanceof Dispatch d) {
                r.decisions++;
                placementFacts(placement.dispatch(gang(d.fact()), t));
            }
        }
    }

    private void queueFact(QueueFact f) {
        if (f instanceof QueueFact.JobDispatched d) {
            r.dispatches++;
            inbox.add(new Dispatch(d));
        } else if (f instanceof QueueFact.JobSucceeded s) {
            ended(s.jobId(), true);
        } else if (f instanceof QueueFact.JobFailed fl) {
            ended(fl.jobId(), false);
        } else if (f instanceof QueueFact.JobCancelled c) {
            ended(c.jobId(), false);
        } else if (f instanceof QueueFact.JobPreempted p) {
            // on queue.preemption-events: placement stops the run after the grace period
            r.preemptions++;
            placementFacts(placement.preempt(p.jobId(), p.attempt(), p.graceSeconds(), Instant.ofEpochMilli(now)));
        }
    }

    private void ended(String jobId, boolean ok) {
        int i = index.get(jobId);
        r.finish[i] = now;
        r.succeeded[i] = ok;
        r.ended++;
    }

    private static GangRequest gang(QueueFact.JobDispatched d) {
        List<io.gantry.placement.core.TaskGroup> tasks = new ArrayList<>();
        for (TaskGroup t : d.spec().tasks()) {
            tasks.add(new io.gantry.placement.core.TaskGroup(t.name(), t.replicas(), t.gpus(), t.gpuModel(),
                    t.cpuMillis(), t.memoryMiB(), t.gpuModels(), t.gpuTier(), t.runSeconds()));
        }
        Topology topology = Topology.ANYWHERE;
        if (d.spec().topology() != null) {
            topology = new Topology(TopologyLevel.valueOf(d.spec().topology().required()),
                    TopologyLevel.valueOf(d.spec().topology().preferred()));
        }
        return new GangRequest(d.jobId(), d.tenant(), d.attempt(), tasks, topology);
    }

    /** Placement's facts, replayed into its state and delivered to the queue (and recovery) as the topics would. */
    private void placementFacts(List<Fact> facts) {
        for (Fact f : facts) {
            placement.replay(f);
            if (f instanceof Fact.AllocationGranted g) {
                granted(g.allocation());
                Allocation a = g.allocation();
                inbox.add(new ToQueue(new Input.Granted(a.jobId(), a.tenant(), a.attempt())));
                placement.runStarted(a.allocationId(), Instant.ofEpochMilli(now)).forEach(placement::replay);
                schedule(now + workload.jobs().get(index.get(a.jobId())).durationMillis(), Kind.RUN_END, -1,
                        a.allocationId());
            } else if (f instanceof Fact.PlacementDeferred d) {
                r.deferrals++;
                inbox.add(new ToQueue(new Input.Deferred(d.jobId(), d.tenant(), d.attempt(), d.reason().name(),
                        d.message())));
            } else if (f instanceof Fact.RunSucceeded s) {
                Allocation a = s.allocation();
                inbox.add(new ToQueue(new Input.RunSucceeded(a.jobId(), a.tenant(), a.attempt())));
            } else if (f instanceof Fact.RunFailed fl) {
                Allocation a = fl.allocation();
                inbox.add(new ToQueue(new Input.RunFailed(a.jobId(), a.tenant(), a.attempt(), fl.message())));
            } else if (f instanceof Fact.PreemptionRequested p) {
                schedule(p.deadline().toEpochMilli(), Kind.DEADLINE, -1, p.allocation().allocationId());
            } else if (f instanceof Fact.AllocationReleased rel) {
                released(rel);
            }
        }
    }

    private void granted(Allocation a) {
        int i = index.get(a.jobId());
        if (r.firstGrant[i] < 0) {
            r.firstGrant[i] = now;
        }
        ungranted.remove(i);
        r.grants++;
        if (a.totalGpus() != workload.jobs().get(i).gpus()) {
            r.violations.add("job " + a.jobId() + " granted " + a.totalGpus() + " GPUs, asked for "
                    + workload.jobs().get(i).gpus());
        }
        Set<String> racks = new HashSet<>();
        Set<String> onNodes = new HashSet<>();
        for (PlacedTask p : a.placements()) {
            racks.add(rackOfNode.get(p.nodeId()));
            onNodes.add(p.nodeId());
            for (int g : p.gpuIndices()) {
                String dev = p.nodeId() + "#" + g;
                String holder = devices.putIfAbsent(dev, a.allocationId());
                if (holder != null) {
                    r.violations.add("device " + dev + " granted to " + a.jobId() + " while held by " + holder);
                }
            }
        }
        if (a.totalGpus() > 1) {
            r.multiGpuGangs++;
            if (racks.size() == 1) {
                r.multiGpuInOneRack++;
            }
        }
        if (onNodes.size() > 1) {
            r.multiNodeGangs++;
            if (racks.size() == 1) {
                r.multiNodeInOneRack++;
            }
        }
    }

    private void released(Fact.AllocationReleased rel) {
        Allocation a = rel.allocation();
        for (PlacedTask p : a.placements()) {
            for (int g : p.gpuIndices()) {
                String dev = p.nodeId() + "#" + g;
                if (!a.allocationId().equals(devices.remove(dev))) {
                    r.violations.add("device " + dev + " released by " + a.jobId() + " which did not hold it");
                }
            }
        }
        long start = a.grantedAt().toEpochMilli();
        long end = rel.releasedAt().toEpochMilli();
        long gpuMs = (long) a.totalGpus() * (end - start);
        int i = index.get(a.jobId());
        r.billedGpuMs += gpuMs;
        r.intervals.add(new long[] {start, end, a.totalGpus(), i});
        if (rel.reason() == ReleaseCause.RUN_SUCCEEDED) {
            r.succeededGpuMs += gpuMs;
        } else if (rel.reason() == ReleaseCause.NODE_FAILED) {
            r.lostGpuMs += gpuMs;
        } else if (rel.reason() == ReleaseCause.PREEMPTED) {
            r.preemptedGpuMs += gpuMs; // no checkpoints in a trace: the preempted run's work is lost
        }
        // with the free capacity placement reports, so the queue wakes only parked gangs that might fit
        inbox.add(new ToQueue(new Input.Released(a.jobId(), a.tenant(), a.attempt(), rel.reason().name(),
                free(placement.freeCapacity()))));
        if (rel.reason() == ReleaseCause.NODE_FAILED) {
            // recovery's decision, as services/recovery makes it: requeue while restarts are left
            int done = restarts.getOrDefault(a.jobId(), 0);
            if (done < MAX_RESTARTS) {
                restarts.put(a.jobId(), done + 1);
                r.requeues++;
                inbox.add(new ToQueue(new Input.Requeued(a.jobId(), a.tenant(), a.attempt(),
                        "node failed; restart " + (done + 1) + " of " + MAX_RESTARTS)));
            } else {
                inbox.add(new ToQueue(new Input.RecoveryAbandoned(a.jobId(), a.tenant(), a.attempt(),
                        "restart limit " + MAX_RESTARTS + " reached")));
            }
        }
    }

    private static FreeCapacity free(List<io.gantry.placement.core.FreeCapacity> reported) {
        java.util.Map<String, FreeCapacity.Model> byModel = new java.util.TreeMap<>();
        for (io.gantry.placement.core.FreeCapacity c : reported) {
            byModel.put(c.gpuModel(), new FreeCapacity.Model(c.freeGpus(), c.largestFreeOnNode(), c.nodesWithFree()));
        }
        return new FreeCapacity(byModel);
    }

    /** Everything one replay measured; {@link Report} turns it into figures. */
    public static final class Result {
        public final String policy;
        public final List<SimJob> jobs;
        public final int clusterGpus;
        public final long[] firstGrant;
        public final long[] finish;
        public final boolean[] succeeded;
        public final boolean[] rejected;
        public final List<long[]> intervals = new ArrayList<>();
        public final List<String> violations = new ArrayList<>();
        public int ended;
        public long decisions;
        public long dispatches;
        public long grants;
        public long deferrals;
        public long requeues;
        public long preemptions;
        public long preemptedGpuMs;
        public long nodeFailures;
        public long multiGpuGangs;
        public long multiGpuInOneRack;
        public long multiNodeGangs;
        public long multiNodeInOneRack;
        public long billedGpuMs;
        public long succeededGpuMs;
        public long lostGpuMs;
        public long wallNanos;
        public long peakHeapBytes;
        public long endMillis;
        public int leftAllocated;

        Result(String policy, List<SimJob> jobs, int clusterGpus) {
            this.policy = policy;
            this.jobs = jobs;
            this.clusterGpus = clusterGpus;
            this.firstGrant = new long[jobs.size()];
            this.finish = new long[jobs.size()];
            this.succeeded = new boolean[jobs.size()];
            this.rejected = new boolean[jobs.size()];
            java.util.Arrays.fill(firstGrant, -1);
            java.util.Arrays.fill(finish, -1);
        }
    }
}
