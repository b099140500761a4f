package io.gantry.simulator;

import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.Rating;
import io.gantry.billing.kafka.BillingHandler;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CapacityReservationRequested;
import io.gantry.events.GpuShare;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobFailed;
import io.gantry.events.JobPreempted;
import io.gantry.events.JobRequeued;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.JobSucceeded;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.events.TopologyConstraint;
import io.gantry.events.TopologyLevel;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.kafka.PlacementHandler;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.log.InMemoryLog;
import io.gantry.runtime.log.LogDriver;
import io.gantry.runtime.log.VirtualClock;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.simulator.whatif.VirtualSystem;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * One replay of one workload under one policy: the production queue, placement (its simulated backend running each
 * job for its traced run time) and recovery handlers, wired by the loops the services declare for production, on
 * the in-memory log in virtual time ({@link LogDriver}); billing's core rates every release. This class only feeds
 * the workload in (submissions at their times, node failures and recoveries) and reads the topics back into the
 * figures of a {@link Result}: the protocol between the services exists once, in the services.
 *
 * <p>Nothing reads the wall clock except the decisions-per-second figure, so the same inputs give the same report.
 */
public final class Simulation {
    /** Recovery's restart limit in replays (the service's default): a run interrupted more often is abandoned. */
    public static final int MAX_RESTARTS = 3;

    /**
     * Failure detection in replays that inject failures: simulated nodes heartbeat every {@link #HEARTBEAT} of
     * virtual time and recovery declares a node failed after {@link #FAILURE_TIMEOUT} of silence, looking every
     * {@link #RECOVERY_CHECK}. A replay of months cannot afford the service's one-second heartbeats; a node down for
     * less than the timeout goes unnoticed, as it would in production. A replay without failures runs recovery
     * with heartbeats and checks so rare that they cost nothing ({@link #NEVER}): there is nothing to detect.
     */
    static final Duration HEARTBEAT = Duration.ofMinutes(5);
    static final Duration FAILURE_TIMEOUT = Duration.ofMinutes(10);
    static final Duration RECOVERY_CHECK = Duration.ofMinutes(1);
    static final Duration NEVER = Duration.ofDays(365L * 100);

    /** How often the queue ticks (time-driven decisions: preemption once runs are old enough, starvation). */
    static final Duration QUEUE_TICK = Duration.ofSeconds(10);

    /**
     * A replay whose every submission is in and in which nothing ran and nothing happened for this long is over
     * (what is left can never run); long enough for a failed node to come back and be noticed.
     */
    static final Duration STUCK_AFTER = Duration.ofHours(2);

    /** Samples of the stranded-GPU figure per replay (placement's fragmentation is O(nodes) per sample). */
    static final int SAMPLES = 400;

    /** Virtual time zero: trace times are milliseconds from the start of the replay. */
    static final Instant T0 = Instant.EPOCH;

    /**
     * Jobs that save their state: every run commits a checkpoint every {@code every} of its work (each job's
     * interval drawn once within +-{@code jitter} of it, seeded), reported as a task would (a
     * {@code CheckpointCommitted} on admission's topic); a run resumed from a checkpoint first spends
     * {@code restartCost}, then does only the work after it. Recovery and the queue choose what a requeued run
     * resumes from, as in production.
     */
    public record Checkpoints(Duration every, Duration restartCost, double jitter, long seed) {
        public Checkpoints {
            if (every.isNegative() || every.isZero() || restartCost.isNegative() || !(jitter >= 0 && jitter < 1)) {
                throw new IllegalArgumentException("checkpoints need an interval > 0, a restart cost >= 0 and a "
                        + "jitter in [0, 1)");
            }
        }
    }

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

    /**
     * A hardware fault of one GPU ({@code xid}, e.g. 79: fallen off the bus) at {@code atMillis}, reported by the
     * simulated backend as the local backend reports a kernel-log Xid; recovery decides. The GPU is repaired (an
     * operator returns it to service) {@code repairAfterMillis} later (null: never).
     */
    public record DeviceFaultAt(long atMillis, String nodeId, int gpu, int xid, Long repairAfterMillis) {
    }

    /**
     * Random hardware GPU faults: a Poisson process of {@code perGpuDay} faults per GPU per day over [0, horizon),
     * each on a GPU drawn uniformly among those in service, repaired {@code repairAfterMillis} later. Seeded.
     */
    public static List<DeviceFaultAt> randomDeviceFaults(List<NodeSpec> nodes, double perGpuDay, long repairAfterMillis,
                                                         long horizonMillis, long seed) {
        if (!(perGpuDay >= 0) || Double.isInfinite(perGpuDay) || repairAfterMillis < 1) {
            throw new IllegalArgumentException("GPU fault rate must be >= 0 per GPU-day and repair time > 0");
        }
        List<String[]> gpus = new ArrayList<>();
        for (NodeSpec n : nodes) {
            n.gpus().forEach(g -> gpus.add(new String[] {n.nodeId(), Integer.toString(g.index())}));
        }
        List<DeviceFaultAt> out = new ArrayList<>();
        if (perGpuDay == 0 || gpus.isEmpty()) {
            return out;
        }
        java.util.Random rnd = new java.util.Random(seed ^ 0x5eed_0f_9a11L);
        double ratePerMs = perGpuDay * gpus.size() / 86_400_000.0;
        Map<String, Long> outUntil = new HashMap<>();
        double t = 0;
        while (true) {
            t += -Math.log(1 - rnd.nextDouble()) / ratePerMs;
            if (t >= horizonMillis) {
                return out;
            }
            long at = (long) t;
            String[] g = gpus.get(rnd.nextInt(gpus.size()));
            String key = g[0] + "#" + g[1];
            if (outUntil.getOrDefault(key, -1L) > at) {
                continue; // already out of service
            }
            outUntil.put(key, at + repairAfterMillis);
            out.add(new DeviceFaultAt(at, g[0], Integer.parseInt(g[1]), 79, repairAfterMillis));
        }
    }

