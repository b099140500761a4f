package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.GpuShare;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Collectors;

/**
 * One node, {@code local}: runs each task's command as an OS process on this host, without a shell, with
 * {@code CUDA_VISIBLE_DEVICES} set to its GPU indices. This executes tenants' commands, so it is opt-in; when
 * placement runs as root the tasks run as an unprivileged user through {@code setpriv}.
 *
 * <p>A task's stdout and stderr go to {@code <workDir>/<jobId>/<attempt>/<task>-<replica>.log}; it starts in its
 * spec's {@code workingDir} (else that run directory) with the tenant's variables, Gantry's identity and devices,
 * and the gang's rendezvous ({@link GangEnvironment}: {@code MASTER_ADDR=127.0.0.1} and a free port per run). A
 * container image or mounts in the spec are not used: the command runs on this host, and the task's log says so on
 * its first line. The run fails as soon as one task exits non-zero (the others are killed) and succeeds by the
 * {@link SuccessRule} (every task exited 0, or every replica of the spec's leader group; the others are then
 * killed). Processes do not survive a placement restart: live runs are then reported failed.
 */
public final class LocalBackend implements ExecutionBackend {
    public static final String NAME = "local";
    public static final String NODE_ID = "local";
    private static final Logger LOG = LoggerFactory.getLogger(LocalBackend.class);

    private final NodeSpec node;
    private final Path workDir;
    private final RunAs runAs;
    private final Clock clock;
    private final Map<String, Run> runs = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<RunOutcome> finished = new ConcurrentLinkedQueue<>();
    /** Outcomes handed to the loop whose release is not confirmed yet; re-offered if the loop restarts. */
    private final Map<String, RunOutcome> reported = new ConcurrentHashMap<>();

    /**
     * An unprivileged identity to drop to; null when placement is not root. Either one user for every task
     * ({@code uid}, {@code gid}), or, {@link #perTenant}, each tenant a uid and gid of its own: {@code tenantBase}
     * plus the tenant's number, kept in the work directory ({@value TenantIds#FILE}) so that a tenant keeps its
     * identity across restarts and its runs can read what its earlier runs wrote (checkpoints).
     */
    public record RunAs(String user, String uid, String gid, long tenantBase) {
        public RunAs(String user, String uid, String gid) {
            this(user, uid, gid, -1);
        }

        /** Each tenant its own uid and gid from {@code base} on. */
        public static RunAs perTenant(long base) {
            return new RunAs(PER_TENANT, null, null, base);
        }

        public boolean isPerTenant() {
            return tenantBase >= 0;
        }
    }

    /** {@code gantry.placement.local.run-as} for a uid and gid per tenant. */
    public static final String PER_TENANT = "per-tenant";
    /** The first uid and gid of the per-tenant identities: above the ranges systems and containers hand out. */
    public static final long DEFAULT_TENANT_BASE = 0x70000000L;

    public LocalBackend(NodeSpec node, Path workDir, RunAs runAs, Clock clock) {
        this(node, workDir, runAs, clock, false);
    }

    /** @param pinCpus run each task under {@code taskset -c <its cpuSet>} (the cores must exist on this host) */
    public LocalBackend(NodeSpec node, Path workDir, RunAs runAs, Clock clock, boolean pinCpus) {
        this(node, workDir, runAs, clock, pinCpus, null);
    }

    /** @param apiUrl the public API the tasks report to (GANTRY_API_URL), or null to tell them none */
    public LocalBackend(NodeSpec node, Path workDir, RunAs runAs, Clock clock, boolean pinCpus, String apiUrl) {
        this.node = node;
        this.workDir = workDir;
        this.runAs = runAs;
        this.clock = clock;
        this.pinCpus = pinCpus;
        this.apiUrl = apiUrl;
        this.markers = apiUrl == null ? null : new CheckpointMarkers(apiUrl);
        this.tenantIds = runAs != null && runAs.isPerTenant() ? new TenantIds(workDir) : null;
    }

    /** The numbers of the tenants that ran here, with {@link RunAs#isPerTenant}; else null. */
    private final TenantIds tenantIds;

    /** Who a run's tasks run as: the one configured user, or its tenant's own uid and gid; null when not root. */
    RunAs identity(String tenant) throws IOException {
        if (runAs == null || !runAs.isPerTenant()) {
            return runAs;
        }
        String id = Long.toString(runAs.tenantBase() + tenantIds.number(tenant));
        return new RunAs("tenant " + tenant, id, id);
    }

