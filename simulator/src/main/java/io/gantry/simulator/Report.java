package io.gantry.simulator;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** The figures of one replay, and the Markdown, CSV and PNG files of a run with several policies side by side. */
public final class Report {
    public static final int BUCKETS = 200;

    /** Headline figures of one policy. Times in seconds. */
    public record Summary(String policy, int jobs, int ended, int failed, int rejected, double avgJct, double p50Jct,
                          double p99Jct, double avgWait, double p50Wait, double p99Wait, double makespan,
                          double utilisation, double jain, long deferrals, long requeues, double gangsInOneRack,
                          double multiNodeInOneRack, long multiNodeGangs, double gpuHoursBilled,
                          double gpuHoursLost, long preemptions, double gpuHoursPreempted,
                          double decisionsPerSecond, double peakHeapMiB, int violations, double ftfMean,
                          double ftfMax, double ftfOverOne, double avgQueue, long maxQueue, double avgStranded,
                          double avgFree, long nodeFailures, double wallSeconds, double grantsPerSecond,
                          double peakAllocated) {
        /** The figures that depend only on the inputs (not the wall-clock ones), for determinism checks. */
        public Summary virtualOnly() {
            return new Summary(policy, jobs, ended, failed, rejected, avgJct, p50Jct, p99Jct, avgWait, p50Wait, p99Wait,
                    makespan, utilisation, jain, deferrals, requeues, gangsInOneRack, multiNodeInOneRack,
                    multiNodeGangs, gpuHoursBilled, gpuHoursLost, preemptions, gpuHoursPreempted, 0, 0, violations,
                    ftfMean, ftfMax, ftfOverOne, avgQueue, maxQueue, avgStranded, avgFree, nodeFailures, 0, 0,
                    peakAllocated);
        }
    }

    /** Finish-time fairness per policy: mean and max of rho, and the share of jobs with rho > 1. */
    public record Ftf(double mean, double max, double overOne) {
    }

    /** Per tenant: jobs, GPU-hours, share of the GPU time vs entitled share, mean wait and slowdown. */
    public record TenantRow(String tenant, int jobs, double gpuHours, double share, double entitled, double avgWait,
                            double avgSlowdown) {
    }

    private Report() {
    }

    public static Summary summarise(Simulation.Result r) {
        List<Double> jct = new ArrayList<>();
        List<Double> wait = new ArrayList<>();
        int failed = 0;
        int rejected = 0;
        long firstSubmit = Long.MAX_VALUE;
        long lastFinish = 0;
        for (int i = 0; i < r.jobs.size(); i++) {
            SimJob j = r.jobs.get(i);
            if (r.rejected[i]) {
                rejected++;
                continue;
            }
            firstSubmit = Math.min(firstSubmit, j.submitMillis());
            if (r.finish[i] < 0) {
                continue;
            }
            lastFinish = Math.max(lastFinish, r.finish[i]);
            if (!r.succeeded[i]) {
                failed++;
                continue;
            }
            jct.add((r.finish[i] - j.submitMillis()) / 1000.0);
            wait.add((r.firstGrant[i] - j.submitMillis()) / 1000.0);
        }
        double makespan = firstSubmit == Long.MAX_VALUE ? 0 : (lastFinish - firstSubmit) / 1000.0;
        double util = makespan <= 0 ? 0 : r.billedMilliGpuMs / 1e6 / (r.clusterGpus * makespan);
        // over the tenants with a job that succeeded (a slowdown is >= 1); one whose jobs all failed has none to count
        double jain = jain(tenants(r, Map.of()).stream().mapToDouble(TenantRow::avgSlowdown).filter(x -> x > 0)
                .toArray());
        double wallSeconds = r.wallNanos / 1e9;
        Ftf ftf = finishTimeFairness(r);
        return new Summary(r.policy, r.jobs.size(), r.ended, failed, rejected, mean(jct), pct(jct, 50), pct(jct, 99),
                mean(wait), pct(wait, 50), pct(wait, 99), makespan, util, jain, r.deferrals, r.requeues,
                ratio(r.multiGpuInOneRack, r.multiGpuGangs), ratio(r.multiNodeInOneRack, r.multiNodeGangs),
                r.multiNodeGangs, r.billedMilliGpuMs / 3.6e9, r.lostMilliGpuMs / 3.6e9, r.preemptions,
                r.preemptedMilliGpuMs / 3.6e9, wallSeconds <= 0 ? 0 : r.decisions / wallSeconds,
                r.peakHeapBytes / 1048576.0, r.violations.size(), ftf.mean(), ftf.max(), ftf.overOne(),
                r.queueLength.mean(r.endMillis), r.queueLength.max(), r.stranded.mean(r.endMillis),
                r.freeGpus.mean(r.endMillis), r.nodeFailures, wallSeconds,
                wallSeconds <= 0 ? 0 : r.grants / wallSeconds, peakAllocated(r));
    }

