package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.TimeMath;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Virtual nodes whose tasks "run" for their spec's {@code runSeconds} of placement's virtual clock. A run ends at
 * exactly {@code grantedAt + max(runSeconds)} of its tasks, however late the loop notices; a task without
 * {@code runSeconds} runs for the backend's default run time ({@code gantry.placement.simulated.default-run-seconds},
 * 0: until cancelled), so a job that forgot the field does not hold its GPUs forever. A run time too large for
 * any clock (an end past {@link TimeMath#END_OF_TIME}) runs until cancelled; a negative one ends at once. Runs are a pure function of the allocation and its plan, so after a
 * restart they are re-created from the restored allocations.
 *
 * <p>With a success policy ({@link RunPlan#successLeader}) the run ends when the leader group's tasks end. No
 * process runs, so there is no environment to hand over; {@link #environment} says what a real backend would set.
 *
 * <p>An administrator can fail a node: it stops heartbeating and its tasks never finish, until recovery notices
 * and placement releases the allocations; or revive it.
 */
public final class SimulatedBackend implements ExecutionBackend {
    public static final String NAME = "simulated";
    /** How long a task without {@code runSeconds} runs, in virtual seconds, unless configured otherwise. */
    public static final long DEFAULT_RUN_SECONDS = 60;

    private final Map<String, NodeSpec> nodes = new LinkedHashMap<>();
    private final Map<String, Run> runs = new HashMap<>();
    /** Runs that end by themselves, by end time then job id: a poll reads only the due head. */
    private final TreeSet<Run> ending = new TreeSet<>(Comparator.comparing(Run::endsAt)
            .thenComparing(r -> r.allocation().jobId()).thenComparing(r -> r.allocation().allocationId()));
    /** Due runs held on a failed node: they end when the node comes back, unless stopped before. */
    private final Map<String, Run> stalled = new HashMap<>();
    private final Set<String> failedNodes = new HashSet<>();
    private final long defaultRunSeconds;
    /** Run time in milliseconds by allocation, when a replay knows it better than the spec's whole seconds. */
    private RunTimes runMillis;
    private final FaultQueue faults = new FaultQueue();
    /** Faults of the fault file, by their offset from the first poll, earliest first. */
    private final List<ScheduledFault> schedule = new ArrayList<>();
    private Instant scheduleStart;
    private final Set<String> failingPreflight = new HashSet<>();
    private double preflightFailureProbability;
    private java.util.Random preflightRandom = new java.util.Random(42);

    /** A fault the fault file injects {@code afterSeconds} (virtual) after the backend's first poll. */
    public record ScheduledFault(double afterSeconds, DeviceFault fault) {
    }

    /** How long a run takes, in milliseconds; negative: the spec's {@code runSeconds} decide. */
    @FunctionalInterface
    public interface RunTimes {
        /** @param plan the run's plan, with the checkpoint it resumes from (null when none) */
        long millis(Allocation allocation, RunPlan plan);
    }

    private record Run(Allocation allocation, Instant endsAt, RunPlan plan) {
    }

    /** With the default run time of {@value #DEFAULT_RUN_SECONDS} s for tasks without {@code runSeconds}. */
    public SimulatedBackend(List<NodeSpec> nodes) {
        this(nodes, DEFAULT_RUN_SECONDS);
    }

    /** @param defaultRunSeconds how long a task without {@code runSeconds} runs; 0: until cancelled */
    public SimulatedBackend(List<NodeSpec> nodes, long defaultRunSeconds) {
        if (defaultRunSeconds < 0) {
            throw new IllegalArgumentException("the default run time must be >= 0 seconds, was " + defaultRunSeconds);
        }
        nodes.forEach(n -> this.nodes.put(n.nodeId(), n));
        this.defaultRunSeconds = defaultRunSeconds;
    }

    public long defaultRunSeconds() {
        return defaultRunSeconds;
    }

    /**
     * Run times from the replayed trace instead of the spec's {@code runSeconds} (a trace measures milliseconds, and
     * a run resumed from a checkpoint has only the rest of its work to do; a negative answer falls back to the
     * spec). For the simulator; the service never sets it.
     */
    /**
     * Every GPU of every heartbeating node reports {@code percent} busy (null: utilisation is not reported, the
     * default). A test or a what-if run injects the figure it wants to see billed as used.
     */
    public SimulatedBackend withGpuUtilisation(Integer percent) {
        if (percent != null && (percent < 0 || percent > 100)) {
            throw new IllegalArgumentException("GPU utilisation must be 0-100 percent, was " + percent);
        }
        this.gpuUtilisation = percent;
        return this;
    }

    private Integer gpuUtilisation;

    @Override
    public java.util.Map<String, java.util.Map<Integer, Integer>> gpuUtilisation(Instant now) {
        if (gpuUtilisation == null) {
            return java.util.Map.of();
        }
        java.util.Map<String, java.util.Map<Integer, Integer>> out = new java.util.TreeMap<>();
        for (NodeSpec n : nodes.values()) {
            if (heartbeating(n.nodeId())) {
                java.util.Map<Integer, Integer> gpus = new java.util.TreeMap<>();
                n.gpus().forEach(g -> gpus.put(g.index(), gpuUtilisation));
                out.put(n.nodeId(), gpus);
            }
        }
        return out;
    }

    public SimulatedBackend withRunTimes(RunTimes millis) {
        this.runMillis = millis;
        return this;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<NodeSpec> nodes() {
        return List.copyOf(nodes.values());
    }

    @Override
    public boolean heartbeating(String nodeId) {
        return nodes.containsKey(nodeId) && !failedNodes.contains(nodeId);
    }

    public boolean knows(String nodeId) {
        return nodes.containsKey(nodeId);
    }

    /** The node goes silent and its tasks stop making progress. */
    public void fail(String nodeId) {
        failedNodes.add(nodeId);
    }

    public void revive(String nodeId) {
        failedNodes.remove(nodeId);
        for (Run r : List.copyOf(stalled.values())) {
            if (onNoFailedNode(r)) {
                stalled.remove(r.allocation().allocationId());
                ending.add(r);
            }
        }
    }

    private boolean onNoFailedNode(Run r) {
        return r.allocation().placements().stream().noneMatch(p -> failedNodes.contains(p.nodeId()));
    }

    /** Injects a device fault (admin API): reported on the next poll; an unknown node is refused. */
    public void inject(DeviceFault fault) {
        if (!nodes.containsKey(fault.nodeId())) {
            throw new IllegalArgumentException("no simulated node " + fault.nodeId());
        }
        faults.offer(fault);
    }

    /** Faults to inject at virtual times after the first poll (the fault file); unknown nodes are refused. */
    public SimulatedBackend withFaultSchedule(List<ScheduledFault> faultSchedule) {
        for (ScheduledFault f : faultSchedule) {
            if (!nodes.containsKey(f.fault().nodeId())) {
                throw new IllegalArgumentException("fault file: no simulated node " + f.fault().nodeId());
            }
        }
        schedule.addAll(faultSchedule);
        schedule.sort(Comparator.comparingDouble(ScheduledFault::afterSeconds));
        return this;
    }

    /**
     * Pre-flight checks fail with this probability on every node (0: never), drawn from a generator seeded with
     * {@code seed}, so a run of the simulation is repeatable.
     */
    public SimulatedBackend withPreflightFailures(double probability, long seed) {
        if (!(probability >= 0 && probability <= 1)) {
            throw new IllegalArgumentException("the pre-flight failure probability must be within 0..1, was "
                    + probability);
        }
        this.preflightFailureProbability = probability;
        this.preflightRandom = new java.util.Random(seed);
        return this;
    }

    /** Makes the node's pre-flight check fail (or pass again) whatever the probability (admin API). */
    public void failPreflight(String nodeId, boolean fail) {
        if (fail) {
            failingPreflight.add(nodeId);
        } else {
            failingPreflight.remove(nodeId);
        }
    }

    @Override
    public Optional<String> preflight(NodeSpec node, Instant now) {
        if (failingPreflight.contains(node.nodeId())) {
            return Optional.of("simulated pre-flight check failed on " + node.nodeId() + " (set by an administrator)");
        }
        if (preflightFailureProbability > 0 && preflightRandom.nextDouble() < preflightFailureProbability) {
            return Optional.of("simulated pre-flight check failed on " + node.nodeId() + " (probability "
                    + preflightFailureProbability + ")");
        }
        return Optional.empty();
    }

    @Override
    public List<DeviceFault> pollFaults(Instant now, int perNode) {
        if (scheduleStart == null) {
            scheduleStart = now;
        }
        while (!schedule.isEmpty()
                && !scheduleStart.plusMillis((long) (schedule.get(0).afterSeconds() * 1000)).isAfter(now)) {
            faults.offer(schedule.remove(0).fault());
        }
        return faults.drain(perNode);
    }

    @Override
    public Instant nextFaultAt() {
        if (faults.size() > 0) {
            return Instant.MIN; // reported at the next poll, whenever that is: as soon as possible
        }
        if (!schedule.isEmpty() && scheduleStart != null) {
            return scheduleStart.plusMillis((long) (schedule.get(0).afterSeconds() * 1000));
        }
        return null;
    }

    /** Faults injected but not reported yet. */
    public int pendingFaults() {
        return faults.size();
    }

    public boolean isFailed(String nodeId) {
        return failedNodes.contains(nodeId);
    }

    @Override
    public Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now) {
        track(new Run(allocation, endsAt(allocation, plan), plan));
        return Optional.empty();
    }

    private void track(Run r) {
        Run old = runs.put(r.allocation().allocationId(), r);
        if (old != null) {
            untrack(old);
        }
        if (r.endsAt() != null) {
            ending.add(r);
        }
    }

    private void untrack(Run r) {
        ending.remove(r);
        stalled.remove(r.allocation().allocationId());
    }

    private Instant endsAt(Allocation allocation, RunPlan plan) {
        long millis = runMillis == null || plan == null ? -1 : runMillis.millis(allocation, plan);
        if (millis >= 0) {
            Instant end = TimeMath.plusSeconds(allocation.grantedAt(), millis / 1000).plusMillis(millis % 1000);
            return end.isBefore(TimeMath.END_OF_TIME) ? end : null;
        }
        return endsAt(allocation, plan, defaultRunSeconds);
    }

    /**
     * {@code grantedAt + runSeconds} of the longest task that decides the run's success (the default for a task
     * without), or null when one of them runs until cancelled. Simulated tasks always exit 0, so by the
     * {@link SuccessRule} that is every task, or only the leader group's when the plan names one: the others are
     * stopped with it (they may run forever).
     */
    static Instant endsAt(Allocation allocation, RunPlan plan, long defaultRunSeconds) {
        long longest = 0;
        for (PlacedTask p : SuccessRule.deciding(allocation.placements(), plan.successLeader())) {
            Long seconds = plan.task(p.task()).runSeconds();
            if (seconds == null && defaultRunSeconds == 0) {
                return null;
            }
            longest = Math.max(longest, seconds == null ? defaultRunSeconds : seconds);
        }
        Instant end = TimeMath.plusSeconds(allocation.grantedAt(), longest);
        return end.isBefore(TimeMath.END_OF_TIME) ? end : null;
    }

    @Override
    public void stop(String allocationId) {
        Run r = runs.remove(allocationId);
        if (r != null) {
            untrack(r);
        }
    }

    @Override
    public List<RunOutcome> poll(Instant now) {
        List<RunOutcome> outcomes = new ArrayList<>();
        // revived runs whose end passed while their node was down end now, in end order with the rest
        while (!ending.isEmpty() && !ending.first().endsAt().isAfter(now)) {
            Run r = ending.pollFirst();
            if (!onNoFailedNode(r)) {
                stalled.put(r.allocation().allocationId(), r); // its node is down: it makes no progress
                continue;
            }
            runs.remove(r.allocation().allocationId());
            // its modelled end: the simulated run never reads a stop notice, so it did not end in answer to one
            outcomes.add(RunOutcome.succeededOnItsOwn(r.allocation().allocationId(), r.endsAt()));
        }
        return outcomes;
    }

    @Override
    public Instant nextOutcomeAt() {
        return ending.isEmpty() ? Instant.MAX : ending.first().endsAt();
    }

    @Override
    public List<RunOutcome> adopt(List<LiveRun> live, Instant now) {
        runs.clear();
        ending.clear();
        stalled.clear();
        List<RunOutcome> lost = new ArrayList<>();
        for (LiveRun l : live) {
            Allocation a = l.allocation();
            if (!NAME.equals(a.backend())) {
                lost.add(RunOutcome.failed(a.allocationId(), null,
                        "placement restarted with the simulated backend; the " + a.backend() + " run was lost", now));
            } else if (l.plan() == null) {
                lost.add(RunOutcome.failed(a.allocationId(), null,
                        "placement restarted and could not find the run's job spec; the simulated run was lost", now));
            } else {
                track(new Run(a, endsAt(a, l.plan()), l.plan()));
            }
        }
        return lost;
    }

    /**
     * The environment a task of a running allocation would get on a real backend (the simulated one runs no
     * process): the tenant's variables, Gantry's identity and the gang's rendezvous ({@link GangEnvironment}: rank 0's
     * node as {@code MASTER_ADDR}, a port derived from the allocation id). Empty when no such task runs.
     */
    public Map<String, String> environment(String allocationId, String task, int replica) {
        Run r = runs.get(allocationId);
        if (r == null) {
            return Map.of();
        }
        Allocation a = r.allocation();
        for (PlacedTask p : a.placements()) {
            if (p.task().equals(task) && p.replica() == replica) {
                Map<String, String> gantry = new LinkedHashMap<>();
                gantry.put("GANTRY_JOB_ID", a.jobId());
                gantry.put("GANTRY_TASK", p.task());
                gantry.put("GANTRY_REPLICA", Integer.toString(p.replica()));
                gantry.put("GANTRY_ATTEMPT", Integer.toString(a.attempt()));
                gantry.putAll(GangEnvironment.rendezvous(a, p, GangEnvironment.nodeHosts(a),
                        GangEnvironment.derivedPort(a.allocationId())));
                Map<String, String> tenant = r.plan() == null ? Map.of() : r.plan().task(task).env();
                return GangEnvironment.merge(tenant, gantry);
            }
        }
        return Map.of();
    }

    /** Allocation ids currently running, for tests and the admin view. */
    public Set<String> running() {
        return Set.copyOf(runs.keySet());
    }
}