    /** The latest submit + run time of the workload's jobs: when it would end with no waiting at all. */
    public static long horizon(Workload w) {
        return w.jobs().stream().mapToLong(j -> j.submitMillis() + j.durationMillis()).max().orElse(0);
    }

    /** Something the replay does at a virtual time, besides what the services do on their own. */
    private enum Kind { SUBMIT, FAIL, RECOVER, XID, REPAIR, SAMPLE }

    private record Step(long at, Kind kind, int job, String node, DeviceFaultAt device) {
        Step(long at, Kind kind, int job, String node) {
            this(at, kind, job, node, null);
        }
    }

    /** The topics the replay reads its figures from, in the order it reads them. */
    private static final List<Topic<?>> OBSERVED = List.of(Topics.PLACEMENT_ALLOCATION_EVENTS,
            Topics.QUEUE_JOB_EVENTS, Topics.QUEUE_PREEMPTION_EVENTS, Topics.QUEUE_RESERVATION_EVENTS,
            Topics.RECOVERY_JOB_EVENTS, Topics.ADMISSION_JOB_EVENTS, Topics.RECOVERY_NODE_EVENTS,
            Topics.PLACEMENT_NODE_EVENTS);

    private final List<NodeSpec> nodes;
    private final Workload workload;
    private final Policy policy;
    private final FairShareConfig config;
    private final GangPlacer placer;
    private final List<Fault> faults;
    private final Consumer<String> progress;
    private final int maxNodeGpus;
    private final int milliCapacity;
    private final Map<String, String> rackOfNode = new HashMap<>();
    private final Map<String, Integer> index = new HashMap<>();
    /** The typical request sizes (GPUs per task) and their weights (share of the GPUs the workload asks for). */
    private final int[] typicalSizes;
    private final double[] typicalWeights;

    private final Deque<Integer> gate = new ArrayDeque<>();
    private final Set<Integer> ungranted = new LinkedHashSet<>();
    /** Device to its holders (allocation id to the thousandths it holds; a whole GPU is 1000). */
    private final Map<String, Map<String, Integer>> devices = new HashMap<>();
    private final Set<String> wholeHeld = new HashSet<>();
    private final Set<Integer> running = new HashSet<>();
    private final Map<String, Long> read = new HashMap<>();
    private int arrived;
    private long lastChange;
    private long now;

    private Checkpoints checkpoints;
    /** Each job's checkpoint interval (ms), drawn once. */
    private long[] checkpointEvery;
    /** Runs started (allocation id): the job, its grant and the work it resumed with. */
    private final Map<String, Run> runs = new HashMap<>();
    /** Checkpoints to report, earliest first. */
    private final java.util.PriorityQueue<Due> dueCheckpoints = new java.util.PriorityQueue<>(
            Comparator.comparingLong(Due::at).thenComparing(Due::allocationId));
    /** When each node last failed (ms): a run on it made no progress after that. */
    private final Map<String, Long> failedAt = new HashMap<>();

    private record Run(int job, int attempt, long grantedAt, long resumedWith, long computeFrom, long endsAt,
                       List<String> nodes) {
        /** Work done (ms of the job's run time) at {@code t}. */
        long progressAt(long t) {
            return resumedWith + Math.max(0, Math.min(t, endsAt) - computeFrom);
        }
    }

    private record Due(long at, String allocationId) {
    }

    private LogDriver driver;
    private VirtualClock clock;
    private SimulatedBackend cluster;
    private PlacementHandler placement;
    /** Attempts the queue preempted whose release has not come yet (to tell them from drain stops). */
    private final java.util.Set<String> preemptedByQueue = new java.util.HashSet<>();

    private final Result r;

    public Simulation(List<NodeSpec> nodes, Workload workload, Policy policy, FairShareConfig baseConfig,
                      GangPlacer placer, List<Fault> faults, Consumer<String> progress) {
        this.nodes = List.copyOf(nodes);
        this.workload = workload;
        this.policy = policy;
        this.config = policy.config(baseConfig);
        this.placer = placer;
        this.milliCapacity = placer.sharing().milliCapacity();
        this.faults = List.copyOf(faults);
        this.progress = progress == null ? s -> { } : progress;
        this.maxNodeGpus = nodes.stream().mapToInt(NodeSpec::gpuCount).max().orElse(0);
        nodes.forEach(n -> rackOfNode.put(n.nodeId(), Clusters.rackOf(n)));
        this.r = new Result(policy.label(), workload.jobs(), Clusters.totalGpus(nodes));
        Map<Integer, Double> sizes = new TreeMap<>();
        for (SimJob j : workload.jobs()) {
            sizes.merge(perTask(j), j.milliGpus() / 1000.0, Double::sum);
        }
        double total = sizes.values().stream().mapToDouble(Double::doubleValue).sum();
        this.typicalSizes = sizes.keySet().stream().mapToInt(Integer::intValue).toArray();
        this.typicalWeights = sizes.values().stream().mapToDouble(v -> total <= 0 ? 0 : v / total).toArray();
    }

    private List<DeviceFaultAt> deviceFaults = List.of();

    /** Hardware GPU faults to replay (reported by the simulated backend, decided by recovery). */
    public Simulation deviceFaults(List<DeviceFaultAt> faults) {
        this.deviceFaults = List.copyOf(faults);
        return this;
    }

    /** Runs save checkpoints as {@code model} says (null: they never do, and every interruption loses the run). */
    public Simulation checkpoints(Checkpoints model) {
        this.checkpoints = model;
        return this;
    }

    private Service restarting;
    private int restartEvery;
    private boolean restartFromSnapshot;
    private int nextRestart;

