package io.gantry.simulator;

import io.gantry.model.GpuShares;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

/** Workload loaders over the lines of the public trace files (the caller reads the files) and generators. */
public final class Traces {
    private static final DateTimeFormatter PHILLY_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private Traces() {
    }

    /** Options shared by the real-trace loaders. */
    public record Options(int maxJobs, LocalDateTime windowStart, double compression) {
        public static final Options ALL = new Options(Integer.MAX_VALUE, null, 1.0);

        public Options {
            if (maxJobs < 1) {
                throw new IllegalArgumentException("max jobs must be >= 1");
            }
            if (!(compression > 0)) {
                throw new IllegalArgumentException("time compression must be > 0");
            }
        }
    }

    /**
     * Philly ({@code timestamp,duration,num_gpus,gpu_time,cluster}): tenant = cluster, sorted by submit time (the
     * file is not), the first {@code maxJobs} at or after the window start; submit times relative to the first
     * selected job and divided by the compression factor. {@code vcNodes} ({@code vc,node num}) gives the weights;
     * a VC missing there gets the smallest listed weight, so it still has a (small) guaranteed share.
     */
    public static Workload philly(List<String> lines, List<String> vcNodes, Options o) {
        record Row(long epochSecond, int line, double duration, int gpus, String vc) {
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("timestamp"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != 5) {
                throw new IllegalArgumentException("philly line " + (i + 1) + ": expected 5 fields, got " + line);
            }
            try {
                long t = LocalDateTime.parse(f[0], PHILLY_TIME).toEpochSecond(ZoneOffset.UTC);
                rows.add(new Row(t, i + 1, Double.parseDouble(f[1]), (int) Double.parseDouble(f[2]), f[4].strip()));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("philly line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        rows.sort(Comparator.comparingLong(Row::epochSecond).thenComparingInt(Row::line));
        long start = o.windowStart() == null ? Long.MIN_VALUE : o.windowStart().toEpochSecond(ZoneOffset.UTC);
        List<SimJob> jobs = new ArrayList<>();
        long first = -1;
        for (Row r : rows) {
            if (r.epochSecond() < start || r.gpus() < 1) {
                continue;
            }
            if (jobs.size() >= o.maxJobs()) {
                break;
            }
            if (first < 0) {
                first = r.epochSecond();
            }
            long submit = Math.round((r.epochSecond() - first) * 1000.0 / o.compression());
            jobs.add(new SimJob("philly-" + r.line(), tenantName(r.vc()), r.gpus(), submit,
                    Math.max(1, Math.round(r.duration() * 1000.0))));
        }
        Map<String, Double> listed = new TreeMap<>();
        for (int i = 0; i < vcNodes.size(); i++) {
            String line = vcNodes.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("vc"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            listed.put(tenantName(f[0]), Double.parseDouble(f[1].strip()));
        }
        double smallest = listed.values().stream().mapToDouble(Double::doubleValue).min().orElse(1.0);
        Map<String, Double> weights = new TreeMap<>();
        for (SimJob j : jobs) {
            weights.put(j.tenant(), listed.getOrDefault(j.tenant(), smallest));
        }
        return new Workload("philly", jobs, weights, "Philly (Jeon et al., ATC'19), " + jobs.size()
                + " jobs from " + (o.windowStart() == null ? "the first job" : o.windowStart()) + ", time compression x"
                + o.compression());
    }

    /** The columns of a user's CSV trace, in order (the last two optional). */
    public static final String CSV_COLUMNS = "submit_s,gpus,duration_s,tenant[,gpu_model,time_limit_s]";

    /**
     * A user's own workload as CSV ({@value #CSV_COLUMNS}; a header line starting with {@code submit_s} is skipped,
     * as are blank lines and lines starting with {@code #}): submit time and run time in seconds (decimals allowed),
     * GPUs as a whole number for whole GPUs of a gang or a decimal below 1 for a share of one GPU ({@code 0.5}),
     * the tenant, optionally the one GPU model the job accepts (empty: any) and a time limit in seconds. Sorted by
     * submit time, and shifted so the first job is submitted at 0 (a trace of Unix times replays from its first job,
     * not from 1970); every tenant gets weight 1. Fields may be quoted ({@code "0"}; no commas inside), a byte-order
     * mark is ignored. A bad line is refused with its number and the field.
     */
    public static Workload csv(String name, List<String> lines, Options o) {
        record Row(long submit, int line, java.util.function.LongFunction<SimJob> job) {
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (i == 0 && line.startsWith("\uFEFF")) {
                line = line.substring(1).strip();
            }
            if (line.isEmpty() || line.startsWith("#") || (rows.isEmpty() && unquote(line).startsWith("submit_s"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            for (int k = 0; k < f.length; k++) {
                f[k] = unquote(f[k].strip());
            }
            String at = name + " line " + (i + 1) + ": ";
            if (f.length < 4 || f.length > 6) {
                throw new IllegalArgumentException(at + "expected " + CSV_COLUMNS + ", got " + line);
            }
            double submitS = number(f[0], at + "submit_s");
            double durationS = number(f[2], at + "duration_s");
            if (submitS < 0 || !(durationS > 0)) {
                throw new IllegalArgumentException(at + "submit_s must be >= 0 and duration_s > 0");
            }
            if (submitS > MAX_SUBMIT_SECONDS) {
                throw new IllegalArgumentException(at + "submit_s must be at most " + (long) MAX_SUBMIT_SECONDS
                        + " (seconds: Unix seconds are fine, milliseconds are not), was " + f[0]);
            }
            if (durationS > MAX_SPAN_SECONDS) {
                throw new IllegalArgumentException(at + "duration_s must be at most " + (long) MAX_SPAN_SECONDS
                        + " (ten years), was " + f[2]);
            }
            long milli;
            try {
                milli = GpuShares.fromGpus(new BigDecimal(f[1].strip()));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(at + "gpus: a whole number of GPUs or a share below 1 (0.5), was "
                        + f[1].strip());
            }
            boolean share = milli < GpuShares.WHOLE;
            if (milli < 1 || !share && milli % GpuShares.WHOLE != 0) {
                throw new IllegalArgumentException(at + "gpus: a whole number of GPUs or a share below 1 (0.5), was "
                        + f[1].strip());
            }
            String tenant = f[3].strip();
            if (!tenant.matches("[a-z0-9][a-z0-9-]{0,62}")) {
                throw new IllegalArgumentException(at + "tenant: a tenant name (lower-case letters, digits, '-'), was '"
                        + tenant + "'");
            }
            String model = f.length > 4 ? f[4].strip() : "";
            Long limit = null;
            if (f.length > 5 && !f[5].isBlank()) {
                double l = number(f[5], at + "time_limit_s");
                if (l < 1) {
                    throw new IllegalArgumentException(at + "time_limit_s must be >= 1");
                }
                if (l > MAX_SPAN_SECONDS) {
                    throw new IllegalArgumentException(at + "time_limit_s must be at most " + (long) MAX_SPAN_SECONDS
                            + " (ten years)");
                }
                limit = (long) Math.ceil(l);
            }
            long submit = Math.round(submitS * 1000.0);
            int number = i + 1;
            int gpus = share ? 1 : (int) (milli / 1000);
            Integer shareMilli = share ? (Integer) (int) milli : null;
            long duration = Math.max(1, Math.round(durationS * 1000.0));
            List<String> models = model.isEmpty() ? List.of() : List.of(model);
            Long timeLimit = limit;
            rows.add(new Row(submit, i, first -> new SimJob(name + "-" + number, tenant, gpus,
                    Math.round((submit - first) / o.compression()), duration, shareMilli, 0, 0, models, null,
                    timeLimit)));
        }
        rows.sort(Comparator.comparingLong(Row::submit).thenComparingInt(Row::line));
        long first = rows.isEmpty() ? 0 : rows.get(0).submit();
        if (!rows.isEmpty() && rows.get(rows.size() - 1).submit() - first > MAX_SPAN_SECONDS * 1000) {
            throw new IllegalArgumentException(name + ": its jobs are submitted over more than ten years ("
                    + (long) MAX_SPAN_SECONDS + " s) from the first to the last");
        }
        List<SimJob> jobs = rows.stream().limit(o.maxJobs()).map(r -> r.job().apply(first)).toList();
        if (jobs.isEmpty()) {
            throw new IllegalArgumentException(name + ": no jobs (expected lines of " + CSV_COLUMNS + ")");
        }
        Map<String, Double> weights = new TreeMap<>();
        jobs.forEach(j -> weights.put(j.tenant(), 1.0));
        return new Workload(name, jobs, weights, "CSV trace " + name + ", " + jobs.size() + " jobs, "
                + weights.size() + " tenants, time compression x" + o.compression()
                + (first == 0 ? "" : ", submit times shifted by -" + first / 1000 + " s (the first job at 0)"));
    }

    /** A CSV trace's submit times: Unix seconds fit (about 1.7e9 today), milliseconds do not. */
    static final double MAX_SUBMIT_SECONDS = 1e11;
    /** A CSV trace's run times, time limits and submit span: at most ten years. */
    static final double MAX_SPAN_SECONDS = 3.2e8;

    private static String unquote(String field) {
        return field.length() >= 2 && field.startsWith("\"") && field.endsWith("\"")
                ? field.substring(1, field.length() - 1).strip() : field;
    }

    private static double number(String field, String what) {
        try {
            double d = Double.parseDouble(field.strip());
            if (Double.isFinite(d)) {
                return d;
            }
        } catch (NumberFormatException e) {
            // refused below with the field's name
        }
        throw new IllegalArgumentException(what + ": not a number: '" + field.strip() + "'");
    }

    /** Tiresias 60-job trace ({@code job_id,num_gpu,submit_time,iterations,model_name,duration,interval}): one tenant. */
    public static Workload tiresias(List<String> lines, Options o) {
        List<SimJob> jobs = new ArrayList<>();
        for (int i = 0; i < lines.size() && jobs.size() < o.maxJobs(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("job_id"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length < 6) {
                throw new IllegalArgumentException("tiresias line " + (i + 1) + ": expected 7 fields, got " + line);
            }
            try {
                long submit = Math.round(Double.parseDouble(f[2]) * 1000.0 / o.compression());
                jobs.add(new SimJob("tiresias-" + f[0].strip(), "tiresias", Integer.parseInt(f[1].strip()), submit,
                        Math.max(1, Math.round(Double.parseDouble(f[5]) * 1000.0))));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("tiresias line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        jobs.sort(Comparator.comparingLong(SimJob::submitMillis));
        return new Workload("tiresias", jobs, Map.of("tiresias", 1.0), "Tiresias 60-job testbed trace (NSDI'19)");
    }

    /**
     * The Kueue baseline shape: {@code queues} tenants, per tenant 350 x 1 GPU 200 ms, 100 x 5 GPU 500 ms,
     * 50 x 20 GPU 1 s, all submitted at time 0 in an order shuffled by the seed. Equal weights.
     */
    public static Workload kueueBaseline(int queues, long seed, int maxJobs) {
        List<SimJob> jobs = new ArrayList<>();
        Map<String, Double> weights = new LinkedHashMap<>();
        for (int q = 0; q < queues; q++) {
            String tenant = String.format("q%02d", q);
            weights.put(tenant, 1.0);
            for (int i = 0; i < 350; i++) {
                jobs.add(new SimJob(tenant + "-s" + i, tenant, 1, 0, 200));
            }
            for (int i = 0; i < 100; i++) {
                jobs.add(new SimJob(tenant + "-m" + i, tenant, 5, 0, 500));
            }
            for (int i = 0; i < 50; i++) {
                jobs.add(new SimJob(tenant + "-l" + i, tenant, 20, 0, 1000));
            }
        }
        java.util.Collections.shuffle(jobs, new Random(seed));
        List<SimJob> out = new ArrayList<>();
        // submit order = shuffled order, one millisecond apart so every policy sees the same arrival sequence
        for (int i = 0; i < jobs.size() && i < maxJobs; i++) {
            SimJob j = jobs.get(i);
            out.add(new SimJob(j.id(), j.tenant(), j.gpus(), i / 100, j.durationMillis()));
        }
        return new Workload("kueue-baseline", out, weights, "synthetic Kueue baseline shape: " + queues
                + " queues x (350 x 1 GPU 200 ms, 100 x 5 GPU 500 ms, 50 x 20 GPU 1 s), seed " + seed);
    }

    /**
     * Alibaba openb pods ({@code name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
     * deletion_time,scheduled_time}, seconds): tenant = the QoS class; submit = creation time; run time = deletion
     * - scheduled time (creation time when never scheduled), at least 1 s; {@code num_gpu} = 1 with
     * {@code gpu_milli} < 1000 asks for that share of one GPU; {@code gpu_spec} (models separated by {@code |})
     * constrains the model; CPU and memory are asked as listed. Pods without GPUs are not replayed (a GPU
     * scheduler's workload); their count is in the note. Equal tenant weights.
     */
    /**
     * The openb pods with about a third naming the GPU models they accept (the FGD paper's {@code gpuspec}
     * workloads; the shared pod list names none): each pod, with probability {@code share}, gets one of a menu of
     * specs drawn in proportion to the inventory's GPUs of those models (one model, or a family such as
     * {@code V100M16|V100M32}). Seeded: the same seed gives the same workload.
     */
    public static Workload withGpuSpecs(Workload w, double share, long seed) {
        record Spec(List<String> models, int weight) {
        }
        // openb's GPUs by model: G2 4,392, T4 842, G3 312, P100 265, V100M32 204, V100M16 195, A10 2
        List<Spec> menu = List.of(new Spec(List.of("G2"), 4392), new Spec(List.of("T4"), 842),
                new Spec(List.of("G3"), 312), new Spec(List.of("P100"), 265),
                new Spec(List.of("V100M16", "V100M32"), 399), new Spec(List.of("G2", "G3"), 4704),
                new Spec(List.of("T4", "P100"), 1107));
        int total = menu.stream().mapToInt(Spec::weight).sum();
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        List<SimJob> jobs = new ArrayList<>();
        int constrained = 0;
        for (SimJob j : w.jobs()) {
            if (!j.gpuModels().isEmpty() || random.nextDouble() >= share) {
                jobs.add(j);
                continue;
            }
            int pick = random.nextInt(total);
            Spec spec = menu.get(menu.size() - 1);
            for (Spec s : menu) {
                if (pick < s.weight()) {
                    spec = s;
                    break;
                }
                pick -= s.weight();
            }
            jobs.add(new SimJob(j.id(), j.tenant(), j.gpus(), j.submitMillis(), j.durationMillis(), j.gpuMilli(),
                    j.cpuMillis(), j.memoryMiB(), spec.models(), null));
            constrained++;
        }
        return new Workload(w.name() + "-gpuspec", jobs, w.tenantWeights(), w.note() + "; " + constrained
                + " pods name the GPU models they accept (a third, seed " + seed + ", as FGD's gpuspec workloads)");
    }

    public static Workload alibaba(List<String> lines, Options o) {
        record Row(long created, int line, SimJob job) {
        }
        List<Row> rows = new ArrayList<>();
        int cpuOnly = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || (i == 0 && line.startsWith("name,"))) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != 11) {
                throw new IllegalArgumentException("openb pod line " + (i + 1) + ": expected 11 fields, got " + line);
            }
            try {
                int gpus = Integer.parseInt(f[3].strip());
                int milli = Integer.parseInt(f[4].strip());
                if (gpus < 1 || milli < 1) {
                    cpuOnly++;
                    continue;
                }
                long created = Long.parseLong(f[8].strip());
                long deleted = f[9].isBlank() ? created + 1 : Long.parseLong(f[9].strip());
                long started = f[10].isBlank() ? created : Long.parseLong(f[10].strip());
                List<String> models = f[5].isBlank() ? List.of()
                        : java.util.Arrays.stream(f[5].split("\\|")).map(String::strip).filter(m -> !m.isEmpty())
                        .toList();
                Integer share = gpus == 1 && milli < 1000 ? milli : null;
                SimJob j = new SimJob(f[0].strip(), tenantName(f[6]), gpus, 0,
                        Math.max(1, deleted - started) * 1000, share, Integer.parseInt(f[1].strip()),
                        Long.parseLong(f[2].strip()), models, null);
                rows.add(new Row(created, i + 1, j));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("openb pod line " + (i + 1) + ": " + e.getMessage(), e);
            }
        }
        rows.sort(Comparator.comparingLong(Row::created).thenComparingInt(Row::line));
        List<SimJob> jobs = new ArrayList<>();
        Map<String, Double> weights = new TreeMap<>();
        long first = rows.isEmpty() ? 0 : rows.get(0).created();
        long start = o.windowStart() == null ? Long.MIN_VALUE : o.windowStart().toEpochSecond(ZoneOffset.UTC);
        for (Row r : rows) {
            if (jobs.size() >= o.maxJobs()) {
                break;
            }
            if (r.created() < start) {
                continue;
            }
            SimJob j = r.job();
            jobs.add(new SimJob(j.id(), j.tenant(), j.gpus(), Math.round((r.created() - first) * 1000.0 / o.compression()),
                    j.durationMillis(), j.gpuMilli(), j.cpuMillis(), j.memoryMiB(), j.gpuModels(), null));
            weights.put(j.tenant(), 1.0);
        }
        long shares = jobs.stream().filter(SimJob::fractional).count();
        return new Workload("alibaba", jobs, weights, "Alibaba openb pods (Weng et al., ATC'23), " + jobs.size()
                + " GPU pods (" + shares + " ask for a fraction of a GPU; " + cpuOnly + " CPU-only pods not replayed),"
                + " tenant = QoS class, time compression x" + o.compression());
    }

    /**
     * The scale shape: {@code jobs} 1-GPU jobs of {@code tenants} equal tenants, 100 submitted per virtual
     * millisecond from time 0, run times uniform in [60, 600) s (seeded): a placement-throughput test like the
     * kube-scheduler / YuniKorn / Armada / Slurm throughput figures.
     */
    public static Workload scale(int jobs, int tenants, long seed) {
        Random rnd = new Random(seed);
        List<SimJob> out = new ArrayList<>();
        Map<String, Double> weights = new TreeMap<>();
        for (int t = 0; t < tenants; t++) {
            weights.put(String.format("t%02d", t), 1.0);
        }
        for (int i = 0; i < jobs; i++) {
            out.add(new SimJob(String.format("s%06d", i), String.format("t%02d", i % tenants), 1, i / 100,
                    60_000 + rnd.nextInt(540_000)));
        }
        return new Workload("scale", out, weights, "synthetic scale shape: " + jobs + " x 1-GPU jobs, " + tenants
                + " tenants, 100 per ms from t=0, run time U[60, 600) s, seed " + seed);
    }

    /**
     * The topology shape: {@code gangs} gangs of 4, 8, 16 or 32 GPUs (equally likely, seeded) preferring one rack,
     * of {@code tenants} equal tenants, 10 submitted per virtual millisecond from time 0, run times uniform in
     * [60, 600) s: the Kueue topology-aware-scheduling benchmark's size (its 640 nodes are
     * {@code --cluster racks:10x64x8}).
     */
    public static Workload topology(int gangs, int tenants, long seed) {
        Random rnd = new Random(seed);
        int[] sizes = {4, 8, 16, 32};
        List<SimJob> out = new ArrayList<>();
        Map<String, Double> weights = new TreeMap<>();
        for (int t = 0; t < tenants; t++) {
            weights.put(String.format("t%02d", t), 1.0);
        }
        for (int i = 0; i < gangs; i++) {
            out.add(new SimJob(String.format("g%05d", i), String.format("t%02d", i % tenants),
                    sizes[rnd.nextInt(sizes.length)], i / 10, 60_000 + rnd.nextInt(540_000), null, 0, 0, List.of(),
                    "RACK"));
        }
        return new Workload("topology", out, weights, "synthetic topology shape: " + gangs + " gangs of 4/8/16/32 GPUs"
                + " preferring one rack, " + tenants + " tenants, 10 per ms from t=0, run time U[60, 600) s, seed "
                + seed);
    }

    /** Only the jobs of at least {@code minGpus} GPUs (e.g. Philly's multi-GPU jobs), submit times kept. */
    public static Workload atLeast(Workload w, int minGpus) {
        List<SimJob> jobs = w.jobs().stream().filter(j -> j.gpus() >= minGpus).toList();
        Map<String, Double> weights = new TreeMap<>();
        jobs.forEach(j -> weights.put(j.tenant(), w.tenantWeights().get(j.tenant())));
        return new Workload(w.name(), jobs, weights, w.note() + ", only the " + jobs.size() + " jobs of >= " + minGpus
                + " GPUs");
    }

    /** The tenant of {@link #oneTenant}: every job's. */
    public static final String ONE_TENANT = "all";

    /**
     * The workload with every job in one tenant's queue ({@value #ONE_TENANT}, weight 1): no fair share between the
     * trace's tenants, as in studies that replay a trace on one queue.
     */
    public static Workload oneTenant(Workload w) {
        List<SimJob> jobs = w.jobs().stream().map(j -> new SimJob(j.id(), ONE_TENANT, j.gpus(), j.submitMillis(),
                j.durationMillis(), j.gpuMilli(), j.cpuMillis(), j.memoryMiB(), j.gpuModels(), j.topology(),
                j.timeLimitSeconds())).toList();
        return new Workload(w.name(), jobs, Map.of(ONE_TENANT, 1.0), w.note() + ", every job in one tenant's queue");
    }

    /** Queue names must be lower-case DNS-like labels; trace VC ids are hex, so only the prefix is added. */
    static String tenantName(String raw) {
        String s = raw.strip().toLowerCase().replaceAll("[^a-z0-9-]", "-");
        return s.isEmpty() || !Character.isLetterOrDigit(s.charAt(0)) ? "t" + s : s;
    }

    static List<String> tenants(Workload w) {
        return new ArrayList<>(new TreeSet<>(w.tenantWeights().keySet()));
    }
}
