package io.gantry.launcher.load;

import io.gantry.launcher.LoadTest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The figures of one run, as report.md, samples.csv and one row of the results table. */
public final class LoadReport {
    /** One per-second sample: seconds since the load started, phase, and named values. */
    public record Sample(double t, String phase, Map<String, Double> values) {
    }

    /** Consumer lag on these (group, topic) pairs delays a grant; the others are downstream of it. */
    private static final Set<String> CRITICAL = Set.of("gantry-queue admission.job-events",
            "gantry-placement queue.job-events");

    private final LoadTest.Options o;
    private final String stack;
    private final Instant startedAt;
    private final String startLoad;
    private final String endLoad;
    private final List<JobLedger.Job> jobs;
    private final JobLedger ledger;
    private final List<Sample> samples;
    private final Map<String, AtomicLong> errors;
    private final Map<String, AtomicLong> measuredErrors;
    private final long warmEnd;
    private final long end;
    private final long nanos0;
    private final long epoch0;
    private final long undecodable;
    private final Exception watcherFailure;

    private long sentMeasured;
    private long acceptedMeasured;
    private long acceptedAll;
    private long lost;
    private final List<String> lostIds = new ArrayList<>();
    private long duplicates;
    private long deferredJobs;
    private long deferrals;
    private double grantedPerSecond;
    private double sentPerSecond;
    private double acceptedPerSecond;
    private Percentiles placed;
    private Percentiles rest;
    private final Map<String, Percentiles> hops = new LinkedHashMap<>();
    private final List<Step> steps = new ArrayList<>();
    private Step best;

    /** One step of --saturate: its window, what was sent and granted in it, and the latency of its jobs. */
    private record Step(int inFlight, double sentPerSecond, double grantedPerSecond, Percentiles placed, long deferred) {
    }

    public LoadReport(LoadTest.Options o, String stack, Instant startedAt, String startLoad, String endLoad,
                      List<JobLedger.Job> jobs, JobLedger ledger, List<Sample> samples,
                      Map<String, AtomicLong> errors, Map<String, AtomicLong> measuredErrors, long warmEnd, long end,
                      long nanos0, long epoch0, long undecodable, Exception watcherFailure) {
        this.o = o;
        this.stack = stack;
        this.startedAt = startedAt;
        this.startLoad = startLoad;
        this.endLoad = endLoad;
        this.jobs = jobs;
        this.ledger = ledger;
        this.samples = List.copyOf(samples);
        this.errors = new TreeMap<>(errors);
        this.measuredErrors = new TreeMap<>(measuredErrors);
        this.warmEnd = warmEnd;
        this.end = end;
        this.nanos0 = nanos0;
        this.epoch0 = epoch0;
        this.undecodable = undecodable;
        this.watcherFailure = watcherFailure;
        compute();
    }

    private void compute() {
        double seconds = (end - warmEnd) / 1e9;
        List<Long> placedUs = new ArrayList<>();
        List<Long> restUs = new ArrayList<>();
        List<Long> client = new ArrayList<>();
        List<Long> queue = new ArrayList<>();
        List<Long> placement = new ArrayList<>();
        List<Long> observe = new ArrayList<>();
        long grantsInWindow = 0;
        for (JobLedger.Job j : jobs) {
            if (j.measured) {
                sentMeasured++;
            }
            if (j.jobId == null) {
                continue;
            }
            acceptedAll++;
            JobLedger.Seen s = ledger.seen(j.jobId);
            if (s == null || s.grants == 0) {
                lost++;
                if (lostIds.size() < 20) {
                    lostIds.add(j.jobId);
                }
                continue;
            }
            if (s.grants > 1) {
                duplicates++;
            }
            if (s.deferrals > 0) {
                deferredJobs++;
                deferrals += s.deferrals;
            }
            if (s.grantNanos >= warmEnd && s.grantNanos < end) {
                grantsInWindow++;
            }
            if (!j.measured) {
                continue;
            }
            acceptedMeasured++;
            placedUs.add((s.grantNanos - j.scheduledNanos) / 1000);
            restUs.add((j.responseNanos - j.scheduledNanos) / 1000);
            long dueMs = epoch0 + (j.scheduledNanos - nanos0) / 1_000_000;
            long observedMs = epoch0 + (s.grantNanos - nanos0) / 1_000_000;
            if (s.submittedTs > 0 && s.dispatchedTs > 0 && s.grantTs > 0) {
                client.add((s.submittedTs - dueMs) * 1000);
                queue.add((s.dispatchedTs - s.submittedTs) * 1000);
                placement.add((s.grantTs - s.dispatchedTs) * 1000);
                observe.add((observedMs - s.grantTs) * 1000);
            }
        }
        placed = Percentiles.of(placedUs);
        rest = Percentiles.of(restUs);
        hops.put("send -> JobSubmitted written (HTTP, admission validation, produce)", Percentiles.of(client));
        hops.put("JobSubmitted -> JobDispatched written (queue: consume, order, quota, transaction)", Percentiles.of(queue));
        hops.put("JobDispatched -> AllocationGranted written (placement: consume, place, transaction)", Percentiles.of(placement));
        hops.put("AllocationGranted written -> consumed here (transaction commit, fetch)", Percentiles.of(observe));
        grantedPerSecond = grantsInWindow / seconds;
        if (o.saturate()) {
            computeSteps();
        }
        sentPerSecond = sentMeasured / seconds;
        acceptedPerSecond = acceptedMeasured / seconds;
    }

