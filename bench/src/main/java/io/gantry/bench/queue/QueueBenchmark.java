package io.gantry.bench.queue;

import io.gantry.queue.core.ReleaseCause;

import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.Input;
import io.gantry.queue.core.JobSpec;
import io.gantry.queue.core.QueueCore;
import io.gantry.queue.core.QueueFact;
import io.gantry.queue.core.TaskGroup;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The fair-share queue's pure core, single-threaded.
 *
 * <p>Setup: one cohort of {@code tenants} queues (weights 1-3), each with 8 GPUs nominal on each of {@code flavours}
 * GPU flavours, all of it held by running 8-GPU jobs, and {@code pending} queued jobs of 1, 2, 4 or 8 GPUs spread
 * over the tenants (with 4 flavours half of them name a model); half-life 7 days; no starvation reservations.
 *
 * <ul>
 *   <li>{@code fullCycle}: the restart cycle over every pending job (each gets its explanation re-derived; nothing
 *       fits, so nothing is written). Counter {@code decisions} = pending jobs decided per second.</li>
 *   <li>{@code drainCycle}: like fullCycle, but a tenth of the capacity was released first (without a cycle), so the
 *       cycle also admits jobs by DRF order. Counter {@code decisions} as above. The core is rebuilt before every
 *       call (not timed).</li>
 *   <li>{@code arrivalAndCancel}: one job arrives (it waits for quota), then it is cancelled: two events. Counter
 *       {@code events}.</li>
 *   <li>{@code completion}: the oldest running job succeeds and is released (two events); the freed GPUs admit the
 *       next jobs by DRF order, and as many new jobs arrive to keep the backlog steady (one event each). Counter
 *       {@code events}.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class QueueBenchmark {
    private static final int[] SIZES = {1, 2, 4, 8};

    @Param({"10", "100", "1000"})
    public int tenants;

    @Param({"1000", "10000", "100000"})
    public int pending;

    @Param({"1", "4"})
    public int flavours;

    private FairShareConfig config;
    private List<QueueFact> history;
    private QueueCore core;
    private QueueCore drainCore;
    private final Deque<String> running = new ArrayDeque<>();
    private final Map<String, String> tenantOf = new HashMap<>();
    private Random random;
    private Instant now;
    private long seq;

    @AuxCounters(AuxCounters.Type.EVENTS)
    @State(Scope.Thread)
    public static class Counters {
        public long decisions;
        public long events;
    }

    @Setup(Level.Trial)
    public void setUp() {
        random = new Random(42);
        now = Instant.parse("2026-01-01T00:00:00Z");
        Map<String, Object> doc = new LinkedHashMap<>();
        List<String> models = new ArrayList<>();
        for (int f = 0; f < flavours; f++) {
            models.add("G" + f);
        }
        doc.put("flavours", models);
        doc.put("halfLife", "7d");
        doc.put("starvationWait", "3650d");
        doc.put("cohorts", List.of(Map.of("name", "all")));
        List<Object> queues = new ArrayList<>();
        for (int t = 0; t < tenants; t++) {
            Map<String, Object> quotas = new LinkedHashMap<>();
            models.forEach(m -> quotas.put(m, Map.of("nominal", 8)));
            queues.add(Map.of("name", tenant(t), "tenant", tenant(t), "cohort", "all", "weight", 1 + t % 3,
                    "quotas", quotas));
        }
        doc.put("queues", queues);
        config = FairShareConfig.fromYaml(doc);

        history = new ArrayList<>();
        for (int t = 0; t < tenants; t++) {
            for (String m : models) {
                String id = "run-" + tenant(t) + "-" + m;
                JobSpec spec = spec(8, m);
                history.add(new QueueFact.JobQueued(id, tenant(t), 1, spec, now, spec.gangMilli()));
                history.add(new QueueFact.JobDispatched(id, tenant(t), 1, spec, spec.gangMilli()));
                running.add(id);
                tenantOf.put(id, tenant(t));
            }
        }
        for (int i = 0; i < pending; i++) {
            history.add(queued("p" + i, models));
        }
        core = build();
        now = now.plusSeconds(1);
        core.apply(new Input.Restored(), now); // writes every job's first explanation
        drainCore = null;
    }

    private QueueCore build() {
        QueueCore c = new QueueCore(config);
        Instant at = now;
        for (QueueFact f : history) {
            c.replay(f, at);
        }
        return c;
    }

    private QueueFact.JobQueued queued(String id, List<String> models) {
        String t = tenant(random.nextInt(tenants));
        int gpus = SIZES[random.nextInt(SIZES.length)];
        String model = models.size() > 1 && random.nextBoolean() ? models.get(random.nextInt(models.size())) : null;
        JobSpec s = spec(gpus, model);
        return new QueueFact.JobQueued(id, t, 1, s, now.minusSeconds(random.nextInt(86_400)), s.gangMilli());
    }

    private static String tenant(int t) {
        return String.format("t%04d", t);
    }

    private static JobSpec spec(int gpus, String model) {
        return new JobSpec("bench", 0, 3600L, List.of(new TaskGroup("worker", 1, gpus, model, 1000, 1024)));
    }

    private int track(List<QueueFact> facts) {
        int admitted = 0;
        for (QueueFact f : facts) {
            if (f instanceof QueueFact.JobDispatched d) {
                running.add(d.jobId());
                tenantOf.put(d.jobId(), d.tenant());
                admitted++;
            }
        }
        return admitted;
    }

    /** Running jobs the benchmark tracks (for checking the setup). */
    public int runningCount() {
        return running.size();
    }

    /** The core (for checking the setup). */
    public QueueCore core() {
        return core;
    }

    @Benchmark
    public List<QueueFact> fullCycle(Counters c) {
        now = now.plusMillis(1);
        c.decisions += pending;
        return core.apply(new Input.Restored(), now);
    }

    /** A core with a tenth of the running jobs released, for {@link #drainCycle}; rebuilt before every call. */
    @Setup(Level.Invocation)
    public void drainSetUp(org.openjdk.jmh.infra.BenchmarkParams params) {
        if (!params.getBenchmark().endsWith("drainCycle")) {
            return;
        }
        drainCore = build();
        int n = 0;
        for (String id : running) {
            if (n++ % 10 == 0) {
                drainCore.replay(new QueueFact.QuotaReleased(id, tenantOf.get(id), 1, 8_000, "RUN_SUCCEEDED"), now);
            }
        }
    }

    @Benchmark
    public List<QueueFact> drainCycle(Counters c) {
        c.decisions += pending;
        return drainCore.apply(new Input.Restored(), now.plusSeconds(1));
    }

    @Benchmark
    public int arrivalAndCancel(Counters c) {
        now = now.plusMillis(1);
        String id = "a" + seq++;
        String t = tenant(random.nextInt(tenants));
        int facts = core.apply(new Input.Submitted(id, t, spec(SIZES[random.nextInt(4)], null), now), now).size();
        facts += core.apply(new Input.CancelRequested(id, t, t), now).size();
        c.events += 2;
        return facts;
    }

    @Benchmark
    public int completion(Counters c) {
        now = now.plusMillis(1);
        String done = running.poll();
        String t = tenantOf.remove(done);
        core.apply(new Input.RunSucceeded(done, t, 1), now);
        int admitted = track(core.apply(new Input.Released(done, t, 1, ReleaseCause.RUN_SUCCEEDED), now));
        c.events += 2;
        List<String> models = config.flavours();
        for (int i = 0; i < admitted; i++) {
            // a new arrival can be admitted at once when the freed GPUs were not all used: that counts too
            QueueFact.JobQueued q = queued("n" + seq++, models);
            admitted += track(core.apply(new Input.Submitted(q.jobId(), q.tenant(), q.spec(), q.submittedAt()), now));
            c.events++;
        }
        return admitted;
    }
}
