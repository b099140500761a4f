package io.gantry.simulator;

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

    /** Queue names must be lower-case DNS-like labels; trace VC ids are hex, so only the prefix is added. */
    static String tenantName(String raw) {
        String s = raw.strip().toLowerCase().replaceAll("[^a-z0-9-]", "-");
        return s.isEmpty() || !Character.isLetterOrDigit(s.charAt(0)) ? "t" + s : s;
    }

    static List<String> tenants(Workload w) {
        return new ArrayList<>(new TreeSet<>(w.tenantWeights().keySet()));
    }
}
