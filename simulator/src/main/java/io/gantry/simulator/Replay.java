package io.gantry.simulator;

import io.gantry.placement.core.FirstFitPlacer;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.queue.core.FairShareConfig;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code Replay --trace philly|tiresias|kueue-baseline --cluster uniform:64x8|lingjun|FILE.yml --policy gantry,fifo|all
 * --max-jobs N --seed S --out DIR}: replays the workload under every policy on the same cluster and writes the
 * report.
 */
public final class Replay {
    static final String USAGE = """
            usage: replay --trace philly|tiresias|kueue-baseline|alibaba|alibaba-gpuspec|scale|topology|csv:FILE [options]
              (csv:FILE: your own workload, lines of submit_s,gpus,duration_s,tenant[,gpu_model,time_limit_s])
              --cluster uniform:NxG|racks:RxNxG|lingjun|alibaba|FILE.yml  cluster (default uniform:64x8)
              --policy gantry,fifo,fifo-backfill,drf-nodecay|all   policies side by side (default gantry,fifo)
              --max-jobs N          first N jobs of the trace (default: all); generators: how many
                                    (scale 50000, topology 1050, kueue-baseline 15000)
              --min-gpus N          only jobs of at least N GPUs (default 1)
              --window-start T      Philly: start at this submit time, 'yyyy-MM-dd HH:mm:ss' (default: first job)
              --compress F          divide inter-arrival times by F (default 1)
              --seed S              seed of the synthetic generators (default 1)
              --placer topology|first-fit   placement algorithm (default topology)
              --queue-config FILE   the queue's fair-share YAML (default: one queue per tenant, quota by weight)
              --quota-gpus N        generated quotas: split N GPUs by weight (default: the cluster's GPUs)
              --faults FILE         YAML list of {at: seconds, node: id, recoverAfter: seconds}
              --fail NODE@SEC[+REC] node failure(s) on the command line, comma separated
              --fail-rate F         random node failures per node-day (seeded by --seed; default 0)
              --recover-after SEC   how long a randomly failed node stays down (default 3600)
              --checkpoint-every MIN  runs save a checkpoint every MIN minutes of work (+-10% per job, seeded);
                                    interrupted runs resume from the newest (default: no checkpoints)
              --restart-cost SEC    time a resumed run spends before it computes again (default 60)
              --max-drain MIN       gantry's generated queues: bound capacity-reservation drains (maxDrain; default:
                                    only wait)
              --starvation-wait MIN|never  gantry's generated queues: how long a queue head or parked gang waits
                                    before a reservation is asked (default 30; never: the guard off)
              --task-gpus N         a gang's GPUs as tasks of at most N GPUs each (default: as many as one node
                                    holds); 1: a gang may spread over nodes (placed as tightly as it fits), as in
                                    simulators that ignore consolidation
              --tenants trace|one   one: every job in one tenant's queue, the cluster its quota (no fair share
                                    between tenants, as in single-queue studies); default trace
              --xid-rate F          random hardware GPU faults (Xid 79) per GPU-day, seeded by --seed (default 0)
              --repair-after SEC    how long a faulty GPU stays out of service (default 3600)
              --traces DIR          the shared traces folder (default: ../shared/traces or ../../shared/traces)
              --out DIR             output directory (default target/replay)
            """;

    private Replay() {
    }

    /** Parsed command line. */
    public record Options(String trace, String cluster, List<Policy> policies, int maxJobs, LocalDateTime windowStart,
                          double compression, long seed, String placer, Path queueConfig, Path faultsFile,
                          String fail, Path traces, Path out, int minGpus, double failRate, long recoverAfterSeconds,
                          Integer quotaGpus, Integer checkpointMinutes, long restartCostSeconds, double xidRate,
                          long repairAfterSeconds, Integer maxDrainMinutes, Integer starvationWaitMinutes,
                          Integer taskGpus, boolean oneTenant) {
        public Options(String trace, String cluster, List<Policy> policies, int maxJobs, LocalDateTime windowStart,
                       double compression, long seed, String placer, Path queueConfig, Path faultsFile,
                       String fail, Path traces, Path out) {
            this(trace, cluster, policies, maxJobs, windowStart, compression, seed, placer, queueConfig, faultsFile,
                    fail, traces, out, 1, 0, 3600, null, null, 60, 0, 3600, null, null, null, false);
        }
    }