    /**
     * Restarts {@code service} each time another {@code everyJobs} jobs have arrived, mid-replay: from a snapshot of
     * its state taken then, or (false) from its whole history. The two must decide alike: a replay with either is
     * the same replay.
     */
    public Simulation restarts(Service service, int everyJobs, boolean fromSnapshot) {
        if (everyJobs < 1) {
            throw new IllegalArgumentException("restart every >= 1 jobs, was " + everyJobs);
        }
        this.restarting = service;
        this.restartEvery = everyJobs;
        this.restartFromSnapshot = fromSnapshot;
        this.nextRestart = everyJobs;
        return this;
    }

    /** A restart of the service that restarts, when its next one is due (after the inputs of one instant). */
    private void restartIfDue() {
        if (restarting == null || arrived < nextRestart) {
            return;
        }
        nextRestart = arrived + restartEvery;
        if (restartFromSnapshot) {
            if (driver.restartFromSnapshot(restarting) < 0) {
                throw new IllegalStateException(restarting + " takes no snapshots");
            }
        } else {
            driver.restart(restarting);
        }
    }

    /**
     * Tasks of at most this many GPUs (default: as many as one node holds): 1 lets a gang spread over nodes, placed as
     * tightly as it fits, as simulators that ignore consolidation assume.
     */
    public Simulation taskGpus(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("taskGpus must be >= 1, was " + max);
        }
        this.taskGpus = max;
        return this;
    }

    private int taskGpus = Integer.MAX_VALUE;

    /**
     * GPUs per task of the job's gang: the largest divisor of its GPUs that fits one node and {@link #taskGpus} (1 for
     * a share).
     */
    int perTask(SimJob j) {
        if (j.fractional()) {
            return 1;
        }
        for (int d = Math.min(j.gpus(), Math.min(maxNodeGpus, taskGpus)); d >= 1; d--) {
            if (j.gpus() % d == 0) {
                return d;
            }
        }
        return 1;
    }

    /**
     * The gang as the REST API would take it: GPUs split into equal replicas of at most one node each (CPU and
     * memory split with them), or one task with a share of a GPU; the run time is the trace's (to the
     * millisecond, through the simulated backend), so the spec carries none; the time limit is the trace's; with a
     * checkpoint model, the job declares its checkpoints (as a user's spec would), which lets placement lend it GPUs
     * that drain for a starving gang.
     */
    JobSpec spec(SimJob j) {
        TaskSpec.Builder t = TaskSpec.newBuilder().setName("worker").setCommand(List.of("sim"))
                .setGpuModels(j.gpuModels()).setGpuModel(null).setRunSeconds(null).setGpuTier(null)
                .setGpuMemoryMiB(null).setMigProfile(null);
        if (j.fractional()) {
            t.setReplicas(1).setGpus(0).setGpuMilli(j.gpuMilli()).setCpuMillis(j.cpuMillis())
                    .setMemoryMiB(j.memoryMiB());
        } else {
            int per = perTask(j);
            int replicas = j.gpus() / per;
            t.setReplicas(replicas).setGpus(per).setGpuMilli(null).setCpuMillis(j.cpuMillis() / replicas)
                    .setMemoryMiB(j.memoryMiB() / replicas);
        }
        return JobSpec.newBuilder().setName(j.id()).setPriority(0).setTimeLimitSeconds(j.timeLimitSeconds())
                .setTasks(List.of(t.build()))
                .setTopology(j.topology() == null ? null
                        : new TopologyConstraint(TopologyLevel.CLUSTER, TopologyLevel.valueOf(j.topology())))
                .setQueue(null).setPriorityClass(null).setPlacementPolicy(null)
                .setCheckpoint(checkpoints == null ? null : io.gantry.events.CheckpointPolicy.newBuilder()
                        .setDir("/checkpoints/" + j.id()).setIntervalSeconds(checkpoints.every().toSeconds()).build())
                .build();
    }

    public Result run() {
        long wallStart = System.nanoTime();
        List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        heap.forEach(MemoryPoolMXBean::resetPeakUsage);
        start();

        List<SimJob> jobs = workload.jobs();
        List<Step> timeline = new ArrayList<>();
        Map<String, Boolean> fits = new HashMap<>();
        long horizon = 0;
        for (int i = 0; i < jobs.size(); i++) {
            SimJob j = jobs.get(i);
            index.put(j.id(), i);
            String key = perTask(j) + "/" + j.cpuMillis() / Math.max(1, j.gpus() / perTask(j)) + "/"
                    + j.memoryMiB() / Math.max(1, j.gpus() / perTask(j)) + "/" + j.gpuModels();
            if (j.gpus() > r.clusterGpus || !fits.computeIfAbsent(key, k -> fitsSomeNode(j))) {
                r.rejected[i] = true; // can never fit this cluster (admission refuses it): listed in the report
                continue;
            }
            horizon = Math.max(horizon, j.submitMillis() + j.durationMillis());
            timeline.add(new Step(j.submitMillis(), Kind.SUBMIT, i, null));
        }
        for (Fault f : faults) {
            timeline.add(new Step(f.atMillis(), Kind.FAIL, -1, f.nodeId()));
            if (f.recoverAfterMillis() != null) {
                timeline.add(new Step(f.atMillis() + f.recoverAfterMillis(), Kind.RECOVER, -1, f.nodeId()));
            }
        }
        for (DeviceFaultAt f : deviceFaults) {
            timeline.add(new Step(f.atMillis(), Kind.XID, -1, f.nodeId(), f));
            if (f.repairAfterMillis() != null) {
                timeline.add(new Step(f.atMillis() + f.repairAfterMillis(), Kind.REPAIR, -1, f.nodeId(), f));
            }
        }
        long first = timeline.stream().mapToLong(Step::at).min().orElse(0);
        long sampleEvery = Math.max(QUEUE_TICK.toMillis(), horizon / SAMPLES);
        for (long t = first; t <= horizon; t += sampleEvery) {
            timeline.add(new Step(t, Kind.SAMPLE, -1, null));
        }
        // in time order; at one instant: failures and recoveries, then submissions, then the sample
        timeline.sort(Comparator.comparingLong(Step::at).thenComparing(s -> s.kind() == Kind.SAMPLE ? 1 : 0));

        int toEnd = (int) java.util.stream.IntStream.range(0, jobs.size()).filter(i -> !r.rejected[i]).count();
        int step = Math.max(1, toEnd / 10);
        int[] nextReport = {step};
        Runnable report = () -> {
            if (r.ended >= nextReport[0]) {
                progress.accept(String.format("[%s] %d/%d jobs ended (%d%%), virtual time %.1f h", policy.label(),
                        r.ended, toEnd, 100L * r.ended / Math.max(1, toEnd), now / 3_600_000.0));
                while (nextReport[0] <= r.ended) {
                    nextReport[0] += step;
                }
            }
        };
        if (checkpoints != null) {
            java.util.Random rnd = new java.util.Random(checkpoints.seed());
            checkpointEvery = new long[jobs.size()];
            long every = checkpoints.every().toMillis();
            for (int i = 0; i < jobs.size(); i++) {
                double f = 1 + checkpoints.jitter() * (2 * rnd.nextDouble() - 1);
                checkpointEvery[i] = Math.max(1, Math.round(every * f));
            }
        }
        int k = 0;
        while (k < timeline.size()) {
            long at = timeline.get(k).at();
            if (reportCheckpointsBefore(at)) {
                continue;
            }
            advanceTo(at);
            observe();
            for (; k < timeline.size() && timeline.get(k).at() == at; k++) {
                Step s = timeline.get(k);
                switch (s.kind()) {
                    case SUBMIT -> {
                        arrived++;
                        r.waitCauses.submitted(workload.jobs().get(s.job()).id(), at);
                        r.queueLength.add(at, arrived - r.ended - running.size());
                        if (policy.headOfLineGate()) {
                            gate.add(s.job());
                        } else {
                            submit(s.job());
                        }
                    }
                    case FAIL -> {
                        r.nodeFailures++;
                        failedAt.put(s.node(), at);
                        cluster.fail(s.node()); // it goes silent; recovery notices after the timeout
                    }
                    case RECOVER -> {
                        cluster.revive(s.node());
                        driver.tickNow(Service.PLACEMENT);
                    }
                    case XID -> {
                        r.deviceFaults++;
                        failedAt.put(s.node() + "#" + s.device().gpu(), at);
                        cluster.inject(new io.gantry.placement.backend.DeviceFault(s.node(), s.device().gpu(),
                                io.gantry.placement.backend.DeviceFault.Kind.XID, s.device().xid(), "simulated",
                                "replayed hardware fault"));
                        driver.tickNow(Service.PLACEMENT);
                    }
                    case REPAIR -> driver.command(Service.PLACEMENT, out -> placement.uncordonGpus(s.node(),
                            java.util.Set.of(s.device().gpu()), out));
                    case SAMPLE -> sampleStranded(at);
                }
            }
            driver.runUntilIdle();
            observe();
            restartIfDue();
            observe();
            openGate();
            report.run();
        }
        // after the last submission: until every job ended, or nothing runs and nothing changes any more
        while (r.ended < toEnd) {
            long target = clock.instant().toEpochMilli() + sampleEvery;
            if (reportCheckpointsBefore(target)) {
                continue;
            }
            advanceTo(target);
            observe();
            openGate();
            sampleStranded(target);
            report.run();
            if (target - lastChange > STUCK_AFTER.toMillis() && cluster.running().isEmpty() && gate.isEmpty()) {
                break; // stuck: what is left can never run (reported as unfinished)
            }
        }
        r.wallNanos = System.nanoTime() - wallStart;
        r.peakHeapBytes = heap.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        r.endMillis = now;
        r.leftAllocated = devices.size();
        r.decisions = driver.handled(Service.QUEUE) + driver.handled(Service.PLACEMENT);
        return r;
    }

    /**
     * One service's restart after a replay: the records its restore read and how long the restore took; from a
     * snapshot or from the whole history.
     */
    public record Restart(Service service, boolean fromSnapshot, long records, long nanos) {
    }

    /**
     * Restarts queue, placement and recovery one after the other on the log the replay left (call after
     * {@link #run}), timing each: their handlers rebuilt from the whole of their restore topics, in memory (no Kafka
     * fetch, no Avro decoding), so a lower bound on a real restart's restore with this much history.
     */
    public List<Restart> timeRestarts() {
        List<Restart> times = new ArrayList<>();
        for (Service s : List.of(Service.QUEUE, Service.PLACEMENT, Service.RECOVERY)) {
            long records = driver.restoreRecords(s);
            long began = System.nanoTime();
            driver.restart(s);
            times.add(new Restart(s, false, records, System.nanoTime() - began));
        }
        return times;
    }

    /**
     * Restarts each of queue, placement and recovery whose handler takes snapshots from a snapshot of its state
     * (call after {@link #run}), timing each (in memory, as {@link #timeRestarts}).
     */
    public List<Restart> timeSnapshotRestarts() {
        List<Restart> times = new ArrayList<>();
        for (Service s : List.of(Service.QUEUE, Service.PLACEMENT, Service.RECOVERY)) {
            long began = System.nanoTime();
            long records = driver.restartFromSnapshot(s);
            if (records >= 0) {
                times.add(new Restart(s, true, records, System.nanoTime() - began));
            }
        }
        return times;
    }

    private QueueConfig queueSettings;
    private VirtualSystem system;

    /** The replay's virtual time now (after {@link #run}: where it ended). */
    public Instant now() {
        return clock.instant();
    }

    /** The log the replay left (call after {@link #run}): every topic's records, in order. */
    public io.gantry.runtime.log.InMemoryLog log() {
        return driver.log();
    }

    /**
     * The event loop of the queue (its configuration and dispatch policy), placement (its placer, on the replay's
     * cluster) or recovery (its policy) as the replay ran it, on {@code clock}: to restart the service elsewhere on
     * the history the replay left (call after {@link #run}).
     */
    public io.gantry.runtime.kafka.ServiceLoop loop(Service service, java.time.Clock clock) {
        if (service == Service.QUEUE) {
            List<io.gantry.events.QueueConfigEvent> history = driver.values(Topics.QUEUE_CONFIG_EVENTS);
            return io.gantry.queue.kafka.QueueProcessor.loop(queueSettings, () -> history, clock,
                    policy.dispatchPolicy(), QUEUE_TICK);
        }
        if (service == Service.RECOVERY) {
            return io.gantry.recovery.kafka.RecoveryProcessor.loop(system.recovery(), clock, system.recoveryCheck());
        }
        if (service == Service.PLACEMENT) {
            // on the replay's simulated cluster (nothing runs any more), as the replay wired it
            return io.gantry.placement.kafka.PlacementProcessor.loop(cluster,
                    new io.gantry.placement.backend.VirtualClock(clock, 1.0), placer, system.heartbeat(), false,
                    List.of(8), system.placementTick());
        }
        throw new IllegalArgumentException("no loop of " + service + " to restart elsewhere");
    }

    /**
     * Reports the earliest checkpoints due before {@code t} (all those due at that same instant), after the
     * services processed everything up to it; false when none is due before {@code t}.
     */
    private boolean reportCheckpointsBefore(long t) {
        if (dueCheckpoints.isEmpty() || dueCheckpoints.peek().at() >= t) {
            return false;
        }
        long at = dueCheckpoints.peek().at();
        advanceTo(at);
        observe();
        while (!dueCheckpoints.isEmpty() && dueCheckpoints.peek().at() == at) {
            reportCheckpoint(dueCheckpoints.poll().allocationId(), at);
        }
        driver.runUntilIdle();
        observe();
        return true;
    }

    /** The three services, restored (the nodes registered) and idle at virtual time zero. */
    private void start() {
        clock = new VirtualClock(T0);
        cluster = new SimulatedBackend(nodes).withRunTimes(this::runMillis);
        QueueConfig settings = new QueueConfig();
        queueSettings = settings;
        settings.setConfigFile(VirtualSystem.configFile(QueueConfig.toYaml(config)));
        // a replay's configuration never changes, and wake-ups come from placement's releases, as in production;
        // the safety-net re-check of every parked job is off (it is for wake-ups lost across partitions)
        settings.setConfigPoll("36500d");
        settings.setParkedRecheck("36500d");
        boolean detecting = !faults.isEmpty();
        system = new VirtualSystem(Duration.ofSeconds(1), detecting ? HEARTBEAT : NEVER,
                new RecoveryPolicy(detecting ? FAILURE_TIMEOUT : NEVER.multipliedBy(2), MAX_RESTARTS),
                detecting ? RECOVERY_CHECK : NEVER, QUEUE_TICK);
        driver = system.start(clock, cluster, settings, policy.dispatchPolicy(), placer, false,
                h -> placement = h);
        observe();
    }

    /**
     * How long a run takes on the simulated backend: the job's trace run time, or, resumed from a checkpoint, the
     * restart cost plus the work after it. Called when the backend starts the run, so the run is noted here.
     */
    private long runMillis(io.gantry.placement.core.Allocation a, io.gantry.placement.backend.RunPlan plan) {
        Integer i = index.get(a.jobId());
        if (i == null) {
            return -1;
        }
        long duration = workload.jobs().get(i).durationMillis();
        long resumed = plan.resumeFrom() == null ? 0 : Math.min(duration, progressIn(plan.resumeFrom()));
        long restart = resumed > 0 ? checkpoints.restartCost().toMillis() : 0;
        long granted = a.grantedAt().toEpochMilli();
        Run run = new Run(i, a.attempt(), granted, resumed, granted + restart, granted + restart + duration - resumed,
                a.placements().stream().map(io.gantry.placement.core.PlacedTask::nodeId).distinct().toList());
        runs.put(a.allocationId(), run);
        if (checkpoints != null) {
            long next = run.computeFrom() + checkpointEvery[i];
            if (next < run.endsAt()) {
                dueCheckpoints.add(new Due(next, a.allocationId()));
            }
        }
        return run.endsAt() - granted;
    }

    private static final String CHECKPOINT_PREFIX = "sim://checkpoints/";

    /** A checkpoint's path names the work it holds: {@code sim://checkpoints/<job>/<ms of work>}. */
    private static long progressIn(String path) {
        return Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
    }

    /** The tasks of a run report a checkpoint, as through the API: admission announces it on its topic. */
    private void reportCheckpoint(String allocationId, long at) {
        Run run = runs.get(allocationId);
        if (run == null) {
            return; // released meanwhile
        }
        long next = at + checkpointEvery[run.job()];
        if (next < run.endsAt()) {
            dueCheckpoints.add(new Due(next, allocationId));
        }
        if (run.nodes().stream().anyMatch(cluster::isFailed)) {
            return; // a run on a failed node makes no progress and saves nothing
        }
        SimJob j = workload.jobs().get(run.job());
        long progress = run.progressAt(at);
        driver.publish(Topics.ADMISSION_CHECKPOINT_EVENTS, j.id(), io.gantry.events.CheckpointEvent.newBuilder()
                .setEventId("replay-checkpoint-" + allocationId + "-" + at).setJobId(j.id())
                .setOccurredAt(T0.plusMillis(at))
                .setPayload(io.gantry.events.CheckpointCommitted.newBuilder().setTenant(j.tenant())
                        .setAttempt(run.attempt()).setStep(progress / 1000).setPath(CHECKPOINT_PREFIX + j.id() + "/"
                                + progress)
                        .setSizeBytes(null).setSaveMillis(null).setReportedVia("api")
                        .setCommittedAt(T0.plusMillis(at)).build()).build());
        lastCheckpoint.put(allocationId, at);
        r.checkpoints++;
    }

    /** When each live run last saved a checkpoint (ms). */
    private final Map<String, Long> lastCheckpoint = new HashMap<>();

    private void submit(int i) {
        SimJob j = workload.jobs().get(i);
        ungranted.add(i);
        r.queueInputs.merge("JobSubmitted", 1L, Long::sum);
        // occurredAt is the submission time the queue orders by (a gated job keeps its place in line)
        driver.publish(Topics.ADMISSION_JOB_EVENTS, j.id(), AdmissionJobEvent.newBuilder()
                .setEventId("replay-submit-" + j.id()).setJobId(j.id()).setOccurredAt(T0.plusMillis(j.submitMillis()))
                .setPayload(new JobSubmitted(j.tenant(), spec(j), null)).build());
    }

    /**
     * Moves the services to {@code at}. With jobs held at the strict-FIFO gate it goes from one due tick to the next,
     * so the next job is handed over at the instant the one before it was placed, not at the next step of the replay.
     */
    private void advanceTo(long at) {
        while (!gate.isEmpty()) {
            long next = Math.min(at, driver.nextDue().toEpochMilli());
            next = Math.max(next, clock.instant().toEpochMilli() + 1);
            if (next >= at) {
                break;
            }
            driver.advanceTo(T0.plusMillis(next));
            observe();
            openGate();
        }
        driver.advanceTo(T0.plusMillis(at));
    }

    /** Strict FIFO: the next job is submitted only once every job before it was placed. */
    private void openGate() {
        while (policy.headOfLineGate() && ungranted.isEmpty() && !gate.isEmpty()) {
            submit(gate.poll());
            driver.runUntilIdle();
            observe();
        }
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
    private void sampleStranded(long at) {
        var inv = placement.state().inventory();
        int free = inv.eligibleFreeGpus();
        double frac = 0;
        for (int k = 0; k < typicalSizes.length; k++) {
            frac += typicalWeights[k] * inv.fragmentation(List.of(typicalSizes[k]));
        }
        r.stranded.add(at, Math.round(frac * free));
        r.freeGpus.add(at, free);
    }

    // ------------------------------------------------------------------------------------ reading the topics back

    /** Reads every record written since the last call, in the order written, into the figures. */
    private void observe() {
        List<InMemoryLog.Entry> fresh = new ArrayList<>();
        for (Topic<?> t : OBSERVED) {
            long from = read.getOrDefault(t.name(), 0L);
            List<InMemoryLog.Entry> entries = driver.log().from(t.name(), from);
            fresh.addAll(entries);
            read.put(t.name(), driver.log().end(t.name()));
        }
        fresh.sort(Comparator.comparingLong(InMemoryLog.Entry::sequence));
        if (!fresh.isEmpty()) {
            r.reservedIdle.add(fresh.get(0).appendedAt().toEpochMilli(), placement.state().idleReservedGpus());
        }
        for (InMemoryLog.Entry e : fresh) {
            now = e.appendedAt().toEpochMilli();
            Object v = e.value();
            String kind = payloadKind(v);
            if (v instanceof AdmissionJobEvent) {
                continue; // the replay's own submissions
            }
            lastChange = now;
            if (e.topic().equals(Topics.PLACEMENT_ALLOCATION_EVENTS.name())
                    || e.topic().equals(Topics.RECOVERY_JOB_EVENTS.name())
                    || e.topic().equals(Topics.PLACEMENT_NODE_EVENTS.name())
                    || e.topic().equals(Topics.RECOVERY_NODE_EVENTS.name())) {
                r.queueInputs.merge(kind, 1L, Long::sum); // what the queue consumes besides submissions
            }
            if (v instanceof AllocationEvent a) {
                allocation(a);
            } else if (v instanceof QueueJobEvent q) {
                if (q.getPayload() instanceof JobDispatched d) {
                    r.waitCauses.heard(q.getJobId(), gpusOf(q.getJobId()), WaitCauses.PLACING, now);
                    r.dispatches++;
                    charged.put(q.getJobId() + "#" + d.getAttempt(), d.getGpuMilli());
                } else if (q.getPayload() instanceof io.gantry.events.QuotaReleased qr) {
                    Long charge = charged.remove(q.getJobId() + "#" + qr.getAttempt());
                    if (charge != null && !charge.equals(qr.getGpuMilli())) {
                        r.violations.add("job " + q.getJobId() + " attempt " + qr.getAttempt() + ": the queue gave "
                                + "back " + qr.getGpuMilli() + " thousandths of a GPU, charged " + charge);
                    }
                } else if (q.getPayload() instanceof io.gantry.events.JobWaiting w) {
                    // placement's deferral named the capacity cause; the queue's CAPACITY only repeats it
                    if (w.getReason() != io.gantry.events.WaitReason.CAPACITY) {
                        r.waitCauses.heard(q.getJobId(), gpusOf(q.getJobId()),
                                WaitCauses.ofQueue(w.getReason(), w.getQuotaWait()), now);
                    }
                } else if (q.getPayload() instanceof JobSucceeded) {
                    ended(q.getJobId(), true);
                } else if (q.getPayload() instanceof JobFailed || q.getPayload() instanceof JobCancelled) {
                    ended(q.getJobId(), false);
                }
            } else if (v instanceof QueuePreemptionEvent p && p.getPayload() instanceof JobPreempted jp) {
                r.preemptions++;
                r.preemptionsByReason.merge(jp.getReason().name(), 1L, Long::sum);
                preemptedByQueue.add(p.getJobId() + "#" + jp.getAttempt());
            } else if (v instanceof QueueReservationEvent c && c.getPayload() instanceof CapacityReservationRequested) {
                r.capacityReservations++;
            } else if (v instanceof RecoveryJobEvent rj && rj.getPayload() instanceof JobRequeued) {
                r.requeues++;
            }
            r.queueLength.add(now, arrived - r.ended - running.size());
        }
    }

    private static String payloadKind(Object v) {
        if (v instanceof AllocationEvent a) {
            return a.getPayload().getClass().getSimpleName();
        }
        if (v instanceof RecoveryJobEvent rj) {
            return rj.getPayload().getClass().getSimpleName();
        }
        if (v instanceof io.gantry.events.NodeEvent n) {
            return n.getPayload().getClass().getSimpleName();
        }
        if (v instanceof io.gantry.events.NodeHealthEvent n) {
            return n.getPayload().getClass().getSimpleName();
        }
        return v.getClass().getSimpleName();
    }

    private void allocation(AllocationEvent e) {
        if (e.getPayload() instanceof AllocationGranted g) {
            granted(e.getJobId(), g);
        } else if (e.getPayload() instanceof PlacementDeferred d) {
            r.deferrals++;
            r.deferralsByReason.merge(d.getReason().name(), 1L, Long::sum);
            r.deferralExample.putIfAbsent(d.getReason().name(), d.getMessage());
            r.waitCauses.heard(e.getJobId(), gpusOf(e.getJobId()), "CAPACITY: " + d.getReason().name(), now);
        } else if (e.getPayload() instanceof AllocationReleased rel) {
            released(e.getJobId(), rel);
        }
    }

    private int gpusOf(String jobId) {
        Integer i = index.get(jobId);
        return i == null ? 1 : workload.jobs().get(i).gpus();
    }

    private void ended(String jobId, boolean ok) {
        int i = index.get(jobId);
        if (r.finish[i] >= 0) {
            r.violations.add("job " + jobId + " ended twice");
            return;
        }
        r.finish[i] = now;
        r.succeeded[i] = ok;
        r.ended++;
    }

    /** Thousandths of a GPU the queue charged per dispatched attempt ({@code job#attempt}), until it gives them back. */
    private final Map<String, Long> charged = new HashMap<>();
    /** Thousandths of a GPU placed per granted allocation, until it is released. */
    private final Map<String, Long> heldByAllocation = new HashMap<>();

    private void granted(String jobId, AllocationGranted a) {
        int i = index.get(jobId);
        if (r.firstGrant[i] < 0) {
            r.firstGrant[i] = a.getGrantedAt().toEpochMilli();
            r.waitCauses.granted(jobId, workload.jobs().get(i).gpus(), r.firstGrant[i]);
        }
        ungranted.remove(i);
        running.add(i);
        r.grants++;
        long milli = milli(a.getPlacements());
        Long charge = charged.get(jobId + "#" + a.getAttempt());
        if (charge == null || charge != milli) {
            // one unit across the services: what the queue charged is what placement placed
            r.violations.add("job " + jobId + " attempt " + a.getAttempt() + ": placed " + milli
                    + " thousandths of a GPU, the queue charged " + charge);
        }
        heldByAllocation.put(a.getAllocationId(), milli);
        if (milli != workload.jobs().get(i).milliGpus()) {
            r.violations.add("job " + jobId + " granted " + milli + " thousandths of a GPU, asked for "
                    + workload.jobs().get(i).milliGpus());
        }
        Set<String> racks = new HashSet<>();
        Set<String> onNodes = new HashSet<>();
        int gpus = 0;
        for (TaskPlacement p : a.getPlacements()) {
            racks.add(rackOfNode.get(p.getNodeId()));
            onNodes.add(p.getNodeId());
            for (int g : p.getGpuIndices()) {
                take(p.getNodeId() + "#" + g, jobId, a.getAllocationId(), 1000, true);
                gpus++;
            }
            for (GpuShare sh : p.getGpuShares()) {
                take(p.getNodeId() + "#" + sh.getIndex(), jobId, a.getAllocationId(), sh.getMilli(), false);
            }
        }
        if (gpus > 1) {
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

    /** Thousandths of a GPU placements hold, counted as billing counts them (one rule, billing's). */
    static long milli(List<TaskPlacement> placements) {
        return BillingHandler.placements(placements).stream()
                .mapToLong(io.gantry.billing.core.Placement::gpuMilli).sum();
    }

    /** Records a grant of {@code milli} of a device; over-allocation (or a whole GPU shared) is a violation. */
    private void take(String dev, String jobId, String allocationId, int milli, boolean whole) {
        Map<String, Integer> holders = devices.computeIfAbsent(dev, d -> new HashMap<>(2));
        if (holders.containsKey(allocationId)) {
            r.violations.add("device " + dev + " granted twice to " + jobId);
        }
        if (whole ? !holders.isEmpty() : wholeHeld.contains(dev)) {
            r.violations.add("device " + dev + " granted to " + jobId + " while held by " + holders.keySet());
        }
        holders.merge(allocationId, milli, Integer::sum);
        if (whole) {
            wholeHeld.add(dev);
        }
        int sum = holders.values().stream().mapToInt(Integer::intValue).sum();
        if (sum > Math.max(1000, milliCapacity)) {
            r.violations.add("device " + dev + " over-allocated: " + sum + " thousandths after " + jobId);
        }
    }

    private void give(String dev, String jobId, String allocationId) {
        Map<String, Integer> holders = devices.get(dev);
        if (holders == null || holders.remove(allocationId) == null) {
            r.violations.add("device " + dev + " released by " + jobId + " which did not hold it");
            return;
        }
        wholeHeld.remove(dev);
        if (holders.isEmpty()) {
            devices.remove(dev);
        }
    }

    private void released(String jobId, AllocationReleased rel) {
        // a preempted run that ended by itself within its grace is released for another reason: forget it either way
        boolean byQueue = preemptedByQueue.remove(jobId + "#" + rel.getAttempt());
        for (TaskPlacement p : rel.getPlacements()) {
            for (int g : p.getGpuIndices()) {
                give(p.getNodeId() + "#" + g, jobId, rel.getAllocationId());
            }
            for (GpuShare sh : p.getGpuShares()) {
                give(p.getNodeId() + "#" + sh.getIndex(), jobId, rel.getAllocationId());
            }
        }
        // rated by billing's core, as the billing service rates it: thousandths of a GPU x milliseconds
        long billed = 0;
        for (LedgerEntry entry : Rating.rate(BillingHandler.release(jobId, rel))) {
            billed += entry.gpuMicros();
        }
        long start = rel.getGrantedAt().toEpochMilli();
        long end = rel.getReleasedAt().toEpochMilli();
        long milli = milli(rel.getPlacements());
        Long held = heldByAllocation.remove(rel.getAllocationId());
        long rated = billed / Math.max(1, rel.getReleasedAt().toEpochMilli() - rel.getGrantedAt().toEpochMilli());
        if (held == null || held != milli || end > start && rated != milli) {
            // ... and what billing rated is what was placed
            r.violations.add("allocation " + rel.getAllocationId() + ": placed " + held + ", released " + milli
                    + ", billed " + rated + " thousandths of a GPU");
        }
        int i = index.get(jobId);
        running.remove(i);
        runs.remove(rel.getAllocationId());
        Long saved = lastCheckpoint.remove(rel.getAllocationId());
        r.billedMilliGpuMs += billed;
        r.intervals.add(new long[] {start, end, milli, i});
        // what an interruption cost: the GPU time held since the newest checkpoint (all of it without one); the
        // time before it is work the next run resumes with
        long keptFrom = saved == null ? start : saved;
        long lost = milli * (end - keptFrom);
        if (rel.getReason() == ReleaseReason.RUN_SUCCEEDED) {
            r.succeededMilliGpuMs += billed;
        } else if (rel.getReason() == ReleaseReason.NODE_FAILED || rel.getReason() == ReleaseReason.DEVICE_FAULT) {
            r.lostMilliGpuMs += lost;
            r.savedMilliGpuMs += billed - lost;
            r.interruptedRuns++;
            // the work lost: from the newest checkpoint to the node's (or GPU's) failure (the rest is detection time)
            long failed = end;
            for (TaskPlacement p : rel.getPlacements()) {
                List<String> keys = new ArrayList<>(List.of(p.getNodeId()));
                p.getGpuIndices().forEach(g -> keys.add(p.getNodeId() + "#" + g));
                p.getGpuShares().forEach(sh -> keys.add(p.getNodeId() + "#" + sh.getIndex()));
                for (String key : keys) {
                    Long f = failedAt.get(key);
                    if (f != null && f >= start && f < failed) {
                        failed = f;
                    }
                }
            }
            r.maxWorkLostPerFailureMs = Math.max(r.maxWorkLostPerFailureMs, Math.max(0, failed - keptFrom));
        } else if (rel.getReason() == ReleaseReason.PREEMPTED) {
            if (!byQueue) {
                r.drainStops++; // stopped by placement to bound a capacity reservation's drain
            }
            r.preemptedMilliGpuMs += lost;
            r.savedMilliGpuMs += billed - lost;
        }
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
        /** First-grant waits by what the job was waiting for. */
        final WaitCauses waitCauses = new WaitCauses();
        /** Jobs arrived and neither running nor ended, at every change. */
        public final Series queueLength = new Series();
        /** Whole GPUs free but stranded for the typical request, and all free GPUs, sampled. */
        public final Series stranded = new Series();
        public final Series freeGpus = new Series();
        /** Whole GPUs free on nodes drained for a capacity reservation, at every change (held idle for a gang). */
        public final Series reservedIdle = new Series();

        /** GPU-hours held idle on drained nodes over the replay. */
        public double reservedIdleGpuHours() {
            return reservedIdle.size() == 0 ? 0 : reservedIdle.mean(endMillis) * (endMillis - reservedIdle.time(0))
                    / 3.6e6;
        }
        public final List<String> violations = new ArrayList<>();
        public int ended;
        public long decisions;
        public long dispatches;
        public long grants;
        public long deferrals;
        /** The queue's preemptions by reason (service level, reclaim, priority...). */
        public final java.util.SortedMap<String, Long> preemptionsByReason = new java.util.TreeMap<>();
        /** Placement deferrals by reason, to tell capacity waits from a wake-up that could not fit. */
        public final java.util.SortedMap<String, Long> deferralsByReason = new java.util.TreeMap<>();
        /** Inputs the queue core was given, by kind. */
        public final java.util.SortedMap<String, Long> queueInputs = new java.util.TreeMap<>();
        /** The first deferral message of each reason. */
        public final java.util.SortedMap<String, String> deferralExample = new java.util.TreeMap<>();
        public long requeues;
        public long preemptions;
        public long capacityReservations;
        /** Runs placement stopped to bound a reservation's drain (released PREEMPTED without a JobPreempted). */
        public long drainStops;
        public long preemptedMilliGpuMs;
        public long nodeFailures;
        public long multiGpuGangs;
        public long multiGpuInOneRack;
        public long multiNodeGangs;
        public long multiNodeInOneRack;
        /** GPU time in thousandths of a GPU x milliseconds (a whole GPU for 1 ms = 1000). */
        public long billedMilliGpuMs;
        /** GPU time of interrupted runs kept by their checkpoints (the next run resumed with that work). */
        public long savedMilliGpuMs;
        /** Runs ended by a node failure, and the most work one of them lost (newest checkpoint to failure). */
        public long interruptedRuns;
        public long maxWorkLostPerFailureMs;
        /** Checkpoints the runs reported (0 without a checkpoint model). */
        public long checkpoints;
        /** Hardware GPU faults replayed. */
        public long deviceFaults;
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
