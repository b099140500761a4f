package io.gantry.launcher;

import io.gantry.launcher.load.BrokerSampler;
import io.gantry.launcher.load.EventWatcher;
import io.gantry.launcher.load.JobLedger;
import io.gantry.launcher.load.LagSampler;
import io.gantry.launcher.load.LoadReport;
import io.gantry.launcher.load.Percentiles;
import io.gantry.launcher.load.ProcSampler;
import io.gantry.launcher.load.Stack;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gantry loadtest}: the end-to-end load harness, REST submission to AllocationGranted on Kafka.
 *
 * <p>Open loop ({@code --rate N}): submission i is due at t0 + i/N whatever happened to the earlier ones, and its
 * latencies are measured from that due time, so a stall on the way shows up in the figures instead of quietly
 * slowing the sender (no coordinated omission). Saturation ({@code --saturate}): a closed loop keeping
 * {@code --in-flight} jobs between send and grant, in steps (100, 200, ... 1600 by default): throughput rises with the
 * window until a stage saturates, and the best step is the sustained grant rate.
 *
 * <p>Every second it samples consumer-group lag of the services and CPU/RSS of their processes, prints a progress
 * line, and at the end writes report.md + samples.csv and appends one row to the results table. The run fails
 * (exit 1) when a job answered 2xx is not granted within the drain timeout.
 */
public final class LoadTest {
    private LoadTest() {
    }

    static final String USAGE = """
            usage: gantry loadtest [options]
              --rate N                open loop: N submissions a second at fixed intervals (default 100)
              --saturate              closed loop: keep --in-flight jobs between send and grant, step by step; the
                                      best step's grant rate is the sustained jobs/s
              --in-flight N[,N...]    jobs outstanding per step of --saturate (default 100,200,400,800,1600)
              --duration D            measured time (default 60s; --saturate: per step, default 20s);
                                      D is 90s, 2m, 500ms or seconds
              --warmup D              load before the measured time, excluded from the figures (default 10s)
              --drain D               after the last send, how long to wait for outstanding grants (default 60s)
              --tenants N             tenants submissions rotate over (default 8; embedded stack only)
              --nodes N               simulated nodes (default 64, --saturate 256; embedded stack only)
              --gpus-per-node N       H100s per simulated node (default 8)
              --job-gpus N            GPUs each job asks for (default 1)
              --run-seconds N         how long each job runs on the simulated backend (default 2, --saturate 1);
                                      rate x run time must stay well below the GPUs, or jobs wait for capacity
              --service-heap SIZE     -Xmx of each service JVM (default 512m; embedded stack only)
              --jit quick|full        the service JVMs' JIT: quick = C1 only, as `gantry dev` starts them
                                      (default); full = both compilers, as the service images run (needs a
                                      longer --warmup: C2 compiles on the same cores)
              --heartbeat-timeout D   recovery's node timeout (default 30s; embedded stack only)
              --timeout D             HTTP request timeout (default 30s)
              --max-http N            open loop: requests in flight at most; beyond it a send counts as an error
                                      (default 4000)
              --out DIR               report directory (default loadtest/results/<UTC time>-<mode>)
              --table FILE|none       results table the run appends a row to (default loadtest/RESULTS.md)
              --keep-data             keep the embedded stack's data directory and logs
              --api URL --token T[,T...] --bootstrap HOST:PORT
                                      target a running stack instead of starting one
            """;

    /** Everything a run is told. */
    public record Options(boolean saturate, double rate, List<Integer> inFlight, Duration duration, Duration warmup,
                          Duration drain, int tenants, int nodes, int gpusPerNode, int jobGpus, int runSeconds,
                          String serviceHeap, String heartbeatTimeout, Duration httpTimeout, int maxHttp, Path out,
                          Path table, boolean keepData, String api, List<String> tokens, String bootstrap, Path repo,
                          String jit) {
        public boolean external() {
            return api != null;
        }

        public String modeLabel() {
            return saturate ? "saturate (closed loop, " + inFlight.stream().map(String::valueOf)
                    .collect(java.util.stream.Collectors.joining(" -> ")) + " in flight)"
                    : "open loop " + fmt(rate) + " jobs/s";
        }
    }