    private void computeSteps() {
        long d = o.duration().toNanos();
        for (int k = 0; k < o.inFlight().size(); k++) {
            long from = warmEnd + k * d;
            long to = from + d;
            long sent = 0;
            long grants = 0;
            long deferred = 0;
            List<Long> lat = new ArrayList<>();
            for (JobLedger.Job j : jobs) {
                boolean inStep = j.scheduledNanos >= from && j.scheduledNanos < to;
                if (inStep) {
                    sent++;
                }
                JobLedger.Seen s = j.jobId == null ? null : ledger.seen(j.jobId);
                if (s == null || s.grants == 0) {
                    continue;
                }
                if (s.grantNanos >= from && s.grantNanos < to) {
                    grants++;
                }
                if (inStep) {
                    lat.add((s.grantNanos - j.scheduledNanos) / 1000);
                    if (s.deferrals > 0) {
                        deferred++;
                    }
                }
            }
            Step step = new Step(o.inFlight().get(k), sent / (d / 1e9), grants / (d / 1e9), Percentiles.of(lat), deferred);
            steps.add(step);
            if (best == null || step.grantedPerSecond() > best.grantedPerSecond()) {
                best = step;
            }
        }
    }

    public int exitCode() {
        return lost > 0 || acceptedAll == 0 || watcherFailure != null ? 1 : 0;
    }

    public long lost() {
        return lost;
    }

    public long duplicates() {
        return duplicates;
    }

    /** Granted jobs/s over the measured window; with --saturate, of the best step. */
    public double grantedPerSecond() {
        return best != null ? best.grantedPerSecond() : grantedPerSecond;
    }

    public long sentMeasured() {
        return sentMeasured;
    }

    public String summary() {
        StringBuilder stepLines = new StringBuilder();
        for (Step st : steps) {
            stepLines.append(String.format(Locale.ROOT, "[loadtest]   %5d in flight: granted %.1f/s, submit -> placed p50 %s p99 %s ms, waited for GPUs %d%n",
                    st.inFlight(), st.grantedPerSecond(), ms(st.placed().at(0.5)), ms(st.placed().at(0.99)), st.deferred()));
        }
        if (best != null) {
            stepLines.append(String.format(Locale.ROOT, "[loadtest] sustained: %.1f granted jobs/s (at %d in flight)%n",
                    best.grantedPerSecond(), best.inFlight()));
        }
        return stepLines + String.format(Locale.ROOT, """
                [loadtest] %s: sent %.1f/s, accepted %.1f/s, granted %.1f/s over %.0fs
                [loadtest] submit -> placed ms: p50 %s p95 %s p99 %s max %s (n=%d); REST submit p99 %s
                [loadtest] errors %d, lost %d, duplicate grants %d, jobs deferred for capacity %d%s
                """, o.modeLabel(), sentPerSecond, acceptedPerSecond, grantedPerSecond, (end - warmEnd) / 1e9,
                ms(placed.at(0.5)), ms(placed.at(0.95)), ms(placed.at(0.99)), ms(placed.max()), placed.count(),
                ms(rest.at(0.99)), errors.values().stream().mapToLong(AtomicLong::get).sum(), lost, duplicates, deferredJobs,
                exitCode() == 0 ? "" : "  -> FAILED");
    }

