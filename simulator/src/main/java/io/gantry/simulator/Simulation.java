package io.gantry.simulator;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.PlacementFact;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.GangRequest;
import io.gantry.placement.core.GpuShare;
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

    /**
     * Random node failures: a Poisson process of {@code perNodeDay} failures per node per day over [0, horizon),
     * each on a node drawn uniformly among those up at the time, which comes back {@code recoverAfterMillis} later.
     * Seeded, so the same arguments give the same failures.
     */
    public static List<Fault> randomFaults(List<NodeSpec> nodes, double perNodeDay, long recoverAfterMillis,
                                           long horizonMillis, long seed) {
        if (!(perNodeDay >= 0) || Double.isInfinite(perNodeDay)) {
            throw new IllegalArgumentException("failure rate must be >= 0 per node-day, was " + perNodeDay);
        }
        if (recoverAfterMillis < 1) {
            throw new IllegalArgumentException("recovery time must be > 0");
        }
        List<Fault> out = new ArrayList<>();
        if (perNodeDay == 0 || nodes.isEmpty()) {
            return out;
        }
        java.util.Random rnd = new java.util.Random(seed);
        double ratePerMs = perNodeDay * nodes.size() / 86_400_000.0;
        Map<String, Long> downUntil = new HashMap<>();
        double t = 0;
        while (true) {
            t += -Math.log(1 - rnd.nextDouble()) / ratePerMs;
            if (t >= horizonMillis) {
                return out;
            }
            long at = (long) t;
            String node = nodes.get(rnd.nextInt(nodes.size())).nodeId();
            if (downUntil.getOrDefault(node, -1L) > at) {
                continue; // already down: a failure of a failed node is no event
            }
            downUntil.put(node, at + recoverAfterMillis);
            out.add(new Fault(at, node, recoverAfterMillis));
        }
    }

    /** The latest submit + run time of the workload's jobs: when it would end with no waiting at all. */
    public static long horizon(Workload w) {
        return w.jobs().stream().mapToLong(j -> j.submitMillis() + j.durationMillis()).max().orElse(0);
    }

    private enum Kind { SUBMIT, RUN_END, FAIL, RECOVER, DEADLINE, TICK, SAMPLE }

    /** Samples of the stranded-GPU figure per replay (placement's fragmentation is O(nodes) per sample). */
    static final int SAMPLES = 400;

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
    /** Device to its holders (allocation id to the thousandths it holds; a whole GPU is 1000). */
    private final Map<String, Map<String, Integer>> devices = new HashMap<>();
    private final Set<String> wholeHeld = new HashSet<>();
    private final int milliCapacity;
    private final Set<Integer> running = new HashSet<>();
    private int arrived;
    private long realPending;
    private long sampleEvery;
    /** The typical request sizes (GPUs per task) and their weights (share of the GPUs the workload asks for). */
    private final int[] typicalSizes;
    private final double[] typicalWeights;

    private final Result r;

    public Simulation(List<NodeSpec> nodes, Workload workload, Policy policy, FairShareConfig baseConfig,
                      GangPlacer placer, List<Fault> faults, Consumer<String> progress) {
        this.nodes = List.copyOf(nodes);
        this.workload = workload;
        this.policy = policy;
        this.queue = new QueueCore(policy.config(baseConfig), policy.dispatchPolicy());
        this.placement = new ClusterState(Clusters.BACKEND, placer);
        this.milliCapacity = placer.sharing().milliCapacity();
        this.faults = List.copyOf(faults);
        this.progress = progress == null ? s -> { } : progress;
        this.maxNodeGpus = nodes.stream().mapToInt(NodeSpec::gpuCount).max().orElse(0);
        nodes.forEach(n -> rackOfNode.put(n.nodeId(), Clusters.rackOf(n)));
        this.r = new Result(policy.label(), workload.jobs(), Clusters.totalGpus(nodes));
        Map<Integer, Double> sizes = new java.util.TreeMap<>();
        for (SimJob j : workload.jobs()) {
            int per = perTask(j);
            sizes.merge(per, j.milliGpus() / 1000.0, Double::sum);
        }
        double total = sizes.values().stream().mapToDouble(Double::doubleValue).sum();
        this.typicalSizes = sizes.keySet().stream().mapToInt(Integer::intValue).toArray();
        this.typicalWeights = sizes.values().stream().mapToDouble(v -> total <= 0 ? 0 : v / total).toArray();
    }

    /** GPUs per task of the job's gang: the largest divisor of its GPUs that fits one node (1 for a share). */
    int perTask(SimJob j) {
        if (j.fractional()) {
            return 1;
        }
        for (int d = Math.min(j.gpus(), maxNodeGpus); d >= 1; d--) {
            if (j.gpus() % d == 0) {
                return d;
            }
        }
        return 1;
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
        Map<String, Boolean> fits = new HashMap<>();
        long horizon = 0;
        for (int i = 0; i < jobs.size(); i++) {
            SimJob j = jobs.get(i);
            index.put(j.id(), i);
            String key = perTask(j) + "/" + j.cpuMillis() / Math.max(1, j.gpus() / perTask(j)) + "/"
                    + j.memoryMiB() / Math.max(1, j.gpus() / perTask(j)) + "/" + j.gpuModels();
            if (j.gpus() > capacity || !fits.computeIfAbsent(key, k -> fitsSomeNode(j))) {
                r.rejected[i] = true; // can never fit this cluster: not replayed, listed in the report
                continue;
            }
            horizon = Math.max(horizon, j.submitMillis() + j.durationMillis());
            schedule(j.submitMillis(), Kind.SUBMIT, i, null);
        }
        sampleEvery = Math.max(TICK_MILLIS, horizon / SAMPLES);
        for (Fault f : faults) {
            schedule(f.atMillis(), Kind.FAIL, -1, f.nodeId());
            if (f.recoverAfterMillis() != null) {
                schedule(f.atMillis() + f.recoverAfterMillis(), Kind.RECOVER, -1, f.nodeId());
            }
        }
        events.stream().mapToLong(Event::at).min().ifPresent(first -> {
            schedule(first + TICK_MILLIS, Kind.TICK, -1, null);
            schedule(first, Kind.SAMPLE, -1, null);
        });
        int toEnd = (int) java.util.stream.IntStream.range(0, jobs.size()).filter(i -> !r.rejected[i]).count();
        int step = Math.max(1, toEnd / 10);
        int nextReport = step;
        while (!events.isEmpty()) {
            Event e = events.poll();
            if (e.kind != Kind.TICK && e.kind != Kind.SAMPLE) {
                realPending--;
            }
            now = e.at;
            Instant t = Instant.ofEpochMilli(now);
            switch (e.kind) {
                case SUBMIT -> {
                    arrived++;
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
                    if (realPending > 0) {
                        schedule(now + TICK_MILLIS, Kind.TICK, -1, null);
                    }
                }
                case SAMPLE -> {
                    sampleStranded();
                    if (realPending > 0) {
                        schedule(now + sampleEvery, Kind.SAMPLE, -1, null);
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
            r.queueLength.add(now, arrived - r.ended - running.size());
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

    private final io.gantry.placement.core.DeferredGangs deferredGangs = new io.gantry.placement.core.DeferredGangs();

    private void schedule(long at, Kind kind, int job, String ref) {
        if (kind != Kind.TICK && kind != Kind.SAMPLE) {
            realPending++;
        }
        events.add(new Event(at, seq++, kind, job, ref));
    }

    /**
     * Whether one task of the job could ever be placed on some node of the cluster (enough GPUs of an accepted
     * model, CPU on one socket, memory); a job that cannot is rejected up front instead of parking forever.
     */
    private boolean fitsSomeNode(SimJob j) {
        int per = perTask(j);
        int replicas = j.fractional() ? 1 : j.gpus() / per;
        int cpu = j.cpuMillis() / replicas;
        long mem = j.memoryMiB() / replicas;
        for (NodeSpec n : nodes) {
            if (n.memoryMiB() < mem) {
                continue;
            }
            boolean cpuOk = false;
            for (int s = 0; s < n.sockets(); s++) {
                cpuOk |= n.socketCpuMillis(s) >= cpu;
            }
            if (!cpuOk) {
                continue;
            }
            Map<String, Integer> byModel = new HashMap<>();
            n.gpus().forEach(g -> byModel.merge(g.model(), 1, Integer::sum));
            for (Map.Entry<String, Integer> m : byModel.entrySet()) {
                if (m.getValue() >= per && (j.gpuModels().isEmpty() || j.gpuModels().contains(m.getKey()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** GPUs free but of no use to the typical request: placement's fragmentation measure x free GPUs. */
    private void sampleStranded() {
        var inv = placement.inventory();
        int free = inv.eligibleFreeGpus();
        double frac = 0;
        for (int k = 0; k < typicalSizes.length; k++) {
            frac += typicalWeights[k] * inv.fragmentation(List.of(typicalSizes[k]));
        }
        r.stranded.add(now, Math.round(frac * free));
        r.freeGpus.add(now, free);
    }

    private void submit(int i) {
        SimJob j = workload.jobs().get(i);
        ungranted.add(i);
        inbox.add(new ToQueue(new Input.Submitted(j.id(), j.tenant(), spec(j), Instant.ofEpochMilli(j.submitMillis()))));
    }

    /**
     * The gang as the REST API would take it: GPUs split into equal replicas of at most one node each (CPU and
     * memory split with them), or one task with a share of a GPU.
     */
    JobSpec spec(SimJob j) {
        TaskGroup t;
        if (j.fractional()) {
            t = new TaskGroup("worker", 1, List.of("sim"), 0, null, j.cpuMillis(), j.memoryMiB(), null,
                    j.gpuModels(), null, j.gpuMilli(), null, null);
        } else {
            int per = perTask(j);
            int replicas = j.gpus() / per;
            t = new TaskGroup("worker", replicas, List.of("sim"), per, null, j.cpuMillis() / replicas,
                    j.memoryMiB() / replicas, null, j.gpuModels(), null, null, null, null);
        }
        JobSpec.Topology topo = j.topology() == null ? null : new JobSpec.Topology("CLUSTER", j.topology());
        return new JobSpec(j.id(), 0, null, List.of(t), null, null, topo);
    }

    private void drain() {
        while (!inbox.isEmpty()) {
            Msg m = inbox.poll();
            Instant t = Instant.ofEpochMilli(now);
            if (m instanceof ToQueue q) {
                r.decisions++;
                r.queueInputs.merge(q.input().getClass().getSimpleName(), 1L, Long::sum);
                for (QueueFact f : queue.apply(q.input(), t)) {
                    queueFact(f);
                }
            } else if (m instanceof Dispatch d) {
                r.decisions++;
                GangRequest g = gang(d.fact());
                List<PlacementFact> facts = placement.dispatch(g, t);
                deferredGangs.afterDispatch(g, facts); // as the placement service does
                placementFacts(facts);
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
        } else if (f instanceof QueueFact.CapacityReservationRequested c) {
            // on queue.reservation-events: placement drains the cheapest domain for the starving gang
            r.capacityReservations++;
            placementFacts(placement.reserve(gang(c.jobId(), c.tenant(), c.attempt(), c.spec()),
                    Instant.ofEpochMilli(now)));
        } else if (f instanceof QueueFact.CapacityReservationCancelled c) {
            placementFacts(placement.cancelReservation(c.jobId(), c.attempt()));
        } else if (f instanceof QueueFact.JobPreempted p) {
            // on queue.preemption-events: placement stops the run after the grace period
            r.preemptions++;
            placementFacts(placement.preempt(p.jobId(), p.attempt(), p.graceSeconds(), Instant.ofEpochMilli(now)));
        }
    }

    private void ended(String jobId, boolean ok) {
        deferredGangs.forget(jobId);
        int i = index.get(jobId);
        r.finish[i] = now;
        r.succeeded[i] = ok;
        r.ended++;
    }

    private static GangRequest gang(QueueFact.JobDispatched d) {
        return gang(d.jobId(), d.tenant(), d.attempt(), d.spec());
    }

    private static GangRequest gang(String jobId, String tenant, int attempt, JobSpec spec) {
        List<io.gantry.placement.core.TaskGroup> tasks = new ArrayList<>();
        for (TaskGroup t : spec.tasks()) {
            tasks.add(new io.gantry.placement.core.TaskGroup(t.name(), t.replicas(), t.gpus(), t.gpuModel(),
                    t.cpuMillis(), t.memoryMiB(), t.gpuModels(), t.gpuTier(), t.runSeconds(), t.gpuMilli(),
                    t.gpuMemoryMiB(), t.migProfile()));
        }
        Topology topology = Topology.ANYWHERE;
        if (spec.topology() != null) {
            topology = new Topology(TopologyLevel.valueOf(spec.topology().required()),
                    TopologyLevel.valueOf(spec.topology().preferred()));
        }
        return new GangRequest(jobId, tenant, attempt, tasks, topology, spec.timeLimitSeconds());
    }

    /** Placement's facts, replayed into its state and delivered to the queue (and recovery) as the topics would. */
    private void placementFacts(List<PlacementFact> facts) {
        for (PlacementFact f : facts) {
            placement.replay(f);
            if (f instanceof PlacementFact.AllocationGranted g) {
                granted(g.allocation());
                Allocation a = g.allocation();
                inbox.add(new ToQueue(new Input.Granted(a.jobId(), a.tenant(), a.attempt())));
                placement.runStarted(a.allocationId(), Instant.ofEpochMilli(now)).forEach(placement::replay);
                schedule(now + workload.jobs().get(index.get(a.jobId())).durationMillis(), Kind.RUN_END, -1,
                        a.allocationId());
            } else if (f instanceof PlacementFact.PlacementDeferred d) {
                r.deferrals++;
                r.deferralsByReason.merge(d.reason().name(), 1L, Long::sum);
                r.deferralExample.putIfAbsent(d.reason().name(), d.message());
                inbox.add(new ToQueue(new Input.Deferred(d.jobId(), d.tenant(), d.attempt(), d.reason().name(),
                        d.message())));
            } else if (f instanceof PlacementFact.RunSucceeded s) {
                Allocation a = s.allocation();
                inbox.add(new ToQueue(new Input.RunSucceeded(a.jobId(), a.tenant(), a.attempt())));
            } else if (f instanceof PlacementFact.RunFailed fl) {
                Allocation a = fl.allocation();
                inbox.add(new ToQueue(new Input.RunFailed(a.jobId(), a.tenant(), a.attempt(), fl.message())));
            } else if (f instanceof PlacementFact.NodeRegistered n) {
                // a drain starting or ending re-publishes registrations, which the queue reads as a capacity change
                inbox.add(new ToQueue(new Input.CapacityChanged("node " + n.node().nodeId() + " registered")));
            } else if (f instanceof PlacementFact.PreemptionRequested p) {
                schedule(p.deadline().toEpochMilli(), Kind.DEADLINE, -1, p.allocation().allocationId());
            } else if (f instanceof PlacementFact.AllocationReleased rel) {
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
        running.add(i);
        r.grants++;
        long milli = milli(a);
        if (milli != workload.jobs().get(i).milliGpus()) {
            r.violations.add("job " + a.jobId() + " granted " + milli + " thousandths of a GPU, asked for "
                    + workload.jobs().get(i).milliGpus());
        }
        Set<String> racks = new HashSet<>();
        Set<String> onNodes = new HashSet<>();
        for (PlacedTask p : a.placements()) {
            racks.add(rackOfNode.get(p.nodeId()));
            onNodes.add(p.nodeId());
            for (int g : p.gpuIndices()) {
                take(p.nodeId() + "#" + g, a, 1000, true);
            }
            for (GpuShare sh : p.gpuShares()) {
                take(p.nodeId() + "#" + sh.index(), a, sh.milli(), false);
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

    /** Thousandths of a GPU an allocation holds: 1000 per whole GPU plus its shares. */
    static long milli(Allocation a) {
        return a.placements().stream().mapToLong(PlacedTask::gpuMilli).sum();
    }

    /** Records a grant of {@code milli} of a device; over-allocation (or a whole GPU shared) is a violation. */
    private void take(String dev, Allocation a, int milli, boolean whole) {
        Map<String, Integer> holders = devices.computeIfAbsent(dev, d -> new HashMap<>(2));
        if (holders.containsKey(a.allocationId())) {
            r.violations.add("device " + dev + " granted twice to " + a.jobId());
        }
        if (whole ? !holders.isEmpty() : wholeHeld.contains(dev)) {
            r.violations.add("device " + dev + " granted to " + a.jobId() + " while held by " + holders.keySet());
        }
        holders.merge(a.allocationId(), milli, Integer::sum);
        if (whole) {
            wholeHeld.add(dev);
        }
        int sum = holders.values().stream().mapToInt(Integer::intValue).sum();
        if (sum > Math.max(1000, milliCapacity)) {
            r.violations.add("device " + dev + " over-allocated: " + sum + " thousandths after " + a.jobId());
        }
    }

    private void give(String dev, Allocation a) {
        Map<String, Integer> holders = devices.get(dev);
        if (holders == null || holders.remove(a.allocationId()) == null) {
            r.violations.add("device " + dev + " released by " + a.jobId() + " which did not hold it");
            return;
        }
        wholeHeld.remove(dev);
        if (holders.isEmpty()) {
            devices.remove(dev);
        }
    }

    private void released(PlacementFact.AllocationReleased rel) {
        Allocation a = rel.allocation();
        for (PlacedTask p : a.placements()) {
            for (int g : p.gpuIndices()) {
                give(p.nodeId() + "#" + g, a);
            }
            for (GpuShare sh : p.gpuShares()) {
                give(p.nodeId() + "#" + sh.index(), a);
            }
        }
        long start = a.grantedAt().toEpochMilli();
        long end = rel.releasedAt().toEpochMilli();
        long milli = milli(a);
        long billed = milli * (end - start); // thousandths of a GPU x ms: a share is billed by its size
        int i = index.get(a.jobId());
        running.remove(i);
        r.billedMilliGpuMs += billed;
        r.intervals.add(new long[] {start, end, milli, i});
        if (rel.reason() == ReleaseCause.RUN_SUCCEEDED) {
            r.succeededMilliGpuMs += billed;
        } else if (rel.reason() == ReleaseCause.NODE_FAILED) {
            r.lostMilliGpuMs += billed;
        } else if (rel.reason() == ReleaseCause.PREEMPTED) {
            r.preemptedMilliGpuMs += billed; // no checkpoints in a trace: the preempted run's work is lost
        }
        // with the free capacity placement reports, so the queue wakes only parked gangs that might fit
        List<Input.DeferredCheck> checks = placement.checkDeferred(deferredGangs.oldestFirst(),
                Instant.ofEpochMilli(now), 128).stream()
                .map(c -> new Input.DeferredCheck(c.jobId(), c.attempt(), c.fits())).toList();
        inbox.add(new ToQueue(new Input.Released(a.jobId(), a.tenant(), a.attempt(), rel.reason().name(),
                free(placement.freeCapacity()), checks)));
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
            byModel.put(c.gpuModel(), new FreeCapacity.Model(c.freeGpus(), c.largestFreeOnNode(), c.nodesWithFree(),
                    c.largestFreeMilli(), c.largestFreeCpuMillis(), c.largestFreeMemoryMiB()));
        }
        return new FreeCapacity(byModel);
    }

    /** A step function of virtual time: (time, value) at every change, growable without boxing. */
    public static final class Series {
        private long[] t = new long[64];
        private long[] v = new long[64];
        private int n;

        void add(long at, long value) {
            if (n > 0 && v[n - 1] == value) {
                return;
            }
            if (n > 0 && t[n - 1] == at) {
                v[n - 1] = value;
                return;
            }
            if (n == t.length) {
                t = java.util.Arrays.copyOf(t, n * 2);
                v = java.util.Arrays.copyOf(v, n * 2);
            }
            t[n] = at;
            v[n] = value;
            n++;
        }

        public int size() {
            return n;
        }

        public long time(int k) {
            return t[k];
        }

        public long value(int k) {
            return v[k];
        }

        /** Time-weighted mean over buckets of [0, end]: the value holds from one change to the next. */
        public double[] buckets(long end, int buckets) {
            double[] out = new double[buckets];
            double width = Math.max(1.0, end / (double) buckets);
            for (int k = 0; k < n; k++) {
                long from = t[k];
                long to = k + 1 < n ? t[k + 1] : end;
                if (to <= from || v[k] == 0) {
                    continue;
                }
                int b0 = (int) Math.min(buckets - 1, from / width);
                int b1 = (int) Math.min(buckets - 1, to / width);
                for (int b = b0; b <= b1; b++) {
                    double lo = Math.max(from, b * width);
                    double hi = Math.min(to, (b + 1) * width);
                    if (hi > lo) {
                        out[b] += v[k] * (hi - lo);
                    }
                }
            }
            for (int b = 0; b < buckets; b++) {
                out[b] /= width;
            }
            return out;
        }

        /** Time-weighted mean over [first change, end]. */
        public double mean(long end) {
            if (n == 0 || end <= t[0]) {
                return 0;
            }
            double sum = 0;
            for (int k = 0; k < n; k++) {
                long to = k + 1 < n ? t[k + 1] : end;
                sum += (double) v[k] * Math.max(0, to - t[k]);
            }
            return sum / (end - t[0]);
        }

        public long max() {
            long m = 0;
            for (int k = 0; k < n; k++) {
                m = Math.max(m, v[k]);
            }
            return m;
        }
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
        /** Held intervals: {start ms, end ms, thousandths of a GPU held, job index}. */
        public final List<long[]> intervals = new ArrayList<>();
        /** Jobs arrived and neither running nor ended, at every change. */
        public final Series queueLength = new Series();
        /** Whole GPUs free but stranded for the typical request, and all free GPUs, sampled. */
        public final Series stranded = new Series();
        public final Series freeGpus = new Series();
        public final List<String> violations = new ArrayList<>();
        public int ended;
        public long decisions;
        public long dispatches;
        public long grants;
        public long deferrals;
        /** Placement deferrals by reason, to tell capacity waits from a wake-up that could not fit. */
        public final java.util.SortedMap<String, Long> deferralsByReason = new java.util.TreeMap<>();
        /** Inputs the queue core was given, by kind. */
        public final java.util.SortedMap<String, Long> queueInputs = new java.util.TreeMap<>();
        /** The first deferral message of each reason. */
        public final java.util.SortedMap<String, String> deferralExample = new java.util.TreeMap<>();
        public long requeues;
        public long preemptions;
        public long capacityReservations;
        public long preemptedMilliGpuMs;
        public long nodeFailures;
        public long multiGpuGangs;
        public long multiGpuInOneRack;
        public long multiNodeGangs;
        public long multiNodeInOneRack;
        /** GPU time in thousandths of a GPU x milliseconds (a whole GPU for 1 ms = 1000). */
        public long billedMilliGpuMs;
        public long succeededMilliGpuMs;
        public long lostMilliGpuMs;
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
