package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.SuccessRule;
import io.gantry.placement.backend.slurm.SlurmCommands.SlurmCommandException;
import io.gantry.placement.backend.slurm.SlurmCommands.Tool;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs Gantry's placements on an existing Slurm cluster: every task replica becomes one batch job pinned to the
 * node and GPU count Gantry chose (see {@link SlurmSubmission}); Slurm users keep squeue and sacct, and Slurm's own
 * accounting of the GPUs means it never hands what Gantry placed to anyone else.
 *
 * <p>Slurm's tools are slow when the controller is, so none of them runs on placement's event loop: every method
 * the loop calls only queues work for one worker thread, which runs sbatch / squeue / scontrol / scancel with a
 * timeout and queues the outcomes the loop collects with {@link #poll}. The worker reads the queue and the nodes
 * every poll interval: a job that ends ends its run (all replicas COMPLETED, or all of the leader group's under a
 * success policy ({@link SuccessRule}, the rest cancelled): success; the first other end: failure with its exit code,
 * the rest cancelled); a job that vanished from the controller with no accounting
 * record is a failure; a node that is DOWN, DRAIN or not responding stops heartbeating. sbatch is retried with
 * backoff (looking first whether a timed-out attempt went through), then the run fails with the reason.
 *
 * <p>Jobs outlive placement: {@link #close} leaves them running and {@link #adopt} after a restart finds them by
 * name (no second sbatch), cancels Gantry jobs whose allocation is no longer live and fails live allocations
 * with no job. Jobs of others on Gantry's nodes are reported as capacity taken outside Gantry (log and
 * {@link #foreignJobs}).
 */
public final class SlurmBackend implements ExecutionBackend {
    public static final String NAME = "slurm";
    private static final Logger LOG = LoggerFactory.getLogger(SlurmBackend.class);
    private static final Duration WARN_EVERY = Duration.ofMinutes(1);
    /** Slurm starts a job on its next scheduling cycle; waiting longer than this is worth a warning. */
    private static final Duration PENDING_WARNING = Duration.ofSeconds(30);

    /** A job on a Gantry node that Gantry did not submit: its resources are taken outside Gantry. */
    public record ForeignJob(String jobId, String user, String partition, List<String> nodes, int gpusPerNode) {
    }

    private final SlurmConfig config;
    private final SlurmCommands slurm;
    private final Clock clock;
    /** Gantry's nodes: those of the partition as the last poll read them (a node may join or leave). */
    private volatile List<NodeSpec> nodes;
    private final List<SlurmOutput.Switch> switches;
    private volatile Set<String> nodeIds;
    private final ScheduledExecutorService worker;

    private volatile Map<String, SlurmOutput.Node> slurmNodes;
    private volatile List<ForeignJob> foreign = List.of();
    /** A poll read the queue: {@link #foreign} is an answer, not a guess. */
    private volatile boolean othersSeen;
    private volatile boolean controllerReachable = true;
    private final AtomicLong submissions = new AtomicLong();
    private final ConcurrentLinkedQueue<RunOutcome> finished = new ConcurrentLinkedQueue<>();
    /** Outcomes handed to the loop whose release is not confirmed yet; re-offered if the loop restarts. */
    private final Map<String, RunOutcome> reported = new ConcurrentHashMap<>();
    /** Allocations the loop stopped: nothing more is reported for them. */
    private final Set<String> stopped = ConcurrentHashMap.newKeySet();

    // worker thread only
    private final Map<String, Run> runs = new HashMap<>();
    private boolean adopted;
    private final Set<String> foreignSeen = new HashSet<>();
    private final Set<String> orphansCancelled = new HashSet<>();
    /** Jobs of stopped runs in their grace period: not orphans, their SIGKILL is scheduled. */
    private final Set<String> stopping = new HashSet<>();
    private Instant lastWarning = Instant.EPOCH;

    private static final class Run {
        final Allocation allocation;
        /** The task group deciding success ({@link SuccessRule}), or null for every task. */
        final String leader;
        final List<Replica> replicas = new ArrayList<>();
        boolean over;
        boolean terminated;

        Run(Allocation allocation, String leader) {
            this.allocation = allocation;
            this.leader = leader;
        }
    }

    private static final class Replica {
        final int index;
        final PlacedTask task;
        final List<String> options;
        final String script;
        String jobId;
        int attempts;
        Instant submittedAt;
        Instant pendingSince;
        /** A poll saw it started: only then can it be signalled (Slurm refuses a signal to a pending job). */
        boolean started;
        boolean pendingWarned;
        boolean completed;

        Replica(int index, PlacedTask task, List<String> options, String script) {
            this.index = index;
            this.task = task;
            this.options = options;
            this.script = script;
        }

        String label() {
            return "task " + task.task() + " replica " + task.replica();
        }
    }

    SlurmBackend(SlurmConfig config, SlurmCommands slurm, Clock clock, List<SlurmOutput.Node> slurmNodes,
                 List<SlurmOutput.Switch> switches) {
        this.config = config;
        this.slurm = slurm;
        this.clock = clock;
        this.switches = List.copyOf(switches);
        this.nodes = SlurmInventory.nodes(slurmNodes, switches, config);
        this.nodeIds = Set.copyOf(nodes.stream().map(NodeSpec::nodeId).toList());
        this.slurmNodes = byName(slurmNodes);
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gantry-slurm");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Reads the partition, its nodes and the topology from the controller (retrying until the startup timeout),
     * checks the partition is Gantry's alone, and starts polling. Blocks: call it at start, never on the loop.
     *
     * @throws IllegalStateException when the controller does not answer, the partition is missing, or anyone may
     *                               submit to it while {@code require-restricted-partition} is on
     */
    public static SlurmBackend connect(SlurmConfig config, SlurmCommands slurm, Clock clock) {
        Instant deadline = clock.instant().plus(config.startupTimeout());
        String nodesOut;
        String partitionsOut;
        while (true) {
            try {
                nodesOut = slurm.run(Tool.SCONTROL, List.of("show", "node", "-o"), null);
                partitionsOut = slurm.run(Tool.SCONTROL, List.of("show", "partition", "-o"), null);
                break;
            } catch (SlurmCommandException e) {
                if (!clock.instant().isBefore(deadline)) {
                    throw new IllegalStateException("the Slurm controller did not answer within "
                            + config.startupTimeout().toSeconds() + " s: " + e.getMessage());
                }
                LOG.warn("waiting for the Slurm controller: {}", e.getMessage());
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the Slurm controller");
                }
            }
        }
        List<SlurmOutput.Switch> switches;
        try {
            switches = SlurmOutput.topology(slurm.run(Tool.SCONTROL, List.of("show", "topology"), null));
        } catch (SlurmCommandException e) {
            // no topology plugin: racks come from node features only
            switches = List.of();
        }
        checkPartition(config, SlurmOutput.partitions(partitionsOut));
        SlurmBackend backend = new SlurmBackend(config, slurm, clock, SlurmOutput.nodes(nodesOut), switches);
        if (backend.nodes.isEmpty()) {
            LOG.warn("Slurm partition {} has no nodes: nothing can be placed", config.partition());
        }
        LOG.info("Slurm backend on partition {}: nodes {}", config.partition(),
                backend.nodes.stream().map(n -> n.nodeId() + " (" + n.gpuCount() + " GPUs)").toList());
        backend.startPolling();
        return backend;
    }

    /** The one entrance: Gantry's partition exists and (unless allowed) not everyone may submit to it. */
    static void checkPartition(SlurmConfig config, List<SlurmOutput.Partition> partitions) {
        SlurmOutput.Partition mine = partitions.stream().filter(p -> p.name().equals(config.partition()))
                .findFirst().orElse(null);
        if (mine == null) {
            throw new IllegalStateException("Slurm partition " + config.partition() + " does not exist (partitions: "
                    + partitions.stream().map(SlurmOutput.Partition::name).toList() + ")");
        }
        if (mine.openToAll()) {
            String msg = "Slurm partition " + config.partition() + " lets anyone submit (AllowGroups, AllowAccounts "
                    + "and AllowQos are ALL): other jobs could take the GPUs Gantry places on. Restrict it to "
                    + "Gantry's group or account (the one entrance)";
            if (config.requireRestrictedPartition()) {
                throw new IllegalStateException(msg + ", or set gantry.placement.slurm.require-restricted-partition"
                        + "=false");
            }
            LOG.warn(msg);
        }
        Set<String> gantryNodes = new HashSet<>(mine.nodes());
        for (SlurmOutput.Partition p : partitions) {
            if (!p.name().equals(mine.name()) && p.nodes().stream().anyMatch(gantryNodes::contains)) {
                LOG.warn("Slurm partition {} shares nodes with Gantry's partition {}: its jobs there are capacity "
                        + "taken outside Gantry (reported as foreign jobs)", p.name(), mine.name());
            }
        }
    }

    private static Map<String, SlurmOutput.Node> byName(List<SlurmOutput.Node> nodes) {
        Map<String, SlurmOutput.Node> m = new HashMap<>();
        nodes.forEach(n -> m.put(n.name(), n));
        return Map.copyOf(m);
    }

    void startPolling() {
        long every = config.pollInterval().toMillis();
        worker.scheduleWithFixedDelay(this::safeRefresh, every, every, TimeUnit.MILLISECONDS);
    }

    // ------------------------------------------------------------------------------------ loop-thread side

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<NodeSpec> nodes() {
        return nodes;
    }

    /** A node heartbeats while Slurm lists it in Gantry's partition and not DOWN / DRAIN / not responding. */
    @Override
    public boolean heartbeating(String nodeId) {
        SlurmOutput.Node n = slurmNodes.get(nodeId);
        return n != null && nodeIds.contains(nodeId) && n.partitions().contains(config.partition()) && !n.failing();
    }

    @Override
    public Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now) {
        Run run = new Run(allocation, plan.successLeader());
        List<PlacedTask> placements = allocation.placements();
        for (int i = 0; i < placements.size(); i++) {
            PlacedTask p = placements.get(i);
            List<String> command = plan.task(p.task()).command();
            if (command.isEmpty()) {
                return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                        "task " + p.task() + " has no command to run", now));
            }
            if (!p.gpuShares().isEmpty()) {
                return Optional.of(RunOutcome.failed(allocation.allocationId(), null, "task " + p.task()
                        + " asks for a share of a GPU; the slurm backend runs whole GPUs only", now));
            }
            if (command.stream().anyMatch(w -> w.indexOf('\0') >= 0)) {
                return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                        "task " + p.task() + " has a NUL character in its command", now));
            }
            SlurmOutput.Node node = slurmNodes.get(p.nodeId());
            String gresType = node == null || p.gpuModel() == null ? null
                    : SlurmInventory.gresType(node, p.gpuModel(), config);
            run.replicas.add(new Replica(i, p, SlurmSubmission.options(allocation, i, gresType, config),
                    SlurmSubmission.script(allocation, i, command, plan, config)));
        }
        stopped.remove(allocation.allocationId());
        worker.execute(() -> {
            runs.put(allocation.allocationId(), run);
            run.replicas.forEach(r -> submit(run, r));
        });
        return Optional.empty();
    }

    /** SIGTERM to every task (the job's batch shell and its steps); a pending job is cancelled. */
    @Override
    public void terminate(String allocationId) {
        worker.execute(() -> {
            Run run = runs.get(allocationId);
            if (run == null || run.over || run.terminated) {
                return;
            }
            run.terminated = true;
            List<String> running = new ArrayList<>();
            List<String> pending = new ArrayList<>();
            for (Replica r : run.replicas) {
                if (r.jobId != null && !r.completed) {
                    (r.started ? running : pending).add(r.jobId);
                }
            }
            scancel(running, "--full", "--signal=TERM");
            scancel(pending);
        });
    }

    /**
     * Cancels the allocation's jobs: SIGTERM, then after {@code grace-seconds} SIGKILL and Slurm's cancel (at once
     * when a preemption's SIGTERM already went out). Nothing is reported for it afterwards.
     */
    @Override
    public void stop(String allocationId) {
        stopped.add(allocationId);
        reported.remove(allocationId);
        worker.execute(() -> {
            stopRun(allocationId);
            finished.removeIf(o -> o.allocationId().equals(allocationId));
        });
    }

    @Override
    public List<RunOutcome> poll(Instant now) {
        List<RunOutcome> out = new ArrayList<>();
        RunOutcome o;
        while ((o = finished.poll()) != null) {
            if (stopped.contains(o.allocationId())) {
                continue;
            }
            reported.put(o.allocationId(), o);
            out.add(o);
        }
        return out;
    }

    /**
     * Finds the Slurm jobs of the live allocations by name on the worker (their ends arrive through
     * {@link #poll}), cancels Gantry jobs of allocations that are not live, and fails live allocations whose jobs
     * are gone. Returns the outcomes already handed out and not yet released.
     */
    @Override
    public List<RunOutcome> adopt(List<LiveRun> live, Instant now) {
        Map<String, LiveRun> byId = new LinkedHashMap<>();
        live.forEach(l -> byId.put(l.allocation().allocationId(), l));
        worker.execute(() -> reconcile(byId));
        reported.keySet().removeIf(id -> !byId.containsKey(id));
        return List.copyOf(reported.values());
    }

    /**
     * Leaves the Slurm jobs running (a restarted placement adopts them) and stops the worker: the command in
     * flight is interrupted, and close returns once the worker has stopped (so nothing writes to the work
     * directory after it), or after 5 s.
     */
    @Override
    public void close() {
        worker.shutdownNow();
        try {
            if (!worker.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("the Slurm worker did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Jobs of others currently holding resources on Gantry's nodes. */
    public List<ForeignJob> foreignJobs() {
        return foreign;
    }

    /** The foreign jobs summed per node (each holds its GPUs per node); empty until a poll read the queue. */
    @Override
    public Optional<Map<String, ForeignLoad>> foreignLoad() {
        if (!othersSeen) {
            return Optional.empty();
        }
        ForeignLoad.Tally tally = new ForeignLoad.Tally();
        foreign.forEach(j -> j.nodes().forEach(n -> tally.add(n, j.gpusPerNode(),
                "Slurm job " + j.jobId() + " of " + j.user() + " (partition " + j.partition() + ")")));
        return Optional.of(tally.build());
    }

    /** Whether the last squeue / scontrol answered. */
    public boolean controllerReachable() {
        return controllerReachable;
    }

    /** sbatch calls that returned a job id (tests: a restart must not submit again). */
    public long submissions() {
        return submissions.get();
    }

    // ------------------------------------------------------------------------------------ worker side

    private void submit(Run run, Replica r) {
        if (run.over || r.jobId != null) {
            return;
        }
        r.attempts++;
        String name = SlurmSubmission.jobName(run.allocation.allocationId(), r.index);
        if (r.attempts > 1) {
            // a timed-out sbatch may still have gone through: never submit a replica twice
            try {
                Optional<SlurmOutput.QueuedJob> existing = SlurmOutput.queue(slurm.run(Tool.SQUEUE,
                        List.of("-h", "-t", "all", "-n", name, "-o", SlurmOutput.SQUEUE_FORMAT), null)).stream()
                        .filter(q -> q.partition().equals(config.partition()))
                        .max(Comparator.comparingLong(q -> SlurmOutput.longOr(q.jobId(), 0)));
                if (existing.isPresent()) {
                    r.jobId = existing.get().jobId();
                    r.submittedAt = clock.instant();
                    return;
                }
            } catch (SlurmCommandException e) {
                retryOrFail(run, r, e);
                return;
            }
        }
        try {
            Files.createDirectories(SlurmSubmission.runDir(config.workDir(), run.allocation));
        } catch (IOException e) {
            // the compute node may see another file system; Slurm reports it if the directory is missing there
            LOG.debug("cannot create {}: {}", SlurmSubmission.runDir(config.workDir(), run.allocation), e.toString());
        }
        try {
            String out = slurm.run(Tool.SBATCH, r.options, r.script).trim();
            String id = out.split(";")[0].trim();
            if (id.isEmpty() || !Character.isDigit(id.charAt(0))) {
                throw new SlurmCommandException("sbatch printed no job id: " + out, false);
            }
            r.jobId = id;
            r.submittedAt = clock.instant();
            submissions.incrementAndGet();
            LOG.info("allocation {} {}: Slurm job {} on {}", run.allocation.allocationId(), r.label(), id,
                    r.task.nodeId());
        } catch (SlurmCommandException e) {
            retryOrFail(run, r, e);
        }
    }

    private void retryOrFail(Run run, Replica r, SlurmCommandException e) {
        if (r.attempts < config.submitAttempts()) {
            long wait = Math.min(60_000, config.submitBackoff().toMillis() << Math.min(16, r.attempts - 1));
            LOG.warn("allocation {} {}: sbatch attempt {} of {} failed, again in {} ms: {}",
                    run.allocation.allocationId(), r.label(), r.attempts, config.submitAttempts(), wait, e.getMessage());
            worker.schedule(() -> submit(run, r), wait, TimeUnit.MILLISECONDS);
            return;
        }
        fail(run, null, r.label() + ": sbatch failed " + r.attempts + " time" + (r.attempts == 1 ? "" : "s")
                + ": " + e.getMessage());
    }

    private void fail(Run run, Integer exitCode, String message) {
        end(run, RunOutcome.failed(run.allocation.allocationId(), exitCode, message, clock.instant()), message);
    }

    /** Ends the run with {@code outcome}: the other replicas are cancelled (a gang lives or dies whole). */
    private void end(Run run, RunOutcome outcome, String message) {
        if (run.over) {
            return;
        }
        run.over = true;
        runs.remove(run.allocation.allocationId());
        // a gang lives or dies whole: the other replicas stop
        List<String> others = run.replicas.stream().filter(r -> r.jobId != null && !r.completed).map(r -> r.jobId)
                .toList();
        // cancelled here: the same poll's queue still lists them running, they are no orphans to cancel again
        orphansCancelled.addAll(others);
        scancel(others);
        LOG.info("allocation {} {}: {}", run.allocation.allocationId(), outcome.result().lost() ? "lost" : "failed",
                message);
        report(outcome);
    }

    private void report(RunOutcome outcome) {
        if (!stopped.contains(outcome.allocationId())) {
            finished.add(outcome);
        }
    }

    private void stopRun(String allocationId) {
        Run run = runs.remove(allocationId);
        if (run == null) {
            return;
        }
        run.over = true;
        List<String> ids = run.replicas.stream().filter(r -> r.jobId != null && !r.completed).map(r -> r.jobId).toList();
        refreshStarted(run);
        // Slurm answers a signal to a job that has not started with "try again later", and scancel then retries
        // until the command timeout, stalling every poll: those are cancelled at once, they have nothing to save
        List<String> notStarted = run.replicas.stream().filter(r -> r.jobId != null && !r.completed && !r.started)
                .map(r -> r.jobId).toList();
        orphansCancelled.addAll(notStarted);
        scancel(notStarted);
        List<String> started = ids.stream().filter(id -> !notStarted.contains(id)).toList();
        if (started.isEmpty()) {
            return;
        }
        if (run.terminated || config.graceSeconds() == 0) {
            kill(started);
        } else {
            scancel(started, "--full", "--signal=TERM");
            stopping.addAll(started);
            worker.schedule(() -> kill(started), config.graceSeconds(), TimeUnit.SECONDS);
        }
    }

    /**
     * A stop can come before the next poll has seen a replica start (a task may run for up to one poll interval
     * unseen): one squeue of those replicas, so that a running one still gets its SIGTERM and grace period.
     * If squeue does not answer, the last poll's view stands.
     */
    private void refreshStarted(Run run) {
        List<Replica> unseen = run.replicas.stream().filter(r -> r.jobId != null && !r.completed && !r.started)
                .toList();
        if (unseen.isEmpty()) {
            return;
        }
        List<SlurmOutput.QueuedJob> queue;
        try {
            queue = SlurmOutput.queue(slurm.run(Tool.SQUEUE, List.of("-h", "-t", "all", "-j",
                    String.join(",", unseen.stream().map(r -> r.jobId).toList()), "-o", SlurmOutput.SQUEUE_FORMAT),
                    null));
        } catch (SlurmCommandException e) {
            LOG.debug("squeue before a stop: {}", e.getMessage());
            return;
        }
        Map<String, String> states = new HashMap<>();
        queue.forEach(q -> states.put(q.jobId(), q.state()));
        for (Replica r : unseen) {
            String state = states.get(r.jobId);
            r.started = state != null && !SlurmOutput.terminal(state) && !"PENDING".equals(state)
                    && !"CONFIGURING".equals(state);
        }
    }

    private void kill(List<String> ids) {
        ids.forEach(stopping::remove);
        // cancelled here: not to be found again as orphans while they end
        orphansCancelled.addAll(ids);
        scancel(ids, "--full", "--signal=KILL");
        // and Slurm's own cancel, so the job ends CANCELLED even if a signal could not be delivered
        scancel(ids);
    }

    private void scancel(List<String> ids, String... options) {
        if (ids.isEmpty()) {
            return;
        }
        List<String> args = new ArrayList<>(List.of(options));
        args.addAll(ids);
        try {
            slurm.run(Tool.SCANCEL, args, null);
        } catch (SlurmCommandException e) {
            // already ended, or the controller is down: the next poll sees the job's state either way
            LOG.debug("scancel {}: {}", args, e.getMessage());
        }
    }

    private void reconcile(Map<String, LiveRun> live) {
        for (String id : List.copyOf(runs.keySet())) {
            if (!live.containsKey(id)) {
                stopRun(id);
            }
        }
        List<LiveRun> missing = live.values().stream().filter(l -> !runs.containsKey(l.allocation().allocationId()))
                .toList();
        if (!missing.isEmpty()) {
            List<SlurmOutput.QueuedJob> queue;
            try {
                queue = SlurmOutput.queue(slurm.run(Tool.SQUEUE,
                        List.of("-h", "-t", "all", "-p", config.partition(), "-o", SlurmOutput.SQUEUE_FORMAT), null));
            } catch (SlurmCommandException e) {
                warn("cannot list Slurm jobs to adopt the live runs, trying again: " + e.getMessage());
                worker.schedule(() -> reconcile(live), config.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
                return;
            }
            Map<String, List<SlurmOutput.QueuedJob>> byName = new HashMap<>();
            queue.forEach(q -> byName.computeIfAbsent(q.name(), k -> new ArrayList<>()).add(q));
            for (LiveRun l : missing) {
                adoptRun(l.allocation(), l.plan() == null ? null : l.plan().successLeader(), byName);
            }
        }
        adopted = true;
        refresh();
    }

    private void adoptRun(Allocation a, String leader, Map<String, List<SlurmOutput.QueuedJob>> byName) {
        Run run = new Run(a, leader);
        List<Replica> lost = new ArrayList<>();
        for (int i = 0; i < a.placements().size(); i++) {
            Replica r = new Replica(i, a.placements().get(i), null, null);
            run.replicas.add(r);
            List<SlurmOutput.QueuedJob> jobs = byName.getOrDefault(SlurmSubmission.jobName(a.allocationId(), i), List.of());
            // a retried sbatch may have left two: the live one, else the newest
            Optional<SlurmOutput.QueuedJob> job = jobs.stream()
                    .max(Comparator.comparing((SlurmOutput.QueuedJob q) -> !SlurmOutput.terminal(q.state()))
                            .thenComparingLong(q -> SlurmOutput.longOr(q.jobId(), 0)));
            if (job.isPresent()) {
                r.jobId = job.get().jobId();
                r.submittedAt = Instant.EPOCH;
            } else {
                lost.add(r);
            }
        }
        if (!lost.isEmpty()) {
            findInAccounting(a, lost);
        }
        runs.put(a.allocationId(), run);
        List<Replica> stillLost = lost.stream().filter(r -> r.jobId == null).toList();
        if (!stillLost.isEmpty()) {
            fail(run, null, "placement restarted; no Slurm job found for " + stillLost.get(0).label()
                    + (stillLost.size() > 1 ? " and " + (stillLost.size() - 1) + " more" : "")
                    + " (never submitted, or forgotten by Slurm)");
        } else {
            LOG.info("adopted allocation {}: Slurm jobs {}", a.allocationId(),
                    run.replicas.stream().map(r -> r.jobId).toList());
        }
    }

    /** Jobs that left squeue long ago: sacct by name, when accounting is there. */
    private void findInAccounting(Allocation a, List<Replica> lost) {
        List<String> names = lost.stream().map(r -> SlurmSubmission.jobName(a.allocationId(), r.index)).toList();
        try {
            List<SlurmOutput.FinishedJob> jobs = SlurmOutput.sacct(slurm.run(Tool.SACCT, List.of("-n", "-P", "-X",
                    "--name=" + String.join(",", names), "-o", "JobID,JobName,State,ExitCode"), null));
            for (Replica r : lost) {
                String name = SlurmSubmission.jobName(a.allocationId(), r.index);
                jobs.stream().filter(j -> j.name().equals(name))
                        .max(Comparator.comparingLong(j -> SlurmOutput.longOr(j.jobId(), 0)))
                        .ifPresent(j -> {
                            r.jobId = j.jobId();
                            r.submittedAt = Instant.EPOCH;
                        });
            }
        } catch (SlurmCommandException e) {
            LOG.debug("sacct: {}", e.getMessage());
        }
    }

    private void safeRefresh() {
        try {
            refresh();
        } catch (RuntimeException e) {
            // the worker must survive anything one poll throws, or every later poll is lost
            LOG.error("Slurm poll failed", e);
        }
    }

    /**
     * Gantry's nodes as this poll lists them: a node added to the partition is placement's from now on (it registers
     * it at its next heartbeat), one removed stops heartbeating. A node whose description cannot be registered
     * keeps the last inventory, with one warning.
     */
    private void inventory(List<SlurmOutput.Node> listed) {
        List<NodeSpec> now;
        try {
            now = SlurmInventory.nodes(listed, switches, config);
        } catch (IllegalArgumentException e) {
            warn("cannot register the nodes of partition " + config.partition() + ": " + e.getMessage());
            return;
        }
        if (!now.equals(nodes)) {
            LOG.info("Slurm partition {} now has nodes {}", config.partition(), now.stream().map(NodeSpec::nodeId).toList());
            nodeIds = Set.copyOf(now.stream().map(NodeSpec::nodeId).toList());
            nodes = List.copyOf(now);
        }
    }

    /** One poll: nodes, then jobs (ours: ends, vanishings, long pending; others: orphans and foreign jobs). */
    void refresh() {
        Instant snapshotAt = clock.instant();
        try {
            List<SlurmOutput.Node> listed = SlurmOutput.nodes(slurm.run(Tool.SCONTROL, List.of("show", "node", "-o"),
                    null));
            slurmNodes = byName(listed);
            inventory(listed);
        } catch (SlurmCommandException e) {
            controllerReachable = false;
            // the last known node states stand: a slow controller is not a node failure
            warn("cannot read Slurm nodes: " + e.getMessage());
            return;
        }
        List<SlurmOutput.QueuedJob> queue;
        try {
            queue = SlurmOutput.queue(slurm.run(Tool.SQUEUE, List.of("-h", "-t", "all", "-o",
                    SlurmOutput.SQUEUE_FORMAT), null));
        } catch (SlurmCommandException e) {
            controllerReachable = false;
            warn("cannot read the Slurm queue: " + e.getMessage());
            return;
        }
        controllerReachable = true;
        Map<String, SlurmOutput.QueuedJob> byId = new HashMap<>();
        queue.forEach(q -> byId.put(q.jobId(), q));
        for (Run run : List.copyOf(runs.values())) {
            follow(run, byId, snapshotAt);
        }
        watchOthers(queue);
    }

    private void follow(Run run, Map<String, SlurmOutput.QueuedJob> byId, Instant snapshotAt) {
        for (Replica r : run.replicas) {
            if (run.over) {
                return;
            }
            if (r.jobId == null || r.completed || r.submittedAt == null || !r.submittedAt.isBefore(snapshotAt)) {
                continue;
            }
            SlurmOutput.QueuedJob q = byId.get(r.jobId);
            if (q == null) {
                SlurmOutput.FinishedJob f = accounting(r.jobId);
                if (f == null) {
                    fail(run, null, r.label() + ": Slurm job " + r.jobId + " disappeared (not in squeue, no "
                            + "accounting record)");
                } else {
                    ended(run, r, f.state(), f.reason(), f);
                }
                continue;
            }
            if (SlurmOutput.terminal(q.state())) {
                ended(run, r, q.state(), q.reason(), "COMPLETED".equals(q.state()) ? null : details(r.jobId));
            } else if ("PENDING".equals(q.state())) {
                // (again, when Slurm requeued it)
                r.started = false;
                pending(run, r, q, snapshotAt);
            } else {
                r.pendingSince = null;
                // a node still booting for it: Slurm refuses signals until it runs
                r.started = !"CONFIGURING".equals(q.state());
            }
        }
        if (!run.over && succeeded(run)) {
            run.over = true;
            runs.remove(run.allocation.allocationId());
            // with a leader the others may run forever (MPI workers): the run is over, so are they
            List<String> others = run.replicas.stream().filter(r -> r.jobId != null && !r.completed)
                    .map(r -> r.jobId).toList();
            orphansCancelled.addAll(others);
            scancel(others);
            report(RunOutcome.succeeded(run.allocation.allocationId(), clock.instant()));
        }
    }

    /** By the {@link SuccessRule}: failures end the run in {@link #fail} before this is asked. */
    private static boolean succeeded(Run run) {
        Map<SuccessRule.Replica, Boolean> ended = new HashMap<>();
        run.replicas.stream().filter(r -> r.completed).forEach(r -> ended.put(SuccessRule.Replica.of(r.task), true));
        return SuccessRule.judge(run.allocation.placements(), run.leader, ended) == SuccessRule.Verdict.SUCCEEDED;
    }

    private void pending(Run run, Replica r, SlurmOutput.QueuedJob q, Instant now) {
        if (r.pendingSince == null) {
            r.pendingSince = now;
        }
        Duration waited = Duration.between(r.pendingSince, now);
        if (!r.pendingWarned && waited.compareTo(PENDING_WARNING) >= 0) {
            r.pendingWarned = true;
            // Gantry placed it on free capacity: a wait means something outside Gantry holds it
            LOG.warn("allocation {} {}: Slurm keeps job {} pending ({}) on {}: capacity Gantry placed on is taken "
                    + "outside Gantry", run.allocation.allocationId(), r.label(), r.jobId, q.reason(), r.task.nodeId());
        }
        if (!config.pendingTimeout().isZero() && waited.compareTo(config.pendingTimeout()) > 0) {
            fail(run, null, r.label() + ": Slurm kept job " + r.jobId + " pending for " + waited.toSeconds()
                    + " s (" + q.reason() + ")");
        }
    }

    private void ended(Run run, Replica r, String state, String reason, SlurmOutput.FinishedJob details) {
        if ("COMPLETED".equals(state) && (details == null || (details.exitCode() == 0 && details.signal() == 0))) {
            r.completed = true;
            return;
        }
        Integer exit = null;
        String how = "";
        if (details != null && (details.exitCode() != 0 || details.signal() != 0)) {
            if (details.signal() > 0) {
                exit = 128 + details.signal();
                how = ", killed by signal " + details.signal();
            } else {
                exit = details.exitCode();
                how = ", exit " + details.exitCode();
            }
        }
        String message = r.label() + ": Slurm job " + r.jobId + " " + state
                + (reason == null || reason.isBlank() || "None".equals(reason) ? "" : " (" + reason + ")")
                + " on " + r.task.nodeId() + how;
        if (INFRASTRUCTURE_ENDS.contains(state)) {
            // the node failed or did not boot, or Slurm preempted it for work outside Gantry: not the job's failure
            end(run, RunOutcome.lost(run.allocation.allocationId(), message, clock.instant()), message);
        } else {
            fail(run, exit, message);
        }
    }

    /** Slurm job states that end a run for reasons of the infrastructure, not the job (see {@link RunOutcome#lost}). */
    static final java.util.Set<String> INFRASTRUCTURE_ENDS = java.util.Set.of("NODE_FAIL", "BOOT_FAIL", "PREEMPTED");

    /** The exit code of a job the controller still knows; null when it cannot be read. */
    private SlurmOutput.FinishedJob details(String jobId) {
        try {
            List<SlurmOutput.FinishedJob> jobs = SlurmOutput.jobs(slurm.run(Tool.SCONTROL,
                    List.of("show", "job", "-o", jobId), null));
            if (!jobs.isEmpty()) {
                return jobs.get(0);
            }
        } catch (SlurmCommandException e) {
            LOG.debug("scontrol show job {}: {}", jobId, e.getMessage());
        }
        return accounting(jobId);
    }

    /** A job's end from sacct, or null (no accounting, or it has no record). */
    private SlurmOutput.FinishedJob accounting(String jobId) {
        try {
            return SlurmOutput.sacct(slurm.run(Tool.SACCT, List.of("-n", "-P", "-X", "-j", jobId, "-o",
                    "JobID,JobName,State,ExitCode"), null)).stream()
                    .filter(j -> j.jobId().equals(jobId) && SlurmOutput.terminal(j.state())).findFirst().orElse(null);
        } catch (SlurmCommandException e) {
            return null;
        }
    }

    /** Gantry-named jobs of no live allocation are cancelled; other jobs on Gantry's nodes are capacity taken. */
    private void watchOthers(List<SlurmOutput.QueuedJob> queue) {
        List<ForeignJob> others = new ArrayList<>();
        for (SlurmOutput.QueuedJob q : queue) {
            SlurmSubmission.Identity id = SlurmSubmission.identity(q.name());
            boolean ours = id != null && q.partition().equals(config.partition());
            if (ours) {
                if (adopted && !runs.containsKey(id.allocationId()) && !SlurmOutput.terminal(q.state())
                        && !stopping.contains(q.jobId()) && orphansCancelled.add(q.jobId())) {
                    LOG.warn("Slurm job {} ({}) belongs to no live allocation: cancelling it", q.jobId(), q.name());
                    scancel(List.of(q.jobId()));
                }
                continue;
            }
            if (SlurmOutput.holdsResources(q.state()) && q.nodes().stream().anyMatch(nodeIds::contains)) {
                List<String> on = q.nodes().stream().filter(nodeIds::contains).toList();
                others.add(new ForeignJob(q.jobId(), q.user(), q.partition(), on, SlurmOutput.gpusPerNode(q.gres())));
                if (foreignSeen.add(q.jobId())) {
                    LOG.warn("Slurm job {} of user {} (partition {}) holds {} GPUs per node on Gantry node(s) {}: "
                            + "capacity taken outside Gantry", q.jobId(), q.user(), q.partition(),
                            SlurmOutput.gpusPerNode(q.gres()), on);
                }
            }
        }
        foreignSeen.retainAll(others.stream().map(ForeignJob::jobId).toList());
        orphansCancelled.retainAll(queue.stream().map(SlurmOutput.QueuedJob::jobId).toList());
        foreign = List.copyOf(others);
        othersSeen = true;
    }

    private void warn(String message) {
        if (worker.isShutdown()) {
            // close() interrupted a command: nothing to warn about
            return;
        }
        Instant now = clock.instant();
        if (Duration.between(lastWarning, now).compareTo(WARN_EVERY) >= 0) {
            lastWarning = now;
            LOG.warn(message);
        } else {
            LOG.debug(message);
        }
    }
}