    /** What a run found; the report has the detail. */
    public record Result(int exitCode, long sentMeasured, long sent, long accepted, long placed, long lost, long duplicateGrants,
                         long errors, double grantedPerSecond, Path report, Path csv, int samples) {
    }

    public static void main(String[] args) {
        Path repo = Path.of(System.getProperty("gantry.repo", ".")).toAbsolutePath().normalize();
        Options o = parse(args, repo);
        try {
            Result r = run(o, System.out);
            System.exit(r.exitCode());
        } catch (Exception e) {
            System.err.println("[loadtest] failed: " + e);
            System.exit(1);
        }
    }

    public static Result run(Options o, PrintStream out) throws Exception {
        String startLoad = LoadReport.loadAverage();
        Instant startedAt = Instant.now();
        Stack stack;
        if (o.external()) {
            stack = new ExternalStack(o.api(), o.tokens(), o.bootstrap());
        } else {
            out.println("[loadtest] starting a fresh embedded stack (" + o.nodes() + " nodes x " + o.gpusPerNode()
                    + " GPUs, " + o.tenants() + " tenants) ...");
            System.setProperty(ServiceProcess.JIT_PROPERTY, o.jit());
            EmbeddedStack embedded = new EmbeddedStack(o.repo(), o.tenants(), o.nodes(), o.gpusPerNode(),
                    o.serviceHeap(), o.heartbeatTimeout(), o.keepData());
            stack = embedded;
            try {
                embedded.start();
            } catch (Exception e) {
                embedded.close();
                throw e;
            }
        }
        try (stack) {
            stack.awaitReady();
            Runner runner = new Runner(o, stack, out);
            Result r = runner.run(startLoad, startedAt);
            if (r.exitCode() != 0 && stack instanceof EmbeddedStack e) {
                e.markFailed();
            }
            return r;
        }
    }

    /** One run against one stack. */
    static final class Runner {
        private static final Pattern JOB_ID = Pattern.compile("\"jobId\"\\s*:\\s*\"([^\"]+)\"");

        private final Options o;
        private final Stack stack;
        private final PrintStream out;
        private final String runId = Long.toString(System.currentTimeMillis(), 36);
        private final HttpClient http;
        private final ExecutorService httpExecutor;
        private final JobLedger ledger;
        private final ConcurrentLinkedQueue<JobLedger.Job> jobs = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Long> recentPlaced = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Long> recentRest = new ConcurrentLinkedQueue<>();
        private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
        private final Map<String, AtomicLong> measuredErrors = new ConcurrentHashMap<>();
        private final AtomicLong sent = new AtomicLong();
        private final AtomicLong accepted = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private final AtomicLong httpOutstanding = new AtomicLong();
        private final AtomicLong placedRun = new AtomicLong();
        private final Semaphore permits;
        private final List<LoadReport.Sample> samples = new ArrayList<>();
        private volatile long t0;
        private volatile long warmEnd;
        private volatile long end;
        private final long nanos0 = System.nanoTime();
        private final long epoch0 = System.currentTimeMillis();