    public void write(Path dir, Path table) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("samples.csv"), csv(), StandardCharsets.UTF_8);
        if (table != null) {
            appendRow(table, dir.resolve("report.md"));
        }
    }

    private String markdown() {
        StringBuilder b = new StringBuilder();
        String date = DateTimeFormatter.ISO_INSTANT.format(startedAt.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
        b.append("# Gantry load test: ").append(o.modeLabel()).append("\n\n");
        b.append("| | |\n| --- | --- |\n");
        b.append("| date | ").append(date).append(" |\n");
        b.append("| commit | ").append(commit(o.repo())).append(" |\n");
        b.append("| machine | ").append(machine()).append(" |\n");
        b.append("| JDK | ").append(System.getProperty("java.vm.name")).append(' ').append(System.getProperty("java.runtime.version")).append(" |\n");
        b.append("| load average at start / end (1, 5, 15 min) | ").append(startLoad).append(" / ").append(endLoad).append(" |\n");
        b.append("| stack | ").append(stack).append(" |\n");
        b.append("| workload | ").append(o.modeLabel()).append(String.format(Locale.ROOT,
                "; %d tenant token(s) round-robin; each job 1 task x %d GPU, runSeconds %d; warm-up %ds (excluded), "
                        + "measured %ds, drain up to %ds; HTTP timeout %ds |\n", o.external() ? o.tokens().size() : o.tenants(),
                o.jobGpus(), o.runSeconds(), o.warmup().toSeconds(), o.duration().toSeconds(), o.drain().toSeconds(),
                o.httpTimeout().toSeconds()));
        b.append("| verdict | ").append(exitCode() == 0 ? "every accepted job was granted" :
                "**FAILED**: " + lost + " accepted job(s) never granted" + (watcherFailure != null ? "; watcher: " + watcherFailure : ""))
                .append(" |\n\n");

        b.append("## Throughput\n\n");
        b.append("Over the measured window. *sent*: submissions due in the window; *accepted*: those answered 2xx; "
                + "*granted*: AllocationGranted records consumed in the window (any job of this run).\n\n");
        b.append("| offered | sent/s | accepted/s | granted jobs/s | jobs in window | accepted (whole run) | lost | duplicate grants |\n");
        b.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        b.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %d | %d | %d | %d |\n\n",
                o.saturate() ? "closed loop, in steps" : fmtRate(o.rate()) + " jobs/s",
                sentPerSecond, acceptedPerSecond, grantedPerSecond, sentMeasured, acceptedAll, lost, duplicates));
        if (!steps.isEmpty()) {
            b.append("### Steps\n\nClosed loop: each step keeps its number of jobs between send and grant for ")
                    .append(o.duration().toSeconds()).append(" s. Throughput grows with the window until a stage "
                            + "saturates; the best step is the sustained rate.\n\n");
            b.append("| in flight | sent/s | granted jobs/s | submit -> placed p50 | p95 | p99 | jobs that waited for GPUs |\n");
            b.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
            for (Step st : steps) {
                b.append(String.format(Locale.ROOT, "| %d | %.1f | %s%.1f%s | %s | %s | %s | %d |\n", st.inFlight(),
                        st.sentPerSecond(), st == best ? "**" : "", st.grantedPerSecond(), st == best ? "**" : "",
                        ms(st.placed().at(0.5)), ms(st.placed().at(0.95)), ms(st.placed().at(0.99)), st.deferred()));
            }
            b.append('\n');
        }
        if (deferredJobs > 0) {
            b.append(String.format(Locale.ROOT, "**%d job(s) waited for GPUs** (%d PlacementDeferred): the simulated cluster "
                    + "was too small for this rate x run time, so part of the latency is queueing for capacity, not the "
                    + "pipeline. Use more --nodes or fewer --run-seconds.%n%n", deferredJobs, deferrals));
        } else {
            b.append("No job waited for GPUs (no PlacementDeferred): the figures are the pipeline's, not capacity queueing.\n\n");
        }
        if (!lostIds.isEmpty()) {
            b.append("Lost (first ").append(lostIds.size()).append("): ").append(String.join(", ", lostIds)).append("\n\n");
        }

        b.append("## Latency\n\n");
        b.append("Milliseconds, jobs sent in the measured window, measured from the **scheduled** send time (open loop: "
                + "a late send counts against the system, no coordinated omission).\n\n");
        b.append("| | n | p50 | p95 | p99 | max |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
        row(b, "submit -> placed (AllocationGranted consumed)", placed);
        row(b, "REST submit (202 received)", rest);
        b.append("\n### Where the time goes\n\n");
        b.append("Per hop, from the Kafka record timestamps (each writer's CreateTime, ms resolution, one host clock), "
                + "for measured jobs whose three records were seen:\n\n");
        b.append("| hop | n | p50 | p95 | p99 | max |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
        hops.forEach((k, p) -> row(b, k, p));
        b.append('\n');

        b.append("## Errors\n\n");
        if (errors.isEmpty()) {
            b.append("None.\n\n");
        } else {
            b.append("| kind | whole run | measured window |\n| --- | ---: | ---: |\n");
            errors.forEach((k, v) -> b.append("| ").append(k).append(" | ").append(v.get()).append(" | ")
                    .append(measuredErrors.getOrDefault(k, new AtomicLong()).get()).append(" |\n"));
            b.append('\n');
        }
        if (undecodable > 0) {
            b.append("The watcher could not decode ").append(undecodable).append(" record(s) (schema newer than the harness?).\n\n");
        }

        b.append("## Kafka consumer lag\n\n");
        b.append("Records each service's consumer group is behind on each input topic (read_committed end offset minus "
                + "committed offset, summed over partitions), sampled every second in the measured window. Rows marked "
                + "*critical* are the hops a job crosses before its grant. A caught-up group shows 1 on a topic written in "
                + "transactions (placement.*): the commit marker after the last record counts until the next fetch.\n\n");
        b.append("| group | topic | p95 | max | path |\n| --- | --- | ---: | ---: | --- |\n");
        for (String key : keys("lag ")) {
            Percentiles p = Percentiles.of(measured("lag " + key));
            String[] gt = key.split(" ", 2);
            b.append("| ").append(gt[0]).append(" | ").append(gt[1]).append(" | ").append(p.at(0.95)).append(" | ")
                    .append(p.max()).append(" | ").append(CRITICAL.contains(key) ? "critical" : "").append(" |\n");
        }
        if (keys("lag ").isEmpty()) {
            b.append("| (no consumer group answered) | | | | |\n");
        }
        b.append('\n');

        b.append("## CPU and memory\n\n");
        b.append("From /proc every second in the measured window: CPU as % of one core (utime+stime), resident set "
                + "(VmRSS). The machine has ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores, so the rows can add up to at most ").append(Runtime.getRuntime().availableProcessors() * 100)
                .append("%. *load generator threads* (the HTTP client and this harness's own threads, by the JVM's "
                        + "thread CPU clock) are part of the harness JVM's figure, and so are its *JIT compiler* and *GC "
                        + "and VM* threads (by /proc task name). *whole machine* is every process on the host (/proc/stat): "
                        + "what it has beyond the rows above it is other work that ran at the same time.\n\n");
        b.append("| process | CPU % mean | CPU % max | RSS MiB mean | RSS MiB max |\n| --- | ---: | ---: | ---: | ---: |\n");
        for (String name : keys("cpu% ")) {
            double[] cpu = stats(measuredDouble("cpu% " + name));
            double[] rss = stats(measuredDouble("rss_mib " + name));
            b.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %s | %s |\n", name, cpu[0], cpu[1],
                    rss[2] == 0 ? "" : String.format(Locale.ROOT, "%.0f", rss[0]),
                    rss[2] == 0 ? "" : String.format(Locale.ROOT, "%.0f", rss[1])));
        }
        double[] load = stats(measuredDouble("loadavg_1m"));
        b.append(String.format(Locale.ROOT, "1-minute load average during the measured window: mean %.1f, max %.1f.\n\n",
                load[0], load[1]));
        brokerSection(b);
        b.append("## How it was measured\n\n");
        b.append("""
                - Submissions: `POST /v1/jobs` with the JDK's asynchronous HTTP/1.1 client; open loop sends job *i* at
                  t0 + i/rate whatever happened to the ones before, closed loop keeps a fixed number of jobs between
                  send and grant. A job is *lost* if it was answered 2xx and no AllocationGranted for its id was
                  consumed by the end of the drain.
                - Grants: a read_committed consumer outside any consumer group on `admission.job-events`,
                  `queue.job-events` and `placement.allocation-events`, from their end at the start of the run; the
                  Avro records are decoded with `io.gantry.schemas.AvroWire`.
                - Per-second samples of everything above are in [samples.csv](samples.csv).
                """);
        return b.toString();
    }

    /** Requests by Kafka API and broker time by client, when the broker ran in the harness JVM. */
    private void brokerSection(StringBuilder b) {
        b.append("## Broker\n\n");
        List<String> apis = keys(BrokerSampler.REQUESTS);
        if (apis.isEmpty()) {
            b.append("Not measured: the broker does not run in this JVM (an external stack).\n\n");
            return;
        }
        b.append("From the broker's own metrics, means over the measured window. *handler ms/s*: time in the request "
                + "handler threads per second (LocalTimeMs); the network threads' share is in the next table. The "
                + "broker's CPU is the harness JVM's less its load generator, JIT compiler and GC threads.\n\n");
        b.append("| Kafka API | requests/s | handler ms/s |\n| --- | ---: | ---: |\n");
        apis.sort(Comparator.comparingDouble((String a) -> -windowMean(BrokerSampler.REQUESTS + a)));
        for (String api : apis) {
            double rate = windowMean(BrokerSampler.REQUESTS + api);
            if (rate >= 0.05) {
                b.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f |\n", api, rate,
                        windowMean(BrokerSampler.HANDLER_MS + api)));
            }
        }
        b.append("\nBroker time by client id: % of one broker thread spent on its requests in the network and I/O "
                + "threads (the broker's request-time, kept per client while a client quota is set: the harness sets "
                + "one no client can reach).\n\n");
        b.append("| client id | % of a thread |\n| --- | ---: |\n");
        List<String> clients = keys(BrokerSampler.CLIENT);
        clients.sort(Comparator.comparingDouble((String c) -> -windowMean(BrokerSampler.CLIENT + c)));
        double total = 0;
        for (String c : clients) {
            double pct = windowMean(BrokerSampler.CLIENT + c);
            total += pct;
            if (pct >= 0.05) {
                b.append(String.format(Locale.ROOT, "| %s | %.1f |\n", c, pct));
            }
        }
        b.append(String.format(Locale.ROOT, "| all clients | %.1f |\n\n", total));
    }

    /** The mean of a per-second rate over the measured window's samples; a sample without it counts as 0. */
    private double windowMean(String key) {
        double sum = 0;
        int n = 0;
        for (Sample s : samples) {
            if (s.phase().equals("measure")) {
                Double v = s.values().get(key);
                sum += v == null || v.isNaN() ? 0 : v;
                n++;
            }
        }
        return n == 0 ? 0 : sum / n;
    }

    private static void row(StringBuilder b, String name, Percentiles p) {
        b.append("| ").append(name).append(" | ").append(p.count()).append(" | ").append(ms(p.at(0.5))).append(" | ")
                .append(ms(p.at(0.95))).append(" | ").append(ms(p.at(0.99))).append(" | ").append(ms(p.max())).append(" |\n");
    }

    /** Microseconds as milliseconds. */
    private static String ms(long us) {
        if (us < 0 && us != -1) {
            return String.format(Locale.ROOT, "%.1f", us / 1000.0);
        }
        return us == -1 ? "-" : us >= 100_000 ? Long.toString(Math.round(us / 1000.0))
                : String.format(Locale.ROOT, "%.1f", us / 1000.0);
    }

    private static String fmtRate(double r) {
        return r == Math.rint(r) ? Long.toString((long) r) : Double.toString(r);
    }

    private List<String> keys(String prefix) {
        Set<String> k = new LinkedHashSet<>();
        for (Sample s : samples) {
            for (String name : s.values().keySet()) {
                if (name.startsWith(prefix)) {
                    k.add(name.substring(prefix.length()));
                }
            }
        }
        return new ArrayList<>(k);
    }

    private List<Long> measured(String key) {
        List<Long> out = new ArrayList<>();
        for (Sample s : samples) {
            Double v = s.values().get(key);
            if (s.phase().equals("measure") && v != null && !v.isNaN()) {
                out.add(Math.round(v));
            }
        }
        return out;
    }

    private List<Double> measuredDouble(String key) {
        List<Double> out = new ArrayList<>();
        for (Sample s : samples) {
            Double v = s.values().get(key);
            if (s.phase().equals("measure") && v != null && !v.isNaN()) {
                out.add(v);
            }
        }
        return out;
    }

    /** mean, max, count. */
    private static double[] stats(List<Double> v) {
        double sum = 0;
        double max = 0;
        for (double x : v) {
            sum += x;
            max = Math.max(max, x);
        }
        return new double[] {v.isEmpty() ? 0 : sum / v.size(), max, v.size()};
    }

    private String csv() {
        Set<String> columns = new LinkedHashSet<>();
        samples.forEach(s -> columns.addAll(s.values().keySet()));
        StringBuilder b = new StringBuilder("t_s,phase");
        columns.forEach(c -> b.append(',').append(c.replace(',', ';')));
        b.append('\n');
        for (Sample s : samples) {
            b.append(String.format(Locale.ROOT, "%.1f", s.t())).append(',').append(s.phase());
            for (String c : columns) {
                Double v = s.values().get(c);
                b.append(',');
                if (v != null && !v.isNaN()) {
                    b.append(v == Math.rint(v) ? Long.toString(v.longValue()) : String.format(Locale.ROOT, "%.2f", v));
                }
            }
            b.append('\n');
        }
        return b.toString();
    }

    private void appendRow(Path table, Path report) throws IOException {
        if (!Files.exists(table)) {
            Files.createDirectories(table.toAbsolutePath().getParent());
            Files.writeString(table, """
                    # Load test results

                    `./gantry loadtest` runs (newest last): REST submission -> AllocationGranted on Kafka through the whole
                    running stack. Latencies in ms from the scheduled send time. Each row links its full report (lag per
                    consumer group, CPU and RSS per service, per-second samples). Machines differ: compare rows of the
                    same machine, and look at the load average, which shows what else ran.

                    | date (UTC) | commit | machine | load avg at start | mode | sent/s | granted jobs/s | submit->placed p50 / p95 / p99 / max | REST p99 | errors | lost | waited for GPUs | report |
                    | --- | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |
                    """, StandardCharsets.UTF_8);
        }
        String link;
        try {
            link = table.toAbsolutePath().getParent().relativize(report.toAbsolutePath()).toString();
        } catch (IllegalArgumentException e) {
            link = report.toString();
        }
        Percentiles rowPlaced = best != null ? best.placed() : placed;
        String row = String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %.1f | %.1f | %s / %s / %s / %s | %s | %d | %d | %d | [report](%s) |\n",
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC).format(startedAt),
                commit(o.repo()), machine(), startLoad.split(" ")[0] + " " + startLoad.split(" ")[1] + " " + startLoad.split(" ")[2],
                best != null ? o.modeLabel() + ", best step " + best.inFlight() : o.modeLabel(),
                best != null ? best.sentPerSecond() : sentPerSecond, grantedPerSecond(),
                ms(rowPlaced.at(0.5)), ms(rowPlaced.at(0.95)), ms(rowPlaced.at(0.99)), ms(rowPlaced.max()), ms(rest.at(0.99)),
                errors.values().stream().mapToLong(AtomicLong::get).sum(), lost, best != null ? best.deferred() : deferredJobs, link);
        Files.writeString(table, row, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
    }

    /** "/proc/loadavg" as "1min 5min 15min", or "unknown". */
    public static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown unknown unknown";
        }
    }

    static String machine() {
        String cpu = "unknown CPU";
        String ram = "";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    ram = String.format(Locale.ROOT, ", %.0f GiB RAM", Long.parseLong(line.replaceAll("\\D", "")) / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: the core count is still known
        }
        return Runtime.getRuntime().availableProcessors() + " cores, " + cpu + ram;
    }

    static String commit(Path repo) {
        try {
            String head = git(repo, "rev-parse", "--short=10", "HEAD").trim();
            String dirty = git(repo, "status", "--porcelain", "--untracked-files=no").trim();
            return head.isEmpty() ? "unknown" : head + (dirty.isEmpty() ? "" : " (+ uncommitted changes)");
        } catch (IOException | RuntimeException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    private static String git(Path repo, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", repo.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            return "";
        }
        return out;
    }
}