    /** The most GPUs (shares counted by their size) held at any one time. */
    public static double peakAllocated(Simulation.Result r) {
        long[][] ev = new long[r.intervals.size() * 2][];
        int k = 0;
        for (long[] iv : r.intervals) {
            ev[k++] = new long[] {iv[0], iv[2]};
            ev[k++] = new long[] {iv[1], -iv[2]};
        }
        // releases before grants at the same instant: a device handed over is not held twice
        Arrays.sort(ev, (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        long held = 0;
        long peak = 0;
        for (long[] e : ev) {
            held += e[1];
            peak = Math.max(peak, held);
        }
        return peak / 1000.0;
    }

    /** A gang's first-grant wait: the job and milliseconds from its submit to its first grant. */
    public record GangWait(String jobId, long millis) {
    }

    /**
     * Where the average first-grant wait went: per policy, each cause's share of it (seconds per job of the workload,
     * so a column adds up to that size's part of the average and the total column to the average wait), by job size.
     */
    static void waitCauses(StringBuilder md, List<Simulation.Result> results) {
        md.append("\nWhere the average wait went (seconds per job of the workload: each cause's part of the average"
                + " first-grant wait, by job size; the queue's reason and sentence, or placement's deferral cause, as"
                + " last said before the grant):\n");
        for (Simulation.Result r : results) {
            int n = r.jobs.size();
            long[] jobs = new long[WaitCauses.SIZES.size()];
            for (SimJob j : r.jobs) {
                jobs[WaitCauses.column(j.gpus())]++;
            }
            md.append("\n| ").append(r.policy).append(": cause | all");
            for (int c = 0; c < jobs.length; c++) {
                int lo = c == 0 ? 1 : WaitCauses.SIZES.get(c - 1) + 1;
                int hi = WaitCauses.SIZES.get(c);
                md.append(" | ").append(hi == Integer.MAX_VALUE ? "> " + (lo - 1) + " GPUs" : lo == hi ? lo + " GPU"
                        : lo + "-" + hi + " GPUs").append(" (").append(jobs[c]).append(" jobs)");
            }
            md.append(" |\n|---|---").append("|---".repeat(jobs.length)).append("|\n");
            long[] total = new long[jobs.length];
            List<Map.Entry<String, long[]>> rows = new ArrayList<>(r.waitCauses.table().entrySet());
            rows.sort((a, b) -> Long.compare(Arrays.stream(b.getValue()).sum(),
                    Arrays.stream(a.getValue()).sum()));
            for (Map.Entry<String, long[]> e : rows) {
                long[] v = e.getValue();
                md.append("| ").append(e.getKey()).append(String.format(Locale.ROOT, " | %.0f",
                        Arrays.stream(v).sum() / 1000.0 / Math.max(1, n)));
                for (int c = 0; c < v.length; c++) {
                    total[c] += v[c];
                    md.append(String.format(Locale.ROOT, " | %.0f", v[c] / 1000.0 / Math.max(1, n)));
                }
                md.append(" |\n");
            }
            md.append(String.format(Locale.ROOT, "| total | %.0f", Arrays.stream(total).sum() / 1000.0
                    / Math.max(1, n)));
            for (long t : total) {
                md.append(String.format(Locale.ROOT, " | %.0f", t / 1000.0 / Math.max(1, n)));
            }
            md.append(" |\n");
            long[] after = afterFirstGrant(r);
            md.append(String.format(Locale.ROOT, "| not in the total: after the first grant (preempted or requeued and"
                    + " waiting again, work lost, restart costs) | %.0f", Arrays.stream(after).sum() / 1000.0
                    / Math.max(1, n)));
            for (long a : after) {
                md.append(String.format(Locale.ROOT, " | %.0f", a / 1000.0 / Math.max(1, n)));
            }
            md.append(" |\n");
        }
    }

    /**
     * Per size column, milliseconds that succeeded jobs spent between their first grant and their end beyond their
     * run time: JCT = first-grant wait + run time + this. Failed and unfinished jobs are left out (their run time
     * is not what they ran).
     */
    static long[] afterFirstGrant(Simulation.Result r) {
        long[] after = new long[WaitCauses.SIZES.size()];
        for (int i = 0; i < r.jobs.size(); i++) {
            SimJob j = r.jobs.get(i);
            if (r.succeeded[i] && r.firstGrant[i] >= 0 && r.finish[i] >= 0) {
                after[WaitCauses.column(j.gpus())] += Math.max(0, r.finish[i] - r.firstGrant[i] - j.durationMillis());
            }
        }
        return after;
    }

    /**
     * The longest first-grant wait of any job of more than one GPU that was granted (the starvation guard bounds
     * it: see "The starvation guard, on and off" in RESULTS.md); the first such job on equal waits; null when none.
     */
    public static GangWait longestGangWait(Simulation.Result r) {
        GangWait longest = null;
        for (int i = 0; i < r.jobs.size(); i++) {
            SimJob j = r.jobs.get(i);
            if (j.gpus() <= 1 || r.rejected[i] || r.firstGrant[i] < 0) {
                continue;
            }
            long wait = r.firstGrant[i] - j.submitMillis();
            if (longest == null || wait > longest.millis()) {
                longest = new GangWait(j.id(), wait);
            }
        }
        return longest;
    }

    /**
     * Finish-time fairness after Themis (Mahajan et al., NSDI'20): per successful job, rho = JCT / (run time x N),
     * N = the tenants with a job in the system (arrived, not ended) when it arrives, its own included: the time
     * it would take on a 1/N share of the cluster. rho <= 1 means the job did at least as well as on its fair
     * slice; the mean, the max and the share of jobs with rho > 1 are reported.
     */
    public static Ftf finishTimeFairness(Simulation.Result r) {
        List<Integer> live = new ArrayList<>();
        Map<String, Integer> tenantIds = new TreeMap<>();
        for (int i = 0; i < r.jobs.size(); i++) {
            if (!r.rejected[i]) {
                live.add(i);
                tenantIds.putIfAbsent(r.jobs.get(i).tenant(), tenantIds.size());
            }
        }
        if (live.isEmpty()) {
            return new Ftf(0, 0, 0);
        }
        Integer[] bySubmit = live.toArray(new Integer[0]);
        Arrays.sort(bySubmit, (a, b) -> Long.compare(r.jobs.get(a).submitMillis(), r.jobs.get(b).submitMillis()));
        Integer[] byEnd = live.toArray(new Integer[0]);
        Arrays.sort(byEnd, (a, b) -> Long.compare(end(r, a), end(r, b)));
        int[] active = new int[tenantIds.size()];
        int tenantsActive = 0;
        int e = 0;
        double sum = 0;
        double max = 0;
        int over = 0;
        int n = 0;
        for (int s = 0; s < bySubmit.length; ) {
            long t = r.jobs.get(bySubmit[s]).submitMillis();
            while (e < byEnd.length && end(r, byEnd[e]) <= t) {
                if (--active[tenantIds.get(r.jobs.get(byEnd[e]).tenant())] == 0) {
                    tenantsActive--;
                }
                e++;
            }
            int from = s;
            while (s < bySubmit.length && r.jobs.get(bySubmit[s]).submitMillis() == t) {
                if (active[tenantIds.get(r.jobs.get(bySubmit[s]).tenant())]++ == 0) {
                    tenantsActive++;
                }
                s++;
            }
            for (int k = from; k < s; k++) {
                int i = bySubmit[k];
                if (r.finish[i] < 0 || !r.succeeded[i]) {
                    continue;
                }
                SimJob j = r.jobs.get(i);
                double rho = (double) (r.finish[i] - j.submitMillis()) / ((double) j.durationMillis() * tenantsActive);
                sum += rho;
                max = Math.max(max, rho);
                over += rho > 1 ? 1 : 0;
                n++;
            }
        }
        return n == 0 ? new Ftf(0, 0, 0) : new Ftf(sum / n, max, (double) over / n);
    }

    private static long end(Simulation.Result r, int i) {
        return r.finish[i] >= 0 ? r.finish[i] : Long.MAX_VALUE;
    }

    /** Per tenant and bucket: GPUs held / cluster GPUs, time-averaged over {@link #BUCKETS} buckets of [0, end]. */
    public static Map<String, double[]> shareSeries(Simulation.Result r, long endMillis) {
        Map<String, double[]> out = new TreeMap<>();
        double width = Math.max(1.0, endMillis / (double) BUCKETS);
        for (long[] iv : r.intervals) {
            double[] busy = out.computeIfAbsent(r.jobs.get((int) iv[3]).tenant(), t -> new double[BUCKETS]);
            addInterval(busy, iv, width);
        }
        for (double[] busy : out.values()) {
            for (int b = 0; b < BUCKETS; b++) {
                busy[b] /= width * r.clusterGpus * 1000.0;
            }
        }
        return out;
    }

    private static void addInterval(double[] busy, long[] iv, double width) {
        int b0 = (int) Math.min(BUCKETS - 1, iv[0] / width);
        int b1 = (int) Math.min(BUCKETS - 1, iv[1] / width);
        for (int b = b0; b <= b1; b++) {
            double lo = Math.max(iv[0], b * width);
            double hi = Math.min(iv[1], (b + 1) * width);
            if (hi > lo) {
                busy[b] += iv[2] * (hi - lo);
            }
        }
    }

    public static List<TenantRow> tenants(Simulation.Result r, Map<String, Double> weights) {
        Map<String, double[]> acc = new TreeMap<>(); // jobs, gpuMs, waitSum, slowdownSum, succeeded
        for (int i = 0; i < r.jobs.size(); i++) {
            SimJob j = r.jobs.get(i);
            if (r.rejected[i]) {
                continue;
            }
            double[] a = acc.computeIfAbsent(j.tenant(), t -> new double[5]);
            a[0]++;
            if (r.finish[i] >= 0 && r.succeeded[i]) {
                a[2] += (r.firstGrant[i] - j.submitMillis()) / 1000.0;
                a[3] += (double) (r.finish[i] - j.submitMillis()) / j.durationMillis();
                a[4]++;
            }
        }
        for (long[] iv : r.intervals) {
            acc.get(r.jobs.get((int) iv[3]).tenant())[1] += iv[2] * (iv[1] - iv[0]) / 1000.0;
        }
        double totalGpuMs = Math.max(1, r.billedMilliGpuMs / 1000.0);
        double totalWeight = weights.values().stream().mapToDouble(Double::doubleValue).sum();
        List<TenantRow> rows = new ArrayList<>();
        acc.forEach((t, a) -> rows.add(new TenantRow(t, (int) a[0], a[1] / 3.6e6, a[1] / totalGpuMs,
                totalWeight <= 0 ? 0 : weights.getOrDefault(t, 0.0) / totalWeight,
                a[4] == 0 ? 0 : a[2] / a[4], a[4] == 0 ? 0 : a[3] / a[4])));
        return rows;
    }

    /** Busy GPUs / cluster GPUs, time-averaged over {@link #BUCKETS} equal buckets of [0, end]. */
    public static double[] utilisationSeries(Simulation.Result r, long endMillis) {
        double[] busy = new double[BUCKETS];
        double width = Math.max(1.0, endMillis / (double) BUCKETS);
        for (long[] iv : r.intervals) {
            addInterval(busy, iv, width);
        }
        for (int b = 0; b < BUCKETS; b++) {
            busy[b] /= width * r.clusterGpus * 1000.0;
        }
        return busy;
    }

    /** Jain's index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes everything. */
    public static double jain(double[] x) {
        double s = 0;
        double s2 = 0;
        for (double v : x) {
            s += v;
            s2 += v * v;
        }
        return x.length == 0 || s2 == 0 ? 1.0 : s * s / (x.length * s2);
    }

    static double pct(List<Double> values, double p) {
        if (values.isEmpty()) {
            return 0;
        }
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        int k = (int) Math.ceil(p / 100.0 * v.length) - 1;
        return v[Math.max(0, Math.min(v.length - 1, k))];
    }

    static double mean(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).average().orElse(0);
    }

    private static double ratio(long a, long b) {
        return b == 0 ? Double.NaN : (double) a / b;
    }

    // ------------------------------------------------------------------ files

    /** Writes report.md, summary.csv, tenants.csv, utilisation.csv and the PNG plots into {@code out}. */
    public static void write(Path out, String title, List<String> context, Workload w,
                             List<Simulation.Result> results) throws IOException {
        Files.createDirectories(out);
        List<Summary> sums = results.stream().map(Report::summarise).toList();
        long end = results.stream().mapToLong(x -> x.endMillis).max().orElse(1);

        StringBuilder csv = new StringBuilder("policy,jobs,ended,failed,rejected,avg_jct_s,p50_jct_s,p99_jct_s,"
                + "avg_wait_s,p50_wait_s,p99_wait_s,makespan_s,utilisation,jain_slowdown,deferrals,requeues,"
                + "multi_gpu_gangs_in_one_rack,multi_node_gangs_in_one_rack,multi_node_gangs,gpu_hours_billed,"
                + "gpu_hours_lost,preemptions,gpu_hours_preempted,decisions_per_s,peak_heap_mib,violations,ftf_mean,"
                + "ftf_max,ftf_share_over_1,avg_queue_length,max_queue_length,avg_stranded_gpus,avg_free_gpus,"
                + "node_failures,wall_s,grants_per_wall_s,peak_allocated_gpus\n");
        for (Summary s : sums) {
            csv.append(String.join(",", s.policy(), "" + s.jobs(), "" + s.ended(), "" + s.failed(), "" + s.rejected(),
                    f(s.avgJct()), f(s.p50Jct()), f(s.p99Jct()), f(s.avgWait()), f(s.p50Wait()), f(s.p99Wait()),
                    f(s.makespan()), f(s.utilisation()), f(s.jain()), "" + s.deferrals(), "" + s.requeues(),
                    f(s.gangsInOneRack()), f(s.multiNodeInOneRack()), "" + s.multiNodeGangs(),
                    f(s.gpuHoursBilled()), f(s.gpuHoursLost()), "" + s.preemptions(), f(s.gpuHoursPreempted()),
                    f(s.decisionsPerSecond()), f(s.peakHeapMiB()),
                    "" + s.violations(), f(s.ftfMean()), f(s.ftfMax()), f(s.ftfOverOne()), f(s.avgQueue()),
                    "" + s.maxQueue(), f(s.avgStranded()), f(s.avgFree()), "" + s.nodeFailures(), f(s.wallSeconds()),
                    f(s.grantsPerSecond()), f(s.peakAllocated()))).append('\n');
        }
        Files.writeString(out.resolve("summary.csv"), csv, StandardCharsets.UTF_8);

        StringBuilder tcsv = new StringBuilder("policy,tenant,jobs,gpu_hours,share,entitled_share,avg_wait_s,"
                + "avg_slowdown\n");
        for (Simulation.Result r : results) {
            for (TenantRow t : tenants(r, w.tenantWeights())) {
                tcsv.append(String.join(",", r.policy, t.tenant(), "" + t.jobs(), f(t.gpuHours()), f(t.share()),
                        f(t.entitled()), f(t.avgWait()), f(t.avgSlowdown()))).append('\n');
            }
        }
        Files.writeString(out.resolve("tenants.csv"), tcsv, StandardCharsets.UTF_8);

        StringBuilder jcsv = new StringBuilder("policy,job,tenant,gpus,gpu_milli,submit_s,first_grant_s,finish_s,"
                + "duration_s,outcome\n");
        for (Simulation.Result r : results) {
            for (int i = 0; i < r.jobs.size(); i++) {
                SimJob j = r.jobs.get(i);
                jcsv.append(String.join(",", r.policy, j.id(), j.tenant(), "" + j.gpus(), "" + j.milliGpus(),
                        f(j.submitMillis() / 1e3),
                        r.firstGrant[i] < 0 ? "" : f(r.firstGrant[i] / 1e3), r.finish[i] < 0 ? "" : f(r.finish[i] / 1e3),
                        f(j.durationMillis() / 1e3), r.rejected[i] ? "rejected" : r.finish[i] < 0 ? "unfinished"
                                : r.succeeded[i] ? "succeeded" : "failed")).append('\n');
            }
        }
        Files.writeString(out.resolve("jobs.csv"), jcsv, StandardCharsets.UTF_8);

        Map<String, double[]> util = new LinkedHashMap<>();
        results.forEach(r -> util.put(r.policy, utilisationSeries(r, end)));
        StringBuilder ucsv = new StringBuilder("t_hours");
        util.keySet().forEach(p -> ucsv.append(',').append(p));
        ucsv.append('\n');
        for (int b = 0; b < BUCKETS; b++) {
            ucsv.append(f((b + 0.5) * end / BUCKETS / 3.6e6));
            for (double[] u : util.values()) {
                ucsv.append(',').append(f(u[b]));
            }
            ucsv.append('\n');
        }
        Files.writeString(out.resolve("utilisation.csv"), ucsv, StandardCharsets.UTF_8);

        Map<String, double[]> queueLen = new LinkedHashMap<>();
        Map<String, double[]> stranded = new LinkedHashMap<>();
        Map<String, Map<String, double[]>> shares = new LinkedHashMap<>();
        for (Simulation.Result r : results) {
            queueLen.put(r.policy, r.queueLength.buckets(end, BUCKETS));
            stranded.put(r.policy, r.stranded.buckets(end, BUCKETS));
            shares.put(r.policy, shareSeries(r, end));
        }
        StringBuilder tscsv = new StringBuilder("t_hours");
        for (String p : queueLen.keySet()) {
            tscsv.append(',').append(p).append("_queue_length,").append(p).append("_stranded_gpus");
        }
        tscsv.append('\n');
        StringBuilder scsv = new StringBuilder("policy,tenant");
        for (int b = 0; b < BUCKETS; b++) {
            tscsv.append(f((b + 0.5) * end / BUCKETS / 3.6e6));
            for (String p : queueLen.keySet()) {
                tscsv.append(',').append(f(queueLen.get(p)[b])).append(',').append(f(stranded.get(p)[b]));
            }
            tscsv.append('\n');
            scsv.append(',').append(f((b + 0.5) * end / BUCKETS / 3.6e6));
        }
        scsv.append('\n');
        Files.writeString(out.resolve("timeseries.csv"), tscsv, StandardCharsets.UTF_8);
        shares.forEach((p, byTenant) -> byTenant.forEach((t, y) -> {
            scsv.append(p).append(',').append(t);
            for (double v : y) {
                scsv.append(',').append(f(v));
            }
            scsv.append('\n');
        }));
        Files.writeString(out.resolve("shares.csv"), scsv, StandardCharsets.UTF_8);

        plots(out, results, util, end);
        line(out.resolve("queue-length.png"), "Jobs waiting (arrived, not running, not ended)", "jobs waiting",
                queueLen, end);
        line(out.resolve("stranded.png"), "Stranded GPUs: free but too scattered for the typical request",
                "stranded GPUs", stranded, end);
        for (Map.Entry<String, Map<String, double[]>> e : shares.entrySet()) {
            line(out.resolve("shares-" + e.getKey() + ".png"), "Per-tenant share of the cluster's GPUs ("
                    + e.getKey() + ")", "GPUs held / cluster GPUs", e.getValue(), end);
        }

        StringBuilder md = new StringBuilder("# ").append(title).append("\n\n");
        context.forEach(c -> md.append("- ").append(c).append('\n'));
        md.append("\nTimes in seconds of virtual time. Wait = first grant - submit. Utilisation = billed GPU time /"
                + " (cluster GPUs x makespan). Jain = Jain's index over the tenants' mean slowdown (JCT / run time)."
                + " Decisions/s and peak heap are wall-clock figures of this machine.\n\n");
        md.append("| policy | ended | avg JCT | p50 JCT | p99 JCT | avg wait | p50 wait | p99 wait | makespan | util |"
                + " Jain | deferrals | preemptions (GPU-h lost) | gangs in 1 rack | decisions/s | peak heap MiB |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Summary s : sums) {
            md.append(String.format(Locale.ROOT, "| %s | %d/%d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |"
                            + " %.1f%% | %.3f | %d | %d (%.1f) | %s | %.0f | %.0f |%n", s.policy(), s.ended(),
                    s.jobs() - s.rejected(), s.avgJct(), s.p50Jct(), s.p99Jct(), s.avgWait(), s.p50Wait(), s.p99Wait(),
                    s.makespan(), 100 * s.utilisation(), s.jain(), s.deferrals(), s.preemptions(),
                    s.gpuHoursPreempted(), Double.isNaN(s.gangsInOneRack()) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * s.gangsInOneRack()),
                    s.decisionsPerSecond(), s.peakHeapMiB()));
        }
        if (sums.size() > 1) {
            Summary base = sums.stream().filter(s -> s.policy().equals("fifo")).findFirst().orElse(sums.get(0));
            md.append("\nRatios to ").append(base.policy()).append(" (lower is better):\n\n");
            md.append("| policy | avg JCT | p99 JCT | avg wait | makespan |\n|---|---|---|---|---|\n");
            for (Summary s : sums) {
                md.append("| ").append(s.policy()).append(" | ").append(r(s.avgJct(), base.avgJct())).append(" | ")
                        .append(r(s.p99Jct(), base.p99Jct())).append(" | ").append(r(s.avgWait(), base.avgWait()))
                        .append(" | ").append(r(s.makespan(), base.makespan())).append(" |\n");
            }
        }
        md.append("\nFairness, queue and fragmentation. FTF rho = JCT / (run time x tenants with a job in the system"
                + " at its arrival), after Themis (NSDI'20); > 1 = worse than a 1/N slice of the cluster. Queue ="
                + " jobs arrived, not running, not ended (time-weighted). Stranded = free whole GPUs on nodes that"
                + " cannot host the typical request (placement's `Inventory.fragmentation`, sizes weighted by the"
                + " GPUs the workload asks for). Wall and grants/s are wall-clock figures.\n\n");
        md.append("| policy | FTF rho mean | FTF rho max | jobs rho > 1 | avg queue | max queue | avg stranded GPUs |"
                + " avg free GPUs | peak GPUs held | multi-node gangs (in 1 rack) | node failures | requeues | GPU-h lost |"
                + " wall s | grants/s |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Summary s : sums) {
            md.append(String.format(Locale.ROOT, "| %s | %.2f | %.1f | %.1f%% | %.1f | %d | %.1f | %.1f | %.1f (%.1f%%) |"
                            + " %d (%s) | %d | %d | %.1f | %.1f | %.0f |%n", s.policy(), s.ftfMean(), s.ftfMax(),
                    100 * s.ftfOverOne(), s.avgQueue(), s.maxQueue(), s.avgStranded(), s.avgFree(),
                    s.peakAllocated(), 100 * s.peakAllocated() / Math.max(1, results.get(0).clusterGpus),
                    s.multiNodeGangs(), Double.isNaN(s.multiNodeInOneRack()) ? "-"
                            : String.format(Locale.ROOT, "%.1f%%", 100 * s.multiNodeInOneRack()),
                    s.nodeFailures(), s.requeues(), s.gpuHoursLost(), s.wallSeconds(), s.grantsPerSecond()));
        }
        if (results.stream().anyMatch(r -> r.checkpoints > 0 || r.interruptedRuns > 0)) {
            md.append("\nInterruptions (GPU-hours; lost = held since the newest checkpoint, or the whole run without one;"
                    + " kept = work the next run resumed with; failures = node failures and hardware GPU faults):\n\n"
                    + "| policy | checkpoints | runs lost to failures |"
                    + " GPU-h lost to failures | GPU-h lost to preemption | GPU-h kept by checkpoints |"
                    + " most work lost by one failure (s) |\n|---|---|---|---|---|---|---|\n");
            for (Simulation.Result r : results) {
                md.append(String.format(Locale.ROOT, "| %s | %d | %d | %.1f | %.1f | %.1f | %.0f |%n", r.policy,
                        r.checkpoints, r.interruptedRuns, r.lostMilliGpuMs / 3.6e9, r.preemptedMilliGpuMs / 3.6e9,
                        r.savedMilliGpuMs / 3.6e9, r.maxWorkLostPerFailureMs / 1e3));
            }
        }
        md.append("\nQueue inputs by kind: ");
        for (Simulation.Result r : results) {
            md.append(r.policy).append(": ").append(r.queueInputs).append("; ");
        }
        md.append('\n');
        md.append("\nCapacity reservations (requested / runs stopped to bound drains / GPU-hours held idle on drained"
                + " nodes): ");
        for (Simulation.Result r : results) {
            md.append(r.policy).append(": ").append(String.format(Locale.ROOT, "%d / %d / %.1f",
                    r.capacityReservations, r.drainStops, r.reservedIdleGpuHours())).append("; ");
        }
        md.append('\n');
        md.append("\nLongest first-grant wait of a gang (a job of more than one GPU): ");
        for (Simulation.Result r : results) {
            GangWait g = longestGangWait(r);
            md.append(r.policy).append(": ").append(g == null ? "-" : String.format(Locale.ROOT, "%.1f h (%s)",
                    g.millis() / 3.6e6, g.jobId())).append("; ");
        }
        md.append('\n');
        md.append("\nQueue preemptions by reason: ");
        for (Simulation.Result r : results) {
            md.append(r.policy).append(": ").append(r.preemptionsByReason.isEmpty() ? "none" : r.preemptionsByReason)
                    .append("; ");
        }
        md.append("\nPlacement deferrals by reason: ");
        for (Simulation.Result r : results) {
            md.append(r.policy).append(": ").append(r.deferralsByReason.isEmpty() ? "none" : r.deferralsByReason)
                    .append("; ");
        }
        md.append('\n');
        for (Simulation.Result r : results) {
            r.deferralExample.forEach((reason, message) -> md.append("- ").append(r.policy).append(", first ")
                    .append(reason).append(": ").append(message).append('\n'));
        }
        waitCauses(md, results);
        md.append("\nInvariants: ");
        for (Simulation.Result r : results) {
            md.append(r.policy).append(": ").append(r.violations.isEmpty() ? "no violations" : r.violations.size()
                    + " violations, first: " + r.violations.get(0)).append("; ");
        }
        md.append("\n\nPer tenant (share of billed GPU time vs entitled share of the quota):\n\n");
        md.append("| policy | tenant | jobs | GPU-h | share | entitled | avg wait | avg slowdown |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (Simulation.Result r : results) {
            for (TenantRow t : tenants(r, w.tenantWeights())) {
                md.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.1f%% | %.1f%% | %.0f | %.2f |%n",
                        r.policy, t.tenant(), t.jobs(), t.gpuHours(), 100 * t.share(), 100 * t.entitled(),
                        t.avgWait(), t.avgSlowdown()));
            }
        }
        md.append("\nPlots: `utilisation.png`, `jct-cdf.png`, `queue-length.png`, `stranded.png`, `shares-<policy>.png`."
                + " Data: `summary.csv`, `tenants.csv`, `utilisation.csv`, `timeseries.csv`, `shares.csv`, `jobs.csv`"
                + " (per job).\n");
        Files.writeString(out.resolve("report.md"), md, StandardCharsets.UTF_8);
    }

    private static void plots(Path out, List<Simulation.Result> results, Map<String, double[]> util, long end)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart u = new XYChartBuilder().width(900).height(450).title("GPU utilisation over time")
                .xAxisTitle("virtual time (hours)").yAxisTitle("busy GPUs / cluster GPUs").build();
        u.getStyler().setXAxisDecimalPattern("#,##0.#");
        double[] x = new double[BUCKETS];
        for (int b = 0; b < BUCKETS; b++) {
            x[b] = (b + 0.5) * end / BUCKETS / 3.6e6;
        }
        util.forEach((p, y) -> u.addSeries(p, x, y).setMarker(SeriesMarkers.NONE));
        BitmapEncoder.saveBitmap(u, out.resolve("utilisation.png").toString(), BitmapEncoder.BitmapFormat.PNG);

        XYChart c = new XYChartBuilder().width(900).height(450).title("Job completion time CDF")
                .xAxisTitle("JCT (seconds, log scale)").yAxisTitle("fraction of jobs").build();
        c.getStyler().setXAxisLogarithmic(true);
        for (Simulation.Result r : results) {
            List<Double> jct = new ArrayList<>();
            for (int i = 0; i < r.jobs.size(); i++) {
                if (r.finish[i] >= 0 && r.succeeded[i]) {
                    jct.add(Math.max(0.001, (r.finish[i] - r.jobs.get(i).submitMillis()) / 1000.0));
                }
            }
            if (jct.isEmpty()) {
                continue;
            }
            double[] v = jct.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            int points = Math.min(v.length, 500);
            double[] xs = new double[points];
            double[] ys = new double[points];
            for (int k = 0; k < points; k++) {
                int idx = (int) ((long) (k + 1) * v.length / points) - 1;
                xs[k] = v[idx];
                ys[k] = (idx + 1) / (double) v.length;
            }
            c.addSeries(r.policy, xs, ys).setMarker(SeriesMarkers.NONE);
        }
        BitmapEncoder.saveBitmap(c, out.resolve("jct-cdf.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void line(Path file, String title, String yTitle, Map<String, double[]> series, long end)
            throws IOException {
        XYChart c = new XYChartBuilder().width(900).height(450).title(title).xAxisTitle("virtual time (hours)")
                .yAxisTitle(yTitle).build();
        c.getStyler().setXAxisDecimalPattern("#,##0.#");
        double[] x = new double[BUCKETS];
        for (int b = 0; b < BUCKETS; b++) {
            x[b] = (b + 0.5) * end / BUCKETS / 3.6e6;
        }
        series.forEach((name, y) -> c.addSeries(name, x, y).setMarker(SeriesMarkers.NONE));
        if (series.isEmpty()) {
            c.addSeries("none", x, new double[BUCKETS]).setMarker(SeriesMarkers.NONE);
        }
        BitmapEncoder.saveBitmap(c, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static String r(double a, double b) {
        return b == 0 ? "-" : String.format(Locale.ROOT, "%.2f", a / b);
    }

    private static String f(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
    }
}