        Runner(Options o, Stack stack, PrintStream out) {
            this.o = o;
            this.stack = stack;
            this.out = out;
            AtomicInteger n = new AtomicInteger();
            this.httpExecutor = Executors.newFixedThreadPool(2, r -> {
                Thread t = new Thread(r, "lt-http-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(httpExecutor)
                    .connectTimeout(Duration.ofSeconds(5)).build();
            this.permits = new Semaphore(o.saturate() ? o.inFlight().get(0) : 0);
            this.ledger = new JobLedger((job, seen) -> {
                if (job.seq >= 0) {
                    placedRun.incrementAndGet();
                    recentPlaced.add(seen.grantNanos - job.scheduledNanos);
                    if (o.saturate()) {
                        permits.release();
                    }
                }
            });
        }

        Result run(String startLoad, Instant startedAt) throws Exception {
            ProcSampler procs = new ProcSampler(List.of("lt-", "HttpClient"));
            stack.register(procs);
            try (EventWatcher watcher = new EventWatcher(stack.bootstrap(), stack.kafkaClientSettings(), ledger);
                 LagSampler lag = new LagSampler(stack.bootstrap(), stack.kafkaClientSettings())) {
                watcher.start(Duration.ofSeconds(150));
                probe();
                BrokerSampler broker = new BrokerSampler(stack.bootstrap(), stack.kafkaClientSettings());
                broker.start();
                procs.sample();
                broker.sample();
                long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                t0 = start;
                warmEnd = start + o.warmup().toNanos();
                end = warmEnd + o.duration().toNanos() * (o.saturate() ? o.inFlight().size() : 1);
                out.printf("[loadtest] %s against %s: warm-up %ds, measured %ds%s%n", o.modeLabel(), stack.api(),
                        o.warmup().toSeconds(), o.duration().toSeconds(), o.saturate() ? " per step" : "");
                ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread t = new Thread(r, "lt-sampler");
                    t.setDaemon(true);
                    return t;
                });
                sampler.scheduleAtFixedRate(() -> sample(procs, lag, broker), 1000, 1000, TimeUnit.MILLISECONDS);
                try {
                    if (o.saturate()) {
                        closedLoop();
                    } else {
                        openLoop();
                    }
                    drain();
                } finally {
                    sampler.shutdown();
                    sampler.awaitTermination(10, TimeUnit.SECONDS);
                }
                String endLoad = LoadReport.loadAverage();
                LoadReport report = new LoadReport(o, stack.description(), startedAt, startLoad, endLoad,
                        new ArrayList<>(jobs), ledger, samples, errors, measuredErrors,
                        warmEnd, end, nanos0, epoch0, watcher.undecodable(), watcher.failure());
                Path dir = o.out() != null ? o.out() : o.repo().resolve("loadtest/results")
                        .resolve(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(startedAt)
                                + (o.saturate() ? "-saturate" : "-rate" + fmt(o.rate())));
                report.write(dir, o.table());
                out.println();
                out.print(report.summary());
                out.println("[loadtest] report: " + dir.resolve("report.md"));
                if (o.table() != null) {
                    out.println("[loadtest] results table: " + o.table());
                }
                return new Result(report.exitCode(), report.sentMeasured(), sent.get(), accepted.get(), placedRun.get(),
                        report.lost(), report.duplicates(), failed.get(), report.grantedPerSecond(),
                        dir.resolve("report.md"), dir.resolve("samples.csv"), samples.size());
            } finally {
                httpExecutor.shutdownNow();
            }
        }

        /** One job per tenant, each until granted: the stack is restored, JIT-warm enough to start the clock. */
        private void probe() throws InterruptedException {
            Instant deadline = Instant.now().plusSeconds(120);
            List<JobLedger.Job> probes = new ArrayList<>();
            for (int i = 0; i < stack.tokens().size(); i++) {
                String token = stack.tokens().get(i);
                while (true) {
                    JobLedger.Job job = ledger.newJob(-1 - i, System.nanoTime(), false);
                    try {
                        HttpResponse<String> r = http.send(request(token, "lt-" + runId + "-probe-" + i),
                                HttpResponse.BodyHandlers.ofString());
                        Matcher m = JOB_ID.matcher(r.body());
                        if (r.statusCode() / 100 == 2 && m.find()) {
                            ledger.accepted(job, m.group(1));
                            probes.add(job);
                            break;
                        }
                        if (r.statusCode() != 503 || Instant.now().isAfter(deadline)) {
                            throw new IllegalStateException("probe submission refused: HTTP " + r.statusCode() + " " + r.body());
                        }
                    } catch (IOException e) {
                        if (Instant.now().isAfter(deadline)) {
                            throw new IllegalStateException("admission does not answer: " + e);
                        }
                    }
                    TimeUnit.MILLISECONDS.sleep(500);
                }
            }
            while (probes.stream().anyMatch(j -> ledger.seen(j.jobId).grantNanos < 0)) {
                if (Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("probe jobs were not granted within 120 s: is the cluster big enough"
                            + " for --job-gpus " + o.jobGpus() + "?");
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
            out.println("[loadtest] probe: " + probes.size() + " jobs submitted and granted; starting");
        }

        private void openLoop() {
            long period = (long) (1e9 / o.rate());
            for (long i = 0; ; i++) {
                long due = t0 + i * period;
                if (due >= end) {
                    return;
                }
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                if (httpOutstanding.get() >= o.maxHttp()) {
                    JobLedger.Job job = ledger.newJob(i, due, due >= warmEnd);
                    jobs.add(job);
                    sent.incrementAndGet();
                    fail(job, "not sent: " + o.maxHttp() + " requests already in flight (--max-http)");
                    continue;
                }
                fire(i, due, due >= warmEnd);
            }
        }

        private void closedLoop() throws InterruptedException {
            int step = 0;
            for (long i = 0; System.nanoTime() < end; ) {
                int due = step(System.nanoTime());
                while (step < due) {
                    step++;
                    permits.release(o.inFlight().get(step) - o.inFlight().get(step - 1));
                    out.println("[loadtest] step " + (step + 1) + ": " + o.inFlight().get(step) + " in flight");
                }
                if (!permits.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                long now = System.nanoTime();
                if (now >= end) {
                    return;
                }
                fire(i++, now, now >= warmEnd);
            }
        }

        /** The step of --saturate a time falls in (the warm-up runs at the first step's window). */
        private int step(long nanos) {
            if (nanos < warmEnd) {
                return 0;
            }
            return (int) Math.min(o.inFlight().size() - 1, (nanos - warmEnd) / o.duration().toNanos());
        }

        private HttpRequest request(String token, String name) {
            String body = """
                    {"name":"%s","priority":0,"tasks":[{"name":"w","replicas":1,"command":["true"],"gpus":%d,"runSeconds":%d}]}"""
                    .formatted(name, o.jobGpus(), o.runSeconds());
            return HttpRequest.newBuilder(URI.create(stack.api() + "/v1/jobs"))
                    .header("Authorization", "Bearer " + token)
                    .header("Content-Type", "application/json")
                    .timeout(o.httpTimeout())
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        }

        private void fire(long seq, long due, boolean measured) {
            JobLedger.Job job = ledger.newJob(seq, due, measured);
            jobs.add(job);
            sent.incrementAndGet();
            httpOutstanding.incrementAndGet();
            String token = stack.tokens().get((int) (seq % stack.tokens().size()));
            http.sendAsync(request(token, "lt-" + runId + "-" + seq), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((r, ex) -> {
                        long now = System.nanoTime();
                        httpOutstanding.decrementAndGet();
                        job.responseNanos = now;
                        if (ex != null) {
                            fail(job, kind(ex));
                            return;
                        }
                        job.status = r.statusCode();
                        Matcher m = JOB_ID.matcher(r.body() == null ? "" : r.body());
                        if (r.statusCode() / 100 != 2) {
                            fail(job, "HTTP " + r.statusCode());
                        } else if (!m.find()) {
                            fail(job, "HTTP " + r.statusCode() + " without a jobId");
                        } else {
                            accepted.incrementAndGet();
                            recentRest.add(now - due);
                            ledger.accepted(job, m.group(1));
                        }
                    });
        }

        private void fail(JobLedger.Job job, String kind) {
            job.error = kind;
            failed.incrementAndGet();
            errors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
            if (job.measured) {
                measuredErrors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
            }
            if (o.saturate()) {
                permits.release();
            }
        }

        private static String kind(Throwable ex) {
            Throwable t = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
            if (t instanceof HttpTimeoutException) {
                return "timeout (" + t.getClass().getSimpleName() + ")";
            }
            if (t instanceof ConnectException) {
                return "connection refused";
            }
            return t.getClass().getSimpleName();
        }

        private void drain() throws InterruptedException {
            long httpDeadline = System.nanoTime() + o.httpTimeout().toNanos() + TimeUnit.SECONDS.toNanos(5);
            while (httpOutstanding.get() > 0 && System.nanoTime() < httpDeadline) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            long deadline = System.nanoTime() + o.drain().toNanos();
            while (placedRun.get() < accepted.get() && System.nanoTime() < deadline) {
                TimeUnit.MILLISECONDS.sleep(50);
            }
            TimeUnit.MILLISECONDS.sleep(1100); // one more sample after the last grant
        }

        private long lastPlaced;
        private long lastSent;

        private void sample(ProcSampler procs, LagSampler lagSampler, BrokerSampler broker) {
            try {
                long now = System.nanoTime();
                String phase = now < warmEnd ? "warmup" : now < end ? "measure" : "drain";
                long placed = placedRun.get();
                long s = sent.get();
                Map<String, Double> v = new LinkedHashMap<>();
                v.put("sent", (double) s);
                v.put("sent_per_s", (double) (s - lastSent));
                v.put("accepted", (double) accepted.get());
                v.put("errors", (double) failed.get());
                v.put("granted", (double) placed);
                v.put("granted_per_s", (double) (placed - lastPlaced));
                v.put("in_flight", (double) (accepted.get() - placed + httpOutstanding.get()));
                lastPlaced = placed;
                lastSent = s;
                List<Long> lat = drainQueue(recentPlaced);
                List<Long> rest = drainQueue(recentRest);
                Percentiles p = Percentiles.of(lat);
                Percentiles pr = Percentiles.of(rest);
                v.put("placed_p50_ms", p.count() == 0 ? Double.NaN : p.at(0.50) / 1e6);
                v.put("placed_p99_ms", p.count() == 0 ? Double.NaN : p.at(0.99) / 1e6);
                v.put("rest_p99_ms", pr.count() == 0 ? Double.NaN : pr.at(0.99) / 1e6);
                broker.sample().forEach(v::put);
                Map<String, Long> lag = lagSampler.sample();
                lag.forEach((k, x) -> v.put("lag " + k, (double) x));
                Map<String, ProcSampler.Usage> usage = procs.sample();
                usage.forEach((k, u) -> {
                    v.put("cpu% " + k, u.cpuPercent());
                    if (ProcSampler.isProcess(k)) {
                        v.put("rss_mib " + k, u.rssMiB());
                    }
                });
                v.put("loadavg_1m", Double.parseDouble(LoadReport.loadAverage().split(" ")[0].replace("unknown", "NaN")));
                double t = (now - t0) / 1e9;
                synchronized (samples) {
                    samples.add(new LoadReport.Sample(t, phase, v));
                }
                out.println(progress(t, phase, v, lag, usage));
            } catch (RuntimeException e) {
                out.println("[loadtest] sampling failed: " + e);
            }
        }

        private static String progress(double t, String phase, Map<String, Double> v, Map<String, Long> lag,
                                       Map<String, ProcSampler.Usage> usage) {
            StringBuilder b = new StringBuilder();
            b.append(String.format(Locale.ROOT, "[loadtest] %4.0fs %-7s sent %6.0f (+%3.0f) ok %6.0f err %4.0f granted %6.0f (+%3.0f)"
                            + " in-flight %5.0f placed p99 %s rest p99 %s", t, phase, v.get("sent"), v.get("sent_per_s"),
                    v.get("accepted"), v.get("errors"), v.get("granted"), v.get("granted_per_s"), v.get("in_flight"),
                    ms(v.get("placed_p99_ms")), ms(v.get("rest_p99_ms"))));
            long other = 0;
            for (Map.Entry<String, Long> e : lag.entrySet()) {
                if (!e.getKey().equals("gantry-queue admission.job-events")
                        && !e.getKey().equals("gantry-placement queue.job-events")) {
                    other = Math.max(other, e.getValue());
                }
            }
            b.append(" lag queue<admission ").append(lag.getOrDefault("gantry-queue admission.job-events", -1L))
                    .append(" placement<queue ").append(lag.getOrDefault("gantry-placement queue.job-events", -1L))
                    .append(" others max ").append(other);
            StringBuilder cpu = new StringBuilder();
            usage.forEach((k, u) -> {
                if (DevCluster.SERVICES.contains(k)) {
                    cpu.append(' ').append(k, 0, 3).append(' ').append(Math.round(u.cpuPercent())).append('%');
                }
            });
            if (!cpu.isEmpty()) {
                b.append(" cpu").append(cpu);
            }
            ProcSampler.Usage machine = usage.get(ProcSampler.MACHINE);
            if (machine != null) {
                b.append(" machine ").append(Math.round(machine.cpuPercent())).append('%');
            }
            return b.toString();
        }

        private static String ms(Double v) {
            return v == null || v.isNaN() ? "-" : String.format(Locale.ROOT, "%.0fms", v);
        }

        private static List<Long> drainQueue(ConcurrentLinkedQueue<Long> q) {
            List<Long> out = new ArrayList<>();
            Long x;
            while ((x = q.poll()) != null) {
                out.add(x);
            }
            return out;
        }
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    static Options parse(String[] args, Path repo) {
        List<String> known = List.of("rate", "in-flight", "duration", "warmup", "drain", "tenants", "nodes",
                "gpus-per-node", "job-gpus", "run-seconds", "service-heap", "heartbeat-timeout", "timeout", "max-http",
                "out", "table", "api", "token", "bootstrap", "jit");
        Map<String, String> opts = CliArgs.parse(args, 0, known, List.of("saturate", "keep-data"), USAGE,
                LoadTest::usage);
        boolean saturate = opts.remove("saturate") != null;
        boolean keepData = opts.remove("keep-data") != null;
        if (saturate && opts.containsKey("rate")) {
            usage("--rate and --saturate exclude each other");
        }
        boolean external = opts.containsKey("api") || opts.containsKey("token") || opts.containsKey("bootstrap");
        if (external && !(opts.containsKey("api") && opts.containsKey("token") && opts.containsKey("bootstrap"))) {
            usage("--api, --token and --bootstrap go together");
        }
        double rate = number(opts, "rate", 100);
        if (rate <= 0) {
            usage("--rate must be positive");
        }
        String table = opts.getOrDefault("table", repo.resolve("loadtest/RESULTS.md").toString());
        List<Integer> steps = new ArrayList<>();
        for (String n : opts.getOrDefault("in-flight", "100,200,400,800,1600").split(",")) {
            if (!n.trim().matches("\\d{1,6}") || Integer.parseInt(n.trim()) == 0) {
                usage("--in-flight must be positive numbers, comma separated");
            }
            steps.add(Integer.parseInt(n.trim()));
        }
        for (int i = 1; i < steps.size(); i++) {
            if (steps.get(i) < steps.get(i - 1)) {
                usage("--in-flight steps must not go down");
            }
        }
        return new Options(saturate, rate, List.copyOf(steps),
                duration(opts, "duration", saturate ? "20s" : "60s"), duration(opts, "warmup", "10s"), duration(opts, "drain", "60s"),
                (int) number(opts, "tenants", 8), (int) number(opts, "nodes", saturate ? 256 : 64),
                (int) number(opts, "gpus-per-node", 8), (int) number(opts, "job-gpus", 1),
                (int) number(opts, "run-seconds", saturate ? 1 : 2),
                opts.getOrDefault("service-heap", "512m"), opts.getOrDefault("heartbeat-timeout", "30s"),
                duration(opts, "timeout", "30s"), (int) number(opts, "max-http", 4000),
                opts.containsKey("out") ? Path.of(opts.get("out")).toAbsolutePath() : null,
                table.equals("none") ? null : Path.of(table).toAbsolutePath(), keepData,
                opts.get("api"), opts.containsKey("token") ? List.of(opts.get("token").split(",")) : List.of(),
                opts.get("bootstrap"), repo, jit(opts));
    }

    private static String jit(Map<String, String> opts) {
        String jit = opts.getOrDefault("jit", "quick");
        if (!jit.equals(ServiceProcess.FULL_JIT) && !jit.equals("quick")) {
            usage("--jit must be full or quick");
        }
        return jit;
    }

    private static double number(Map<String, String> opts, String key, double dflt) {
        String v = opts.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.matches("\\d+(\\.\\d+)?")) {
            usage("--" + key + " must be a number");
        }
        return Double.parseDouble(v);
    }

    static Duration duration(Map<String, String> opts, String key, String dflt) {
        String v = opts.getOrDefault(key, dflt).trim();
        Matcher m = Pattern.compile("(\\d+)(ms|s|m)?").matcher(v);
        if (!m.matches()) {
            usage("--" + key + " must be like 90s, 2m, 500ms or a number of seconds");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofSeconds(n);
        };
    }

    private static void usage(String message) {
        System.err.println("gantry loadtest: " + message);
        System.err.print(USAGE);
        System.exit(2);
    }
}