    private final boolean pinCpus;
    private final String apiUrl;
    /** Checkpoint marker files of the runs whose job declared a checkpoint directory; null without an API. */
    private final CheckpointMarkers markers;

    /** Resolves {@code user} from /etc/passwd, so setpriv gets numeric ids; falls back to the name. */
    public static RunAs resolveRunAs(String user) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length > 3 && f[0].equals(user)) {
                    return new RunAs(user, f[2], f[3]);
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot read /etc/passwd to resolve {}: {}", user, e.toString());
        }
        return new RunAs(user, user, user);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<NodeSpec> nodes() {
        return List.of(node);
    }

    @Override
    public boolean heartbeating(String nodeId) {
        return node.nodeId().equals(nodeId);
    }

    private final class Run {
        final Allocation allocation;
        final String leader;
        final Map<String, Process> processes = new HashMap<>();
        final Map<String, PlacedTask> byLabel = new HashMap<>();
        final Map<SuccessRule.Replica, Boolean> ended = new HashMap<>();
        boolean over;

        Run(Allocation allocation, String leader) {
            this.allocation = allocation;
            this.leader = leader;
        }

        synchronized void exited(String label, int code) {
            if (over) {
                return;
            }
            PlacedTask task = byLabel.get(label);
            ended.put(SuccessRule.Replica.of(task), code == 0);
            switch (SuccessRule.judge(allocation.placements(), leader, ended)) {
                case FAILED -> {
                    over = true;
                    killAll();
                    report(RunOutcome.failed(allocation.allocationId(), code, "task " + label + " exited with "
                            + code, clock.instant()));
                }
                case SUCCEEDED -> {
                    over = true;
                    // with a leader the others may run forever (MPI workers): the run is over, so are they
                    killAll();
                    report(RunOutcome.succeeded(allocation.allocationId(), clock.instant()));
                }
                case RUNNING -> {
                }
            }
        }

        synchronized void terminate() {
            if (over) {
                return;
            }
            for (Process p : processes.values()) {
                p.descendants().forEach(ProcessHandle::destroy);
                p.destroy();
            }
        }

        synchronized void kill() {
            over = true;
            killAll();
        }

        private void killAll() {
            for (Process p : processes.values()) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }

        private void report(RunOutcome outcome) {
            runs.remove(allocation.allocationId(), this);
            if (markers != null) {
                markers.finish(allocation.allocationId(), clock.instant());
            }
            finished.add(outcome);
        }
    }

    @Override
    public Optional<RunOutcome> start(Allocation allocation, RunPlan plan, Instant now) {
        Run run = new Run(allocation, plan.successLeader());
        Path dir = runDir(allocation);
        RunAs as;
        try {
            as = identity(allocation.tenant());
        } catch (IOException | RuntimeException e) {
            return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                    "could not give tenant " + allocation.tenant() + " an identity on this host: " + e.getMessage(),
                    now));
        }
        int port;
        try {
            port = freePort();
        } catch (IOException e) {
            return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                    "could not find a free port for the gang's rendezvous: " + e.getMessage(), now));
        }
        // every task runs on this host
        List<String> hosts = java.util.Collections.nCopies(allocation.placements().size(), LOOPBACK);
        synchronized (run) {
            for (PlacedTask p : allocation.placements()) {
                String label = p.task() + "-" + p.replica();
                RunPlan.Task task = plan.task(p.task());
                List<String> command = task.command();
                if (command.isEmpty()) {
                    run.kill();
                    return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                            "task " + p.task() + " has no command to run", now));
                }
                if (task.workingDir() != null && !Files.isDirectory(Path.of(task.workingDir()))) {
                    run.kill();
                    return Optional.of(RunOutcome.failed(allocation.allocationId(), null, "could not start task "
                            + label + ": its workingDir " + task.workingDir() + " is not a directory on this host",
                            now));
                }
                try {
                    prepare(dir, allocation, as);
                    ProcessBuilder pb = new ProcessBuilder(wrap(pin(command, p.cpuSet()), as));
                    Map<String, String> env = pb.environment();
                    // a task run as another user gets the system's PATH: placement's (root's) names directories
                    // that user cannot read (e.g. ~root/.pyenv), so `python3` would fail with "Permission denied"
                    String path = as != null ? SYSTEM_PATH : env.getOrDefault("PATH", SYSTEM_PATH);
                    // tasks must not inherit placement's own environment (credentials, tokens)
                    env.clear();
                    Map<String, String> gantry = new java.util.LinkedHashMap<>(environment(allocation, p, dir, path));
                    gantry.putAll(GangEnvironment.rendezvous(allocation, p, hosts, port));
                    gantry.putAll(runIdentity(plan, apiUrl));
                    gantry.put("GANTRY_PREEMPTION_NOTICE", dir.resolve(PreemptionNotice.FILE).toString());
                    env.putAll(GangEnvironment.merge(task.env(), gantry));
                    pb.directory(task.workingDir() == null ? dir.toFile() : new java.io.File(task.workingDir()));
                    pb.redirectErrorStream(true);
                    Path log = dir.resolve(label + ".log");
                    Files.writeString(log, hostNote(NAME, task));
                    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
                    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
                    run.byLabel.put(label, p);
                    Process process = pb.start();
                    run.processes.put(label, process);
                    writePid(metaDir(allocation).resolve(label + PID_SUFFIX), process.toHandle());
                } catch (IOException | RuntimeException e) {
                    run.kill();
                    return Optional.of(RunOutcome.failed(allocation.allocationId(), null,
                            "could not start task " + label + ": " + e.getMessage(), now));
                }
            }
            runs.put(allocation.allocationId(), run);
            if (markers != null && plan.checkpointDir() != null && plan.runToken() != null) {
                markers.watch(allocation.allocationId(), allocation.jobId(), Path.of(plan.checkpointDir()),
                        plan.runToken());
            }
            run.processes.forEach((label, process) ->
                    process.onExit().thenAccept(p -> run.exited(label, p.exitValue())));
        }
        return Optional.empty();
    }

    /**
     * The whole environment of one task: {@code PATH}, {@code HOME}, its identity and its devices. Whole GPUs:
     * {@code CUDA_VISIBLE_DEVICES} = their indices. A fraction: {@code CUDA_VISIBLE_DEVICES} = the device,
     * {@code CUDA_MPS_ACTIVE_THREAD_PERCENTAGE} = milli / 10 (at least 1), {@code CUDA_MPS_PINNED_DEVICE_MEM_LIMIT}
     * = {@code 0=<MiB>M} and {@code GANTRY_GPU_MEMORY_MIB} (honoured when an MPS daemon runs; otherwise advisory;
     * neither when the share's memory is not known, 0 MiB: a limit of 0 would leave the task no memory under MPS).
     * A MIG instance: {@code CUDA_VISIBLE_DEVICES} = {@code MIG-<gpu index>/<first slot>/0} (the legacy
     * {@code MIG-<GPU>/<GI>/<CI>} form with the node-local GPU index for the GPU and the first placement slot
     * standing for the GPU instance; a site wrapper maps it to the MIG UUID from {@code nvidia-smi -L}),
     * {@code GANTRY_MIG_DEVICE} = {@code <gpu index>:<profile>:<first slot>} and {@code GANTRY_GPU_MEMORY_MIB}.
     */
    public static Map<String, String> environment(Allocation allocation, PlacedTask p, Path dir, String path) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        env.put("PATH", path);
        env.put("HOME", dir.toString());
        env.put("CUDA_VISIBLE_DEVICES",
                p.gpuIndices().stream().map(String::valueOf).collect(Collectors.joining(",")));
        for (GpuShare s : p.gpuShares()) {
            if (s.memoryMiB() > 0) {
                env.put("GANTRY_GPU_MEMORY_MIB", Long.toString(s.memoryMiB()));
            }
            if (s.isMig()) {
                env.put("CUDA_VISIBLE_DEVICES", "MIG-" + s.index() + "/" + s.migSlice() + "/0");
                env.put("GANTRY_MIG_DEVICE", s.index() + ":" + s.migProfile() + ":" + s.migSlice());
            } else {
                env.put("CUDA_VISIBLE_DEVICES", Integer.toString(s.index()));
                env.put("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", Integer.toString(Math.max(1, s.milli() / 10)));
                if (s.memoryMiB() > 0) {
                    env.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=" + s.memoryMiB() + "M");
                }
            }
        }
        if (!p.cpuSet().isEmpty()) {
            // the cores on the socket of the task's GPUs; pinned with taskset when gantry.placement.local.pin-cpus
            env.put("GANTRY_CPU_SET", cpuList(p.cpuSet()));
        }
        if (!p.rdmaNics().isEmpty()) {
            // the NICs next to the task's GPUs (GPUDirect RDMA without crossing a socket)
            env.put("NCCL_IB_HCA", String.join(",", p.rdmaNics()));
        }
        env.put("GANTRY_JOB_ID", allocation.jobId());
        env.put("GANTRY_TASK", p.task());
        env.put("GANTRY_REPLICA", Integer.toString(p.replica()));
        env.put("GANTRY_ATTEMPT", Integer.toString(allocation.attempt()));
        return env;
    }

    private static final String LOOPBACK = "127.0.0.1";

    /** A port nothing listens on now, for the run's rank 0 to listen on (the gang's rendezvous). */
    static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(LOOPBACK))) {
            return s.getLocalPort();
        }
    }

    /**
     * The first lines of a host backend's task log when the spec asks for what only a container backend does: the
     * image is not used and nothing is mounted, so a failure later reads with its cause (empty when nothing is asked).
     */
    public static String hostNote(String backend, RunPlan.Task task) {
        StringBuilder note = new StringBuilder();
        if (task.image() != null) {
            note.append("gantry: the ").append(backend).append(" backend runs commands on the host: image ")
                    .append(task.image()).append(" is not used\n");
        }
        if (!task.mounts().isEmpty()) {
            note.append("gantry: the ").append(backend).append(" backend mounts nothing: ")
                    .append(task.mounts().stream().map(RunPlan.Mount::mountPath).toList())
                    .append(" are the host's own paths\n");
        }
        return note.toString();
    }

    /**
     * What a task needs to report on its own run: {@code GANTRY_RUN_TOKEN} (proves it belongs to this run),
     * {@code GANTRY_CHECKPOINT_DIR} (the job's declared checkpoint directory), {@code GANTRY_RESUME_FROM} (the
     * checkpoint to load, after an interruption) and {@code GANTRY_API_URL}.
     */
    public static Map<String, String> runIdentity(RunPlan plan, String apiUrl) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        if (plan.runToken() != null) {
            env.put("GANTRY_RUN_TOKEN", plan.runToken());
        }
        if (plan.checkpointDir() != null) {
            env.put("GANTRY_CHECKPOINT_DIR", plan.checkpointDir());
        }
        if (plan.resumeFrom() != null) {
            env.put("GANTRY_RESUME_FROM", plan.resumeFrom());
        }
        if (apiUrl != null && !apiUrl.isBlank()) {
            env.put("GANTRY_API_URL", apiUrl);
        }
        return env;
    }

    /** CPU affinity: {@code taskset -c <cores> <command>} when pinning is on and the task has a CPU set. */
    List<String> pin(List<String> command, List<Integer> cpuSet) {
        if (!pinCpus || cpuSet.isEmpty()) {
            return command;
        }
        List<String> pinned = new ArrayList<>(List.of("taskset", "-c", cpuList(cpuSet)));
        pinned.addAll(command);
        return pinned;
    }

    /** {@code [0,1,2,3,8,9]} as {@code 0-3,8-9} (the list format of taskset and cpusets). */
    static String cpuList(List<Integer> cpus) {
        List<Integer> sorted = cpus.stream().sorted().distinct().toList();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < sorted.size(); i++) {
            int start = sorted.get(i);
            int end = start;
            while (i + 1 < sorted.size() && sorted.get(i + 1) == end + 1) {
                end = sorted.get(++i);
            }
            out.append(out.length() == 0 ? "" : ",").append(start == end ? "" + start : start + "-" + end);
        }
        return out.toString();
    }

    private static List<String> wrap(List<String> command, RunAs as) {
        if (as == null) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("setpriv", "--reuid=" + as.uid(), "--regid=" + as.gid(),
                "--clear-groups", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * A run's directories: its own (the tasks' home and working directory, their logs, the preemption notice) and,
     * beside it, placement's ({@link #metaDir}: who the run belongs to, its pids), which tasks cannot write. Run as
     * another user, the run's directory is that user's alone (mode 700), and the directories above it only let one
     * pass (711): no task lists other jobs or enters another tenant's run.
     */
    private void prepare(Path dir, Allocation allocation, RunAs as) throws IOException {
        Files.createDirectories(dir);
        Path meta = Files.createDirectories(metaDir(allocation));
        if (as != null) {
            if (!sharedTemp(workDir)) {
                mode(workDir, "rwx--x--x");
            }
            mode(dir.getParent(), "rwx--x--x");
            mode(meta, "rwx------");
            giveTo(dir, as);
            mode(dir, "rwx------");
        }
        Path owner = meta.resolve(OWNER_FILE);
        if (!Files.exists(owner)) {
            Files.writeString(owner, "tenant=" + allocation.tenant() + "\njob=" + allocation.jobId() + "\nattempt="
                    + allocation.attempt() + "\n");
        }
    }

    /** A directory everyone may write (the sticky bit: /tmp) is not placement's to close: only what it made in it. */
    private static boolean sharedTemp(Path dir) {
        try {
            return (((Integer) Files.getAttribute(dir, "unix:mode")) & 01000) != 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return true;
        }
    }

    private static void mode(Path path, String mode) throws IOException {
        try {
            Files.setPosixFilePermissions(path, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: its own rules apply
        }
    }

    /** The unprivileged task user must be able to write its working directory (numeric ids, or the user's name). */
    private static void giveTo(Path path, RunAs as) {
        if (as == null) {
            return;
        }
        try {
            if (as.uid().matches("[0-9]{1,10}") && as.gid().matches("[0-9]{1,10}")) {
                Files.setAttribute(path, "unix:uid", Integer.parseUnsignedInt(as.uid()));
                Files.setAttribute(path, "unix:gid", Integer.parseUnsignedInt(as.gid()));
                return;
            }
            UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            if (view != null) {
                view.setOwner(users.lookupPrincipalByName(as.user()));
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            LOG.debug("cannot hand {} to {}: {}", path, as.user(), e.toString());
        }
    }

    /** Who a run's logs belong to, in its {@link #metaDir}: {@code GET /v1/jobs/{id}/logs} shows them to that tenant only. */
    static final String OWNER_FILE = "gantry-run.properties";
    /** The suffix of a run's directory of placement's own files, beside the run's directory. */
    static final String META_SUFFIX = ".gantry";

    /** {@code <work>/<jobId>/<attempt>.gantry}: placement's files of a run (owner, pids), out of the tasks' reach. */
    private Path metaDir(Allocation allocation) {
        return metaDir(workDir.resolve(allocation.jobId()), allocation.attempt());
    }

    private static Path metaDir(Path jobDir, int attempt) {
        return jobDir.resolve(attempt + META_SUFFIX);
    }

    @Override
    public Optional<RunLogs> logs(String jobId, Integer attempt) {
        if (!io.gantry.runtime.http.Ids.plausible(jobId)) {
            return Optional.empty();
        }
        Path job = workDir.resolve(jobId);
        Integer run = attempt;
        if (run == null) {
            try (var dirs = Files.list(job)) {
                run = dirs.map(d -> d.getFileName().toString()).filter(n -> n.matches("[1-9][0-9]{0,8}"))
                        .map(Integer::parseInt).max(Integer::compare).orElse(null);
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        if (run == null || !Files.isDirectory(job.resolve(Integer.toString(run)))) {
            return Optional.empty();
        }
        Path dir = job.resolve(Integer.toString(run));
        String tenant = null;
        try {
            java.util.Properties p = new java.util.Properties();
            try (var in = Files.newBufferedReader(metaDir(job, run).resolve(OWNER_FILE))) {
                p.load(in);
            }
            tenant = p.getProperty("tenant");
        } catch (IOException e) {
            // a run from before owners were kept out of the tasks' reach, or from before they were recorded: an
            // admin's only (a file in the run's own directory is the tasks' to write)
        }
        List<LogName> logs = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                int dash = name.lastIndexOf('-');
                if (name.endsWith(".log") && dash > 0 && name.substring(dash + 1, name.length() - 4).matches("[0-9]{1,9}")) {
                    logs.add(new LogName(name.substring(0, dash), Integer.parseInt(name.substring(dash + 1,
                            name.length() - 4)), Files.size(f)));
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.of(new RunLogs(tenant, run, logs));
    }

    @Override
    public Optional<LogChunk> readLog(String jobId, int attempt, String task, int replica, long offset, int maxBytes) {
        if (!io.gantry.runtime.http.Ids.plausible(jobId) || !io.gantry.runtime.http.Ids.plausible(task)
                || task.startsWith(".") || replica < 0 || offset < 0) {
            return Optional.empty();
        }
        Path f = workDir.resolve(jobId).resolve(Integer.toString(attempt)).resolve(task + "-" + replica + ".log");
        try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "r")) {
            long size = raf.length();
            long from = Math.min(offset, size);
            byte[] bytes = new byte[(int) Math.min(size - from, Math.max(0, maxBytes))];
            raf.seek(from);
            raf.readFully(bytes);
            return Optional.of(ExecutionBackend.chunk(bytes, bytes.length, from, size));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** A run's own directory: its tasks' logs, the default working directory and the preemption notice. */
    private Path runDir(Allocation allocation) {
        return workDir.resolve(allocation.jobId()).resolve(Integer.toString(allocation.attempt()));
    }

    /**
     * Writes the notice to the file the tasks know as {@code GANTRY_PREEMPTION_NOTICE} (whole or not at all: written
     * beside it, then moved), before {@link #terminate} sends SIGTERM.
     */
    @Override
    public void notice(String allocationId, PreemptionNotice notice) {
        Run run = runs.get(allocationId);
        if (run == null) {
            return;
        }
        Path file = runDir(run.allocation).resolve(PreemptionNotice.FILE);
        Path part = file.resolveSibling(PreemptionNotice.FILE + ".part");
        try {
            Files.writeString(part, notice.json());
            giveTo(part, identity(run.allocation.tenant())); // the task user reads it whatever placement's umask
            Files.move(part, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not write the preemption notice of run {}: {}", allocationId, e.toString());
        }
    }

    /** SIGTERM to every task and its children; the placement core sends SIGKILL ({@link #stop}) at the deadline. */
    @Override
    public void terminate(String allocationId) {
        Run run = runs.get(allocationId);
        if (run != null) {
            run.terminate();
        }
    }

    @Override
    public void stop(String allocationId) {
        reported.remove(allocationId);
        if (markers != null) {
            markers.finish(allocationId, clock.instant());
        }
        Run run = runs.remove(allocationId);
        if (run != null) {
            run.kill();
        }
        // a task that exited on its own just before (e.g. on SIGTERM) must not be reported after the stop
        finished.removeIf(o -> o.allocationId().equals(allocationId));
    }

    @Override
    public List<RunOutcome> poll(Instant now) {
        if (markers != null) {
            markers.scan(now);
        }
        List<RunOutcome> out = new ArrayList<>();
        RunOutcome o;
        while ((o = finished.poll()) != null) {
            reported.put(o.allocationId(), o);
            out.add(o);
        }
        return out;
    }

    @Override
    public List<RunOutcome> adopt(List<LiveRun> live, Instant now) {
        Map<String, Allocation> byId = ExecutionBackend.liveById(live, runs.keySet(), this::stop);
        reported.keySet().removeIf(id -> !byId.containsKey(id));
        List<RunOutcome> out = new ArrayList<>();
        for (Allocation a : byId.values()) {
            if (runs.containsKey(a.allocationId())) {
                continue;
            }
            RunOutcome known = reported.get(a.allocationId());
            if (known == null) {
                known = finished.stream().filter(o -> o.allocationId().equals(a.allocationId())).findFirst().orElse(null);
            }
            if (known == null) {
                // a previous placement process started it: what is left of it runs unwatched on GPUs that are
                // about to be given to others, so it is stopped; the run is lost to the infrastructure, not failed
                // pids in placement's own directory (only a run started before it existed kept them beside its
                // logs, where its tasks could write)
                int killed = killOrphans(Files.isDirectory(metaDir(a)) ? metaDir(a) : runDir(a));
                String what = killed == 0 ? "its processes were gone" : killed + " of its processes still ran and "
                        + "were killed";
                LOG.warn("run {} of job {} (attempt {}) was started by an earlier placement process; {}",
                        a.allocationId(), a.jobId(), a.attempt(), what);
                out.add(RunOutcome.lost(a.allocationId(), "placement restarted; " + what, now));
            }
        }
        out.addAll(reported.values());
        return out;
    }

    /** The PATH of a task run as the unprivileged user. */
    static final String SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /** Beside each task's log: its pid and start time, so a restarted placement can find what it left running. */
    static final String PID_SUFFIX = ".pid";

    private static void writePid(Path file, ProcessHandle process) {
        try {
            Files.writeString(file, process.pid() + " " + process.info().startInstant().map(Instant::toEpochMilli)
                    .orElse(0L) + "\n");
        } catch (IOException e) {
            LOG.warn("cannot record pid {} in {}: {}", process.pid(), file, e.toString());
        }
    }

    /**
     * Kills the processes a run directory's pid files name that still run (the same pid started at the same time,
     * not a reuse of the number), their children first; how many were running.
     */
    static int killOrphans(Path dir) {
        List<ProcessHandle> alive = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(x -> x.getFileName().toString().endsWith(PID_SUFFIX)).toList()) {
                String[] parts = Files.readString(f).strip().split(" ");
                long pid = Long.parseLong(parts[0]);
                long started = parts.length > 1 ? Long.parseLong(parts[1]) : 0;
                ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                        .filter(h -> started == 0 || h.info().startInstant().map(Instant::toEpochMilli)
                                .map(s -> Math.abs(s - started) < 1000).orElse(false))
                        .ifPresent(alive::add);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("no pid files read in {}: {}", dir, e.toString());
        }
        List<ProcessHandle> all = new ArrayList<>();
        for (ProcessHandle h : alive) {
            all.addAll(h.descendants().toList());
            all.add(h);
        }
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("process {} did not end within 5 s of SIGKILL", h.pid());
            }
        }
        return alive.size();
    }

    // ---------------------------------------------------------------- device health and pre-flight checks

    /** Where the health reader gets its samples. Each method is called on the reader thread only. */
    public interface HealthSource {
        /** A {@code nvidia-smi} health query sample ({@link io.gantry.placement.backend.health.GpuHealth#QUERY_ARGS}), or empty when none could be taken. */
        Optional<String> query();

        /** Kernel log text written since the previous call (empty when there is none or no log is configured). */
        String kernelLog();

        /**
         * A {@code nvidia-smi} utilisation sample ({@link io.gantry.placement.backend.health.GpuUtilisation#QUERY_ARGS}),
         * or empty when none could be taken (default: utilisation is not reported).
         */
        default Optional<String> utilisation() {
            return Optional.empty();
        }
    }

    /** The latest utilisation sample of this node's GPUs (index -> percent), written by the health reader. */
    private volatile java.util.Map<Integer, Integer> latestUtilisation = java.util.Map.of();

    @Override
    public java.util.Map<String, java.util.Map<Integer, Integer>> gpuUtilisation(Instant now) {
        java.util.Map<Integer, Integer> latest = latestUtilisation;
        return latest.isEmpty() ? java.util.Map.of() : java.util.Map.of(node.nodeId(), latest);
    }

    private final FaultQueue faults = new FaultQueue();
    private java.util.concurrent.ScheduledExecutorService healthReader;
    private List<String> preflightCommand = List.of();
    private java.time.Duration preflightTimeout = java.time.Duration.ofSeconds(10);

    /**
     * Samples GPU health every {@code every} on a reader thread of its own (a command that hangs never stalls the
     * event loop); the faults wait in a bounded queue for {@link #pollFaults}.
     */
    public LocalBackend withHealth(HealthSource source, java.time.Duration every) {
        io.gantry.placement.backend.health.GpuHealth.Monitor monitor = new io.gantry.placement.backend.health.GpuHealth
                .Monitor(node.nodeId(), node.gpus().stream().map(g -> g.index()).collect(Collectors.toSet()));
        healthReader = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gantry-local-health");
            t.setDaemon(true);
            return t;
        });
        healthReader.scheduleWithFixedDelay(() -> {
            try {
                source.query().ifPresent(sample -> monitor.onQuery(sample).forEach(faults::offer));
                monitor.onKernelLog(source.kernelLog()).forEach(faults::offer);
                source.utilisation().ifPresent(sample -> latestUtilisation =
                        io.gantry.placement.backend.health.GpuUtilisation.parse(sample));
            } catch (RuntimeException e) {
                LOG.warn("GPU health sample failed: {}", e.toString());
            }
        }, 0, every.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * The pre-flight check: {@code command} (argv, no shell) runs before a gang starts; exit 0 passes. It gets
     * {@code GANTRY_NODE_ID}; its output's last line is the failure's reason. Empty: every check passes.
     */
    public LocalBackend withPreflight(List<String> command, java.time.Duration timeout) {
        this.preflightCommand = List.copyOf(command);
        this.preflightTimeout = timeout;
        return this;
    }

    @Override
    public List<DeviceFault> pollFaults(Instant now, int perNode) {
        return faults.drain(perNode);
    }

    @Override
    public Optional<String> preflight(NodeSpec n, Instant now) {
        if (preflightCommand.isEmpty()) {
            return Optional.empty();
        }
        try {
            ProcessBuilder pb = new ProcessBuilder(preflightCommand).redirectErrorStream(true);
            pb.environment().put("GANTRY_NODE_ID", n.nodeId());
            Process p = pb.start();
            // read while it runs, so a chatty check cannot fill the pipe and hang
            java.util.concurrent.CompletableFuture<String> output = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                } catch (IOException e) {
                    return "";
                }
            });
            if (!p.waitFor(preflightTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                return Optional.of("`" + String.join(" ", preflightCommand) + "` did not finish within "
                        + preflightTimeout.toSeconds() + " s");
            }
            if (p.exitValue() == 0) {
                return Optional.empty();
            }
            String out = output.get(5, java.util.concurrent.TimeUnit.SECONDS).strip();
            String last = out.isEmpty() ? "" : out.substring(out.lastIndexOf('\n') + 1);
            return Optional.of("`" + String.join(" ", preflightCommand) + "` exited " + p.exitValue()
                    + (last.isEmpty() ? "" : ": " + last));
        } catch (IOException e) {
            return Optional.of("`" + String.join(" ", preflightCommand) + "` could not run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("pre-flight check interrupted");
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return Optional.of("`" + String.join(" ", preflightCommand) + "` failed: " + e);
        }
    }

    /**
     * The host's health source: {@code nvidia-smi} (disabled after the first time it cannot run, with one log line:
     * a host without NVIDIA GPUs has nothing to report) and, when configured, the kernel log file read from its end
     * at start (older lines were before this placement and are not news).
     */
    public static HealthSource hostHealth(String nvidiaSmi, Path kernelLog) {
        return new HealthSource() {
            private boolean smiWorks = true;
            private long offset = -1;

            @Override
            public Optional<String> query() {
                if (!smiWorks) {
                    return Optional.empty();
                }
                try {
                    return run(io.gantry.placement.backend.health.GpuHealth.QUERY_ARGS);
                } catch (IOException e) {
                    smiWorks = false;
                    LOG.info("GPU health: {} cannot run ({}); only the kernel log is watched", nvidiaSmi, e.getMessage());
                    return Optional.empty();
                }
            }

            @Override
            public Optional<String> utilisation() {
                if (!smiWorks) {
                    return Optional.empty();
                }
                try {
                    return run(io.gantry.placement.backend.health.GpuUtilisation.QUERY_ARGS);
                } catch (IOException e) {
                    return Optional.empty();
                }
            }

            /** nvidia-smi's output with {@code args}; empty when it does not answer within 10 s. */
            private Optional<String> run(List<String> args) throws IOException {
                List<String> cmd = new ArrayList<>();
                cmd.add(nvidiaSmi);
                cmd.addAll(args);
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                try {
                    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                    if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        return Optional.empty();
                    }
                    return Optional.of(out);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return Optional.empty();
                }
            }

            @Override
            public String kernelLog() {
                if (kernelLog == null || !Files.isReadable(kernelLog)) {
                    return "";
                }
                try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(kernelLog)) {
                    long size = ch.size();
                    if (offset < 0 || size < offset) {
                        offset = size; // first read, or the log was rotated: start at its end
                        return "";
                    }
                    // bounded: a flood of log lines is read a megabyte per sample
                    int n = (int) Math.min(size - offset, 1 << 20);
                    java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(n);
                    ch.read(buf, offset);
                    offset += n;
                    return new String(buf.array(), 0, buf.position(), java.nio.charset.StandardCharsets.UTF_8);
                } catch (IOException e) {
                    return "";
                }
            }
        };
    }

    @Override
    public void close() {
        if (healthReader != null) {
            healthReader.shutdownNow();
        }
        List.copyOf(runs.keySet()).forEach(this::stop);
    }
}