    /** A user's own trace: {@code csv:FILE}. */
    static final String CSV = "csv:";
    static final List<String> TRACES = List.of("philly", "tiresias", "kueue-baseline", "alibaba", "alibaba-gpuspec", "scale",
            "topology");

    public static void main(String[] args) {
        if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
            System.out.print(USAGE);
            return;
        }
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("replay: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        try {
            run(o, System.out, System.err);
        } catch (IllegalArgumentException e) {
            // a bad trace line or configuration: the message says what; the options were fine
            System.err.println("replay: " + e.getMessage());
            System.exit(2);
        } catch (java.nio.file.NoSuchFileException e) {
            System.err.println("replay: " + e.getFile() + ": no such file");
            System.exit(2);
        } catch (IOException | IllegalStateException e) {
            System.err.println("replay: " + (e instanceof IllegalStateException ? e.getMessage() : e));
            System.exit(1);
        }
    }

    public static Options parse(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i].equals("--help") ? "help" : "expected --option value at '"
                        + args[i] + "'");
            }
            a.put(args[i].substring(2), args[++i]);
        }
        List<String> known = List.of("trace", "cluster", "policy", "max-jobs", "window-start", "compress", "seed",
                "placer", "queue-config", "faults", "fail", "traces", "out", "min-gpus", "fail-rate", "recover-after",
                "quota-gpus", "checkpoint-every", "restart-cost", "xid-rate", "repair-after", "max-drain",
                "starvation-wait", "task-gpus", "tenants");
        for (String k : a.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException("unknown option --" + k);
            }
        }
        String trace = a.get("trace");
        if (trace == null || !TRACES.contains(trace) && !(trace.startsWith(CSV) && trace.length() > CSV.length())) {
            throw new IllegalArgumentException("--trace: one of " + String.join(", ", TRACES) + ", or csv:FILE");
        }
        String placer = a.getOrDefault("placer", "topology");
        String tenants = a.getOrDefault("tenants", "trace");
        if (!tenants.equals("trace") && !tenants.equals("one")) {
            throw new IllegalArgumentException("--tenants: trace or one, got " + tenants);
        }
        if (!placer.equals("topology") && !placer.equals("first-fit")) {
            throw new IllegalArgumentException("--placer: topology or first-fit, got " + placer);
        }
        try {
            double failRate = Double.parseDouble(a.getOrDefault("fail-rate", "0"));
            long recoverAfter = Long.parseLong(a.getOrDefault("recover-after", "3600"));
            int minGpus = Integer.parseInt(a.getOrDefault("min-gpus", "1"));
            if (!(failRate >= 0) || recoverAfter < 1 || minGpus < 1) {
                throw new IllegalArgumentException("--fail-rate must be >= 0, --recover-after and --min-gpus >= 1");
            }
            return new Options(trace, a.getOrDefault("cluster", "uniform:64x8"),
                    Policy.parse(a.getOrDefault("policy", "gantry,fifo")),
                    Integer.parseInt(a.getOrDefault("max-jobs", "" + Integer.MAX_VALUE)),
                    a.containsKey("window-start") ? LocalDateTime.parse(a.get("window-start"),
                            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss")) : null,
                    Double.parseDouble(a.getOrDefault("compress", "1")), Long.parseLong(a.getOrDefault("seed", "1")),
                    placer, a.containsKey("queue-config") ? Path.of(a.get("queue-config")) : null,
                    a.containsKey("faults") ? Path.of(a.get("faults")) : null, a.get("fail"),
                    a.containsKey("traces") ? Path.of(a.get("traces")) : defaultTraces(),
                    Path.of(a.getOrDefault("out", "target/replay")), minGpus, failRate, recoverAfter,
                    a.containsKey("quota-gpus") ? Integer.valueOf(Integer.parseInt(a.get("quota-gpus"))) : null,
                    checkpointMinutes(a.get("checkpoint-every")),
                    Long.parseLong(a.getOrDefault("restart-cost", "60")),
                    nonNegative("xid-rate", Double.parseDouble(a.getOrDefault("xid-rate", "0"))),
                    Long.parseLong(a.getOrDefault("repair-after", "3600")),
                    a.containsKey("max-drain") ? Integer.valueOf(nonNegativeInt("max-drain", a.get("max-drain"))) : null,
                    !a.containsKey("starvation-wait") ? null : "never".equals(a.get("starvation-wait"))
                            ? Integer.valueOf(NEVER) : Integer.valueOf(nonNegativeInt("starvation-wait",
                            a.get("starvation-wait"))),
                    a.containsKey("task-gpus") ? Integer.valueOf(positiveInt("task-gpus", a.get("task-gpus"))) : null,
                    tenants.equals("one"));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static double nonNegative(String option, double v) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException("--" + option + " must be >= 0, was " + v);
        }
        return v;
    }

    private static Integer checkpointMinutes(String v) {
        if (v == null) {
            return null;
        }
        int m = Integer.parseInt(v);
        if (m < 1) {
            throw new IllegalArgumentException("--checkpoint-every must be >= 1 minute, was " + v);
        }
        return m;
    }

    /** The shared traces folder next to the repository, seen from the repository or from a module directory. */
    public static Path defaultTraces() {
        for (String p : List.of("../shared/traces", "../../shared/traces", "/work/shared/traces")) {
            if (Files.isDirectory(Path.of(p))) {
                return Path.of(p);
            }
        }
        return Path.of("../shared/traces");
    }

    public static Workload workload(Options o) throws IOException {
        Traces.Options t = new Traces.Options(o.maxJobs(), o.windowStart(), o.compression());
        boolean all = o.maxJobs() == Integer.MAX_VALUE;
        if (o.trace().startsWith(CSV)) {
            Path file = Path.of(o.trace().substring(CSV.length()));
            if (!Files.isReadable(file)) {
                throw new IllegalArgumentException("--trace " + o.trace() + ": cannot read " + file.toAbsolutePath());
            }
            Workload csv = Traces.csv(file.getFileName().toString().replaceFirst("\\.csv$", ""), read(file), t);
            return tenants(o, o.minGpus() > 1 ? Traces.atLeast(csv, o.minGpus()) : csv);
        }
        Workload w = switch (o.trace()) {
            case "philly" -> Traces.philly(read(o.traces().resolve("philly/philly.csv")),
                    read(o.traces().resolve("philly/philly_vc_nodes.csv")), t);
            case "tiresias" -> Traces.tiresias(read(o.traces().resolve("tiresias-60/60_job.csv")), t);
            case "alibaba" -> Traces.alibaba(read(o.traces().resolve("alibaba-openb/openb_pod_list_default.csv")), t);
            case "alibaba-gpuspec" -> Traces.withGpuSpecs(Traces.alibaba(read(o.traces().resolve(
                    "alibaba-openb/openb_pod_list_default.csv")), t), 1.0 / 3, o.seed());
            case "scale" -> Traces.scale(all ? 50_000 : o.maxJobs(), 10, o.seed());
            case "topology" -> Traces.topology(all ? 1_050 : o.maxJobs(), 10, o.seed());
            default -> Traces.kueueBaseline(30, o.seed(), o.maxJobs());
        };
        return tenants(o, o.minGpus() > 1 ? Traces.atLeast(w, o.minGpus()) : w);
    }

    private static Workload tenants(Options o, Workload w) {
        return o.oneTenant() ? Traces.oneTenant(w) : w;
    }

    /**
     * The queue configuration: the given file, the Kueue baseline's cohorts, or one cohort with quota by weight. A
     * given file must have a queue for every tenant of the workload: a tenant without one would wait forever, and
     * the replay would end with jobs that never ran instead of an answer.
     */
    public static FairShareConfig queueConfig(Options o, Workload w, int clusterGpus) throws IOException {
        if (o.queueConfig() != null) {
            FairShareConfig c = readQueueConfig("--queue-config", o.queueConfig());
            List<String> without = Traces.tenants(w).stream().filter(t -> !c.hasQueue(t, null)).toList();
            if (!without.isEmpty()) {
                throw new IllegalArgumentException("--queue-config " + o.queueConfig() + ": no queue named after "
                        + "tenant(s) " + String.join(", ", without) + " of the workload (a job that names no queue "
                        + "goes to its tenant's; the file has " + String.join(", ", c.queues().stream()
                        .map(q -> q.name() + " of " + q.tenant()).sorted().toList()) + "): their jobs could never run");
            }
            return c;
        }
        if (w.name().equals("kueue-baseline")) {
            return Policy.queues(w.tenantWeights(), clusterGpus, 5, 20L, 100L);
        }
        FairShareConfig c = Policy.queues(w.tenantWeights(), o.quotaGpus() != null ? o.quotaGpus() : clusterGpus, 0,
                null, null);
        if (o.starvationWaitMinutes() != null) {
            c = c.withStarvationWait(o.starvationWaitMinutes() == NEVER ? java.time.Duration.ofDays(365L * 1000)
                    : java.time.Duration.ofMinutes(o.starvationWaitMinutes()));
        }
        return o.maxDrainMinutes() == null ? c : c.withMaxDrain(java.time.Duration.ofMinutes(o.maxDrainMinutes()));
    }

    /**
     * What each tenant of the workload is entitled to under a given queue configuration: the nominal GPU quota of its
     * queues, in thousandths (the report's "entitled" column: the file's quotas, not the workload's equal weights).
     */
    static Map<String, Double> entitled(FairShareConfig c, Workload w) {
        Map<String, Double> out = new java.util.TreeMap<>();
        w.tenantWeights().keySet().forEach(t -> out.put(t, 0.0));
        for (FairShareConfig.QueueDef q : c.queues()) {
            double nominal = q.quotas().entrySet().stream().filter(e -> c.flavours().contains(e.getKey()))
                    .mapToDouble(e -> e.getValue().nominal()).sum();
            out.merge(q.tenant(), nominal, Double::sum);
        }
        return out;
    }

    /**
     * A queue configuration file, or why it is refused in one line naming {@code option} and the file (a missing
     * file, malformed YAML, an invalid configuration), never a parser's stack.
     */
    public static FairShareConfig readQueueConfig(String option, Path file) {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(option + " " + file + ": no such file");
        }
        try {
            return FairShareConfig.fromYaml(yaml().load(Files.readString(file, StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException e) {
            String m = e.getMessage() == null ? e.toString() : e.getMessage();
            throw new IllegalArgumentException(option + " " + file + ": " + m.lines().findFirst().orElse(m).strip(),
                    e);
        }
    }

    /** {@code --starvation-wait never}: the starvation guard off (no reservation is ever asked for). */
    static final int NEVER = -1;

    private static int positiveInt(String option, String value) {
        int v = Integer.parseInt(value);
        if (v < 1) {
            throw new IllegalArgumentException("--" + option + " must be >= 1, was " + value);
        }
        return v;
    }

    private static int nonNegativeInt(String option, String value) {
        int v = Integer.parseInt(value);
        if (v < 0) {
            throw new IllegalArgumentException("--" + option + " must be >= 0, was " + value);
        }
        return v;
    }

    public static GangPlacer placer(String name) {
        return name.equals("first-fit") ? new FirstFitPlacer() : new TopologyPlacer();
    }

    public static List<Simulation.Fault> faults(Options o) throws IOException {
        return faults(o, List.of(), 0);
    }

    /** The scheduled failures (file, command line) plus the random ones drawn over [0, horizon) on {@code nodes}. */
    public static List<Simulation.Fault> faults(Options o, List<NodeSpec> nodes, long horizonMillis)
            throws IOException {
        List<Simulation.Fault> out = new ArrayList<>();
        if (o.failRate() > 0) {
            out.addAll(Simulation.randomFaults(nodes, o.failRate(), o.recoverAfterSeconds() * 1000, horizonMillis,
                    o.seed()));
        }
        if (o.faultsFile() != null) {
            Object doc = yaml().load(Files.readString(o.faultsFile(), StandardCharsets.UTF_8));
            if (!(doc instanceof List<?> list)) {
                throw new IllegalArgumentException("--faults: expected a YAML list of {at, node, recoverAfter}");
            }
            for (int i = 0; i < list.size(); i++) {
                if (!(list.get(i) instanceof Map<?, ?> m) || !(m.get("at") instanceof Number at)
                        || m.get("node") == null) {
                    throw new IllegalArgumentException("--faults[" + i + "]: needs at (seconds) and node");
                }
                Object rec = m.get("recoverAfter");
                out.add(new Simulation.Fault(Math.round(at.doubleValue() * 1000), m.get("node").toString(),
                        rec instanceof Number n ? Math.round(n.doubleValue() * 1000) : null));
            }
        }
        if (o.fail() != null) {
            for (String s : o.fail().split(",")) {
                String[] nodeAt = s.strip().split("@");
                if (nodeAt.length != 2) {
                    throw new IllegalArgumentException("--fail: expected NODE@SECONDS[+RECOVER], got " + s);
                }
                String[] atRec = nodeAt[1].split("\\+");
                out.add(new Simulation.Fault(Math.round(Double.parseDouble(atRec[0]) * 1000), nodeAt[0],
                        atRec.length > 1 ? Math.round(Double.parseDouble(atRec[1]) * 1000) : null));
            }
        }
        return out;
    }

    /** Replays the workload under every policy and writes the report; returns the results in policy order. */
    public static List<Simulation.Result> run(Options o, PrintStream out, PrintStream progress) throws IOException {
        List<NodeSpec> nodes = Clusters.resolve(o.cluster(), o.traces());
        Workload w = workload(o);
        int gpus = Clusters.totalGpus(nodes);
        FairShareConfig config = queueConfig(o, w, gpus);
        List<Simulation.Fault> faults = faults(o, nodes, Simulation.horizon(w));
        progress.printf(Locale.ROOT, "replay: %s, %d jobs, %d tenants on %s (%d nodes, %d GPUs), policies %s%n",
                w.name(), w.jobs().size(), w.tenantWeights().size(), o.cluster(), nodes.size(), gpus,
                o.policies().stream().map(Policy::label).toList());
        List<Simulation.Result> results = new ArrayList<>();
        for (Policy p : o.policies()) {
            Simulation sim = new Simulation(nodes, w, p, config, placer(o.placer()), faults, progress::println);
            if (o.xidRate() > 0) {
                sim.deviceFaults(Simulation.randomDeviceFaults(nodes, o.xidRate(), o.repairAfterSeconds() * 1000,
                        Simulation.horizon(w), o.seed()));
            }
            if (o.taskGpus() != null) {
                sim.taskGpus(o.taskGpus());
            }
            if (o.checkpointMinutes() != null) {
                sim.checkpoints(new Simulation.Checkpoints(Duration.ofMinutes(o.checkpointMinutes()),
                        Duration.ofSeconds(o.restartCostSeconds()), 0.1, o.seed()));
            }
            Simulation.Result r = sim.run();
            results.add(r);
            Report.Summary s = Report.summarise(r);
            progress.printf(Locale.ROOT, "[%s] done: %d/%d ended, avg JCT %.0f s, makespan %.0f s, util %.1f%%, "
                            + "%.0f decisions/s, %d violations%n", p.label(), s.ended(), s.jobs() - s.rejected(),
                    s.avgJct(), s.makespan(), 100 * s.utilisation(), s.decisionsPerSecond(), s.violations());
        }
        List<String> context = List.of("workload: " + w.note(),
                "cluster: " + o.cluster() + " (" + nodes.size() + " nodes, " + gpus + " GPUs), placer " + o.placer(),
                "policies: " + o.policies().stream().map(Policy::label).toList() + ", seed " + o.seed(),
                "faults: " + (faults.isEmpty() ? "none" : faults.size() + " node failures" + (o.failRate() > 0
                        ? String.format(Locale.ROOT, " (random: %.3g per node-day, down %d s, seed %d, drawn over the"
                        + " workload's no-wait horizon)", o.failRate(), o.recoverAfterSeconds(), o.seed()) : "")),
                "GPU faults: " + (o.xidRate() <= 0 ? "none" : String.format(Locale.ROOT, "random hardware Xid 79, %.3g "
                        + "per GPU-day over the no-wait horizon, repaired after %d s, seed %d", o.xidRate(),
                        o.repairAfterSeconds(), o.seed())),
                "gangs: " + (o.taskGpus() == null ? "tasks of at most one node's GPUs (a gang of up to a node's GPUs "
                        + "is one task on one node)" : "tasks of at most " + o.taskGpus()
                        + (o.taskGpus() == 1 ? " GPU" : " GPUs") + " (a gang may spread over nodes; placed as tightly "
                        + "as it fits)"),
                "checkpoints: " + (o.checkpointMinutes() == null ? "none (an interruption loses the whole run)"
                        : "every " + o.checkpointMinutes() + " min of work (+-10% per job), restart cost "
                        + o.restartCostSeconds() + " s"),
                "machine: " + machine(),
                "command: replay " + commandLine(o));
        Report.write(o.out(), "Replay: " + w.name() + " on " + o.cluster(), context,
                o.queueConfig() == null ? w : new Workload(w.name(), w.jobs(), entitled(config, w), w.note()), results);
        out.println("report: " + o.out().resolve("report.md"));
        for (Simulation.Result r : results) {
            Report.Summary s = Report.summarise(r);
            if (s.ended() == 0) {
                throw new IllegalStateException("policy " + r.policy + ": not one of the " + s.jobs() + " jobs ran to "
                        + "its end (" + (s.rejected() == s.jobs() ? "every job asks for more than the cluster has: "
                        + "more GPUs, CPU or memory, or a GPU model no node has"
                        : s.rejected() + " larger than the cluster; the rest never dispatched: check the quotas and "
                        + "the GPU models the jobs accept") + "); see " + o.out().resolve("report.md"));
            }
            int never = s.jobs() - s.ended() - s.rejected();
            if (never > 0) {
                progress.println("replay: policy " + r.policy + ": " + never + " of " + s.jobs() + " jobs never ran to "
                        + "their end (jobs.csv: unfinished; check the quotas and the GPU models they accept): the "
                        + "report's waits and JCTs count only the " + s.ended() + " that ended");
            }
        }
        return results;
    }

    private static String commandLine(Options o) {
        StringBuilder s = new StringBuilder("--trace " + o.trace() + " --cluster " + o.cluster() + " --policy "
                + String.join(",", o.policies().stream().map(Policy::label).toList()));
        if (o.maxJobs() != Integer.MAX_VALUE) {
            s.append(" --max-jobs ").append(o.maxJobs());
        }
        if (o.windowStart() != null) {
            s.append(" --window-start '").append(o.windowStart()).append('\'');
        }
        if (o.compression() != 1.0) {
            s.append(" --compress ").append(o.compression());
        }
        if (o.minGpus() > 1) {
            s.append(" --min-gpus ").append(o.minGpus());
        }
        if (o.quotaGpus() != null) {
            s.append(" --quota-gpus ").append(o.quotaGpus());
        }
        if (o.xidRate() > 0) {
            s.append(" --xid-rate ").append(o.xidRate()).append(" --repair-after ").append(o.repairAfterSeconds());
        }
        if (o.starvationWaitMinutes() != null) {
            s.append(" --starvation-wait ").append(o.starvationWaitMinutes() == NEVER ? "never"
                    : o.starvationWaitMinutes().toString());
        }
        if (o.maxDrainMinutes() != null) {
            s.append(" --max-drain ").append(o.maxDrainMinutes());
        }
        if (o.checkpointMinutes() != null) {
            s.append(" --checkpoint-every ").append(o.checkpointMinutes()).append(" --restart-cost ")
                    .append(o.restartCostSeconds());
        }
        if (o.failRate() > 0) {
            s.append(" --fail-rate ").append(o.failRate()).append(" --recover-after ").append(o.recoverAfterSeconds());
        }
        if (!o.placer().equals("topology")) {
            s.append(" --placer ").append(o.placer());
        }
        if (o.taskGpus() != null) {
            s.append(" --task-gpus ").append(o.taskGpus());
        }
        if (o.oneTenant()) {
            s.append(" --tenants one");
        }
        return s.append(" --seed ").append(o.seed()).toString();
    }

    /** Processors, CPU model, RAM and JDK of this machine, for wall-clock figures. */
    static String machine() {
        String cpu = "?";
        String ram = "?";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse("?");
            ram = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
                    .map(l -> String.format(Locale.ROOT, "%.1f GiB",
                            Long.parseLong(l.replaceAll("[^0-9]", "")) / 1048576.0)).findFirst().orElse("?");
        } catch (IOException | RuntimeException e) {
            // not Linux: leave the unknowns as ?
        }
        return Runtime.getRuntime().availableProcessors() + " processors, " + cpu + ", " + ram + " RAM, JDK "
                + System.getProperty("java.version") + ", max heap "
                + Runtime.getRuntime().maxMemory() / 1048576 + " MiB";
    }

    private static List<String> read(Path p) throws IOException {
        return Files.readAllLines(p, StandardCharsets.UTF_8);
    }

    private static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }
}
