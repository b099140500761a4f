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
                          double decisionsPerSecond, double peakHeapMiB, int violations) {
        /** The figures that depend only on the inputs (not the wall-clock ones), for determinism checks. */
        public Summary virtualOnly() {
            return new Summary(policy, jobs, ended, failed, rejected, avgJct, p50Jct, p99Jct, avgWait, p50Wait, p99Wait,
                    makespan, utilisation, jain, deferrals, requeues, gangsInOneRack, multiNodeInOneRack,
                    multiNodeGangs, gpuHoursBilled, gpuHoursLost, preemptions, gpuHoursPreempted, 0, 0, violations);
        }
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
        double util = makespan <= 0 ? 0 : r.billedGpuMs / 1000.0 / (r.clusterGpus * makespan);
        double jain = jain(tenants(r, Map.of()).stream().mapToDouble(TenantRow::avgSlowdown).toArray());
        double wallSeconds = r.wallNanos / 1e9;
        return new Summary(r.policy, r.jobs.size(), r.ended, failed, rejected, mean(jct), pct(jct, 50), pct(jct, 99),
                mean(wait), pct(wait, 50), pct(wait, 99), makespan, util, jain, r.deferrals, r.requeues,
                ratio(r.multiGpuInOneRack, r.multiGpuGangs), ratio(r.multiNodeInOneRack, r.multiNodeGangs),
                r.multiNodeGangs, r.billedGpuMs / 3.6e6, r.lostGpuMs / 3.6e6, r.preemptions, r.preemptedGpuMs / 3.6e6,
                wallSeconds <= 0 ? 0 : r.decisions / wallSeconds, r.peakHeapBytes / 1048576.0, r.violations.size());
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
            acc.get(r.jobs.get((int) iv[3]).tenant())[1] += iv[2] * (iv[1] - iv[0]);
        }
        double totalGpuMs = Math.max(1, r.billedGpuMs);
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
        for (int b = 0; b < BUCKETS; b++) {
            busy[b] /= width * r.clusterGpus;
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
                + "gpu_hours_lost,preemptions,gpu_hours_preempted,decisions_per_s,peak_heap_mib,violations\n");
        for (Summary s : sums) {
            csv.append(String.join(",", s.policy(), "" + s.jobs(), "" + s.ended(), "" + s.failed(), "" + s.rejected(),
                    f(s.avgJct()), f(s.p50Jct()), f(s.p99Jct()), f(s.avgWait()), f(s.p50Wait()), f(s.p99Wait()),
                    f(s.makespan()), f(s.utilisation()), f(s.jain()), "" + s.deferrals(), "" + s.requeues(),
                    f(s.gangsInOneRack()), f(s.multiNodeInOneRack()), "" + s.multiNodeGangs(),
                    f(s.gpuHoursBilled()), f(s.gpuHoursLost()), "" + s.preemptions(), f(s.gpuHoursPreempted()),
                    f(s.decisionsPerSecond()), f(s.peakHeapMiB()),
                    "" + s.violations())).append('\n');
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

        StringBuilder jcsv = new StringBuilder("policy,job,tenant,gpus,submit_s,first_grant_s,finish_s,duration_s,"
                + "outcome\n");
        for (Simulation.Result r : results) {
            for (int i = 0; i < r.jobs.size(); i++) {
                SimJob j = r.jobs.get(i);
                jcsv.append(String.join(",", r.policy, j.id(), j.tenant(), "" + j.gpus(), f(j.submitMillis() / 1e3),
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

        plots(out, results, util, end);

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
        md.append("\nPlots: `utilisation.png`, `jct-cdf.png`. Data: `summary.csv`, `tenants.csv`, `utilisation.csv`, `jobs.csv` (per job).\n");
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

    private static String r(double a, double b) {
        return b == 0 ? "-" : String.format(Locale.ROOT, "%.2f", a / b);
    }

    private static String f(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
    }
}
