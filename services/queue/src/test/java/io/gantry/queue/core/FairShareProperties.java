package io.gantry.queue.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Invariants of the fair-share queue over random histories in a nested cohort tree with every kind of limit. */
class FairShareProperties {
    private static final FairShareConfig CONFIG = tree().build();
    /** A tight cohort (small quotas, a short minimum run time) so that random histories preempt often. */
    private static final FairShareConfig EAGER = aConfig().flavours("H100", "A100").halfLife("10m")
            .starvationWait("60s").classes("normal", 0, "high", 10).cohort("research")
            .queue(aQueue("vision").cohort("research").quota("H100", 4, 4L, null).quota("A100", 2))
            .queue(aQueue("nlp").cohort("research").quota("H100", 4, null, 2L).quota("A100", 2))
            .queue(aQueue("nlp-batch").tenant("nlp").cohort("research").quota("H100", 0, 4L, null).quota("A100", 0))
            .queue(aQueue("speech").cohort("research").quota("H100", 2).quota("A100", 2))
            .queue(aQueue("solo").quota("H100", 4))
            .set("preemption", Map.of("minRunTime", "30s"))
            // service levels and the floor under preemption by them in GPU-seconds these histories reach
            .set("ordering", Map.of("levels", List.of(0.01), "preemptAfter", 0.02)).build();

    private static ConfigBuilder tree() {
        return aConfig().flavours("H100", "A100").halfLife("10m")
            .starvationWait("60s").classes("normal", 0, "high", 10)
            .cohort("org").cohort("research", "org")
            .queue(aQueue("vision").cohort("research").quota("H100", 8, 4L, 4L).quota("A100", 4)
                    .quota("cpu", 16000))
            .queue(aQueue("nlp").cohort("research").quota("H100", 8, null, 2L).quota("A100", 4, 2L, null))
            .queue(aQueue("nlp-batch").tenant("nlp").cohort("org").quota("H100", 0, 6L, null).quota("A100", 0))
            .queue(aQueue("speech").cohort("org").quota("H100", 4).quota("A100", 8, null, 8L))
            .queue(aQueue("solo").quota("H100", 2.5));
    }
    private static final String[] TENANTS = {"vision", "nlp", "speech", "solo"};
    private static final String[] MODELS = {null, null, "H100", "A100", "V100"};

    enum Kind { SUBMIT, GRANT, DEFER, FINISH, RELEASE, NODE_FAILED, REQUEUE, CANCEL, CAPACITY, PREEMPTED, TICK, CHECKPOINT }

    /** One random step; job and attempt are resolved against the core's state when it runs. */
    record Op(Kind kind, int job, int gpus, int variant, int seconds) {
    }

    @Provide
    Arbitrary<List<Op>> histories() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(Kind.SUBMIT, Kind.SUBMIT, Kind.SUBMIT,
                        Kind.GRANT, Kind.DEFER, Kind.FINISH, Kind.RELEASE, Kind.RELEASE, Kind.NODE_FAILED, Kind.REQUEUE,
                        Kind.CANCEL, Kind.CAPACITY, Kind.PREEMPTED, Kind.TICK, Kind.TICK),
                Arbitraries.integers().between(0, 14),
                Arbitraries.integers().between(0, 10), Arbitraries.integers().between(0, 99),
                Arbitraries.integers().between(0, 120)).as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(120);
    }

    /** Histories of small jobs competing for the tight cohort: many are admitted, many wait, runs age. */
    @Provide
    Arbitrary<List<Op>> contested() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(Kind.SUBMIT, Kind.SUBMIT, Kind.SUBMIT, Kind.SUBMIT,
                        Kind.GRANT, Kind.FINISH, Kind.RELEASE, Kind.PREEMPTED, Kind.PREEMPTED, Kind.TICK, Kind.TICK,
                        Kind.CANCEL, Kind.CHECKPOINT, Kind.CHECKPOINT), Arbitraries.integers().between(0, 14),
                Arbitraries.integers().between(1, 3), Arbitraries.integers().between(0, 99),
                Arbitraries.integers().between(0, 40)).as(Op::new);
        return op.list().ofMinSize(60).ofMaxSize(150);
    }

    /** Drives a core and remembers every fact with its time, as the topic would. */
    static final class Run {
        final FairShareConfig config;
        final QueueCore core;
        final List<QueueFact> facts = new ArrayList<>();
        final List<Instant> times = new ArrayList<>();
        Instant now = JobBuilder.EPOCH;

        Run(FairShareConfig config) {
            this.config = config;
            this.core = new QueueCore(config);
        }

        Run() {
            this(CONFIG);
        }

        List<QueueFact> step(Op op) {
            now = now.plusSeconds(op.seconds());
            String jobId = "j" + op.job();
            String tenant = TENANTS[op.job() % TENANTS.length];
            QueuedJob job = core.state().live().get(jobId);
            int attempt = job == null ? 1 : job.attempt();
            Input input = switch (op.kind()) {
                case SUBMIT -> {
                    JobBuilder b = aJob(jobId).tenant(tenant).gang(1 + op.variant() % 2, op.gpus())
                            .submittedAt(now.getEpochSecond() - JobBuilder.EPOCH.getEpochSecond())
                            .model(MODELS[op.variant() % MODELS.length]).cpu(1000 * (op.variant() % 5), 64);
                    if (op.variant() % 3 == 0) {
                        b.timeLimit(60L + op.variant() * 10L);
                    }
                    // shares are charged what they are: fractions and MIG instances among whole-GPU gangs
                    if (op.variant() % 6 == 4) {
                        b.fraction(125 * (1 + op.gpus() % 7));
                    } else if (op.variant() % 6 == 5) {
                        b.mig(op.gpus() % 2 == 0 ? "3g.40gb" : "1g.10gb");
                    }
                    if (op.variant() % 7 == 0) {
                        b.priorityClass("high");
                    }
                    if (tenant.equals("nlp") && op.variant() % 4 == 1) {
                        b.queue("nlp-batch");
                    }
                    yield b.submitted();
                }
                case GRANT -> new Input.Granted(jobId, tenant, attempt);
                case DEFER -> new Input.Deferred(jobId, tenant, attempt, DeferralCause.INSUFFICIENT_FREE_GPUS, "no room");
                case FINISH -> new Input.RunSucceeded(jobId, tenant, attempt);
                case RELEASE -> new Input.Released(jobId, tenant, attempt, ReleaseCause.RUN_SUCCEEDED);
                case NODE_FAILED -> new Input.Released(jobId, tenant, attempt, ReleaseCause.NODE_FAILED);
                case REQUEUE -> new Input.Requeued(jobId, tenant, attempt, "again");
                case CANCEL -> new Input.CancelRequested(jobId, tenant, tenant);
                case CAPACITY -> new Input.CapacityChanged("node");
                case PREEMPTED -> new Input.Released(jobId, tenant, attempt, ReleaseCause.PREEMPTED);
                case CHECKPOINT -> new Input.CheckpointCommitted(jobId, tenant, attempt, op.variant(),
                        "/ckpt/" + jobId + "/" + op.variant(), now);
                case TICK -> new Input.Tick(op.variant() % 10 == 0);
            };
            List<QueueFact> out = core.apply(input, now);
            facts.addAll(out);
            out.forEach(f -> times.add(now));
            return out;
        }

        QueueCore replayed() {
            QueueCore fresh = new QueueCore(config);
            for (int i = 0; i < facts.size(); i++) {
                fresh.replay(facts.get(i), times.get(i));
            }
            return fresh;
        }
    }

    private static String root(String cohort) {
        String at = cohort;
        while (at != null && CONFIG.cohorts().get(at) != null) {
            at = CONFIG.cohorts().get(at);
        }
        return at;
    }

    @Property(tries = 300)
    void noQueueEverUsesMoreThanItsNominalPlusItsBorrowingLimit(@ForAll("histories") List<Op> history) {
        Run run = new Run();
        List<String> resources = CONFIG.resources();
        for (Op op : history) {
            run.step(op);
            Map<String, List<Long>> usage = run.core.state().usage();
            for (FairShareConfig.QueueDef q : CONFIG.queues()) {
                q.quotas().forEach((resource, quota) -> {
                    long used = usage.get(q.name()).get(resources.indexOf(resource));
                    long limit = q.cohort() == null ? quota.nominal()
                            : quota.borrowingLimit() == null ? Long.MAX_VALUE : quota.nominal() + quota.borrowingLimit();
                    assertThat(used).as("%s uses of %s", q.name(), resource).isLessThanOrEqualTo(limit);
                });
            }
        }
    }

    @Property(tries = 300)
    void othersNeverUseMoreOfAQueuesNominalThanItsLendingLimit(@ForAll("histories") List<Op> history) {
        Run run = new Run();
        List<String> resources = CONFIG.resources();
        for (Op op : history) {
            run.step(op);
            Map<String, List<Long>> usage = run.core.state().usage();
            for (FairShareConfig.QueueDef q : CONFIG.queues()) {
                if (q.cohort() == null) {
                    continue;
                }
                q.quotas().forEach((resource, quota) -> {
                    int r = resources.indexOf(resource);
                    long othersUse = 0;
                    long othersNominal = 0;
                    for (FairShareConfig.QueueDef o : CONFIG.queues()) {
                        if (o != q && o.cohort() != null && root(o.cohort()).equals(root(q.cohort()))) {
                            othersUse += usage.get(o.name()).get(r);
                            FairShareConfig.ResourceQuota oq = o.quotas().get(resource);
                            othersNominal += oq == null ? 0 : oq.nominal();
                        }
                    }
                    long lendable = quota.lendingLimit() == null ? quota.nominal() : quota.lendingLimit();
                    assertThat(othersUse).as("the others' use of %s around %s", resource, q.name())
                            .isLessThanOrEqualTo(othersNominal + lendable);
                });
            }
        }
    }

    @Property(tries = 200)
    void replayingTheEmittedFactsAtTheirTimesGivesTheSameState(@ForAll("histories") List<Op> history) {
        Run run = new Run();
        for (Op op : history) {
            run.step(op);
        }
        QueueCore replayed = run.replayed();
        assertThat(replayed.state()).isEqualTo(run.core.state());
        // and, after the restore cycle the adapter always runs, the rebuilt core decides as the live one does
        Instant later = run.now.plusSeconds(5);
        assertThat(replayed.apply(new Input.Restored(), later)).isEqualTo(run.core.apply(new Input.Restored(), later));
        assertThat(replayed.apply(new Input.CapacityChanged("node"), later.plusSeconds(90)))
                .isEqualTo(run.core.apply(new Input.CapacityChanged("node"), later.plusSeconds(90)));
    }

    /**
     * The incremental cycles leave nothing admissible behind: a full cycle over every queue, at the same time, right
     * after any step and the tick that follows it finds nothing more to dispatch. (What time alone makes possible,
     * such as a preemption once a run has run its minimum time, is decided at ticks; the service ticks every second.)
     */
    @Property(tries = 200)
    void afterEveryInputAFullCycleFindsNothingMoreToDispatch(@ForAll("histories") List<Op> history) {
        Run run = new Run();
        for (Op op : history) {
            run.step(op);
            run.step(new Op(Kind.TICK, 0, 0, 1, 0));
            QueueCore copy = run.replayed();
            assertThat(copy.apply(new Input.Restored(), run.now)).as("after %s", op)
                    .noneMatch(f -> f instanceof QueueFact.JobDispatched);
        }
    }

    /** A history jqwik found (shrunk): the full cycle after the last step dispatched j1 where the live one had not. */
    @Example
    void afterARequeueAFullCycleFindsNothingMoreToDispatch() {
        Op blank = new Op(Kind.SUBMIT, 0, 0, 0, 0); // the op jqwik shrank most steps to
        List<Op> ops = new ArrayList<>();
        ops.add(new Op(Kind.SUBMIT, 2, 1, 0, 0));
        ops.addAll(Collections.nCopies(5, blank));
        ops.add(new Op(Kind.SUBMIT, 5, 5, 55, 0));
        ops.addAll(Collections.nCopies(5, blank));
        ops.add(new Op(Kind.SUBMIT, 4, 10, 2, 0));
        ops.addAll(Collections.nCopies(4, blank));
        ops.add(new Op(Kind.SUBMIT, 1, 1, 0, 0));
        ops.addAll(Collections.nCopies(16, blank));
        ops.add(new Op(Kind.DEFER, 1, 0, 0, 0));
        ops.addAll(Collections.nCopies(6, blank));
        ops.add(new Op(Kind.SUBMIT, 0, 10, 0, 0));
        ops.add(new Op(Kind.SUBMIT, 2, 1, 99, 0));
        ops.add(new Op(Kind.RELEASE, 6, 9, 0, 102));
        ops.add(new Op(Kind.SUBMIT, 3, 2, 13, 108));
        ops.add(new Op(Kind.TICK, 3, 6, 23, 93));
        ops.add(new Op(Kind.TICK, 0, 4, 29, 8));
        ops.add(new Op(Kind.GRANT, 2, 9, 63, 13));
        ops.add(new Op(Kind.DEFER, 8, 5, 14, 20));
        ops.add(new Op(Kind.DEFER, 12, 7, 74, 116));
        ops.add(new Op(Kind.FINISH, 10, 7, 18, 0));
        ops.add(new Op(Kind.PREEMPTED, 12, 5, 0, 70));
        ops.add(new Op(Kind.TICK, 0, 9, 2, 0));
        ops.add(new Op(Kind.CAPACITY, 8, 5, 28, 27));
        ops.add(new Op(Kind.SUBMIT, 12, 0, 38, 94));
        ops.add(new Op(Kind.FINISH, 11, 6, 6, 33));
        ops.add(new Op(Kind.REQUEUE, 2, 5, 15, 97));
        afterEveryInputAFullCycleFindsNothingMoreToDispatch(ops);
    }

    /**
     * A run is only ever preempted for a job of higher priority (class, then job priority) in its own queue, or,
     * for reclaim, while its queue uses more than its nominal quota of the flavour it holds; and never before it ran
     * the minimum run time (30 s here).
     */
    @Property(tries = 300)
    void onlyLowerPriorityOrBorrowedUsageIsPreemptedAndNeverAYoungRun(@ForAll("contested") List<Op> history) {
        Run run = new Run(EAGER);
        List<String> resources = CONFIG.resources();
        Map<String, Instant> dispatchedAt = new HashMap<>();
        Map<String, JobSpec> dispatchedSpec = new HashMap<>();
        int preemptions = 0;
        int serviceLevel = 0;
        // a mirror that replays the facts one by one: its state is the state each decision was taken in
        QueueCore mirror = new QueueCore(EAGER);
        for (Op op : history) {
            List<QueueFact> out = run.step(op);
            for (QueueFact f : out) {
                if (f instanceof QueueFact.JobPreempted p) {
                    preemptions++;
                    QueueState at = mirror.state();
                    String key = p.jobId() + "#" + p.attempt();
                    assertThat(Duration.between(dispatchedAt.get(key), run.now)).as("age of %s", key)
                            .isGreaterThanOrEqualTo(Duration.ofSeconds(30));
                    QueuedJob victim = at.live().get(p.jobId());
                    QueuedJob preemptor = at.live().get(p.preemptorJobId());
                    String vq = queueOf(victim);
                    String pq = queueOf(preemptor);
                    if (p.reason() == PreemptionReason.PRIORITY) {
                        assertThat(vq).isEqualTo(pq);
                        int vc = classOf(victim);
                        int pc = classOf(preemptor);
                        assertThat(vc < pc || vc == pc && victim.spec().priority() < preemptor.spec().priority())
                                .as("%s preempted for %s by priority", p.jobId(), p.preemptorJobId()).isTrue();
                    } else if (p.reason() == PreemptionReason.SERVICE_LEVEL) {
                        // attained-service order (the default): same queue and priority, the victim past a level
                        // the preemptor has not reached
                        assertThat(vq).isEqualTo(pq);
                        assertThat(classOf(victim)).isEqualTo(classOf(preemptor));
                        assertThat(victim.spec().priority()).isEqualTo(preemptor.spec().priority());
                        long served = victim.attained() + victim.reservations().get(p.attempt())
                                * Duration.between(dispatchedAt.get(key), run.now).toMillis();
                        long firstLevel = EAGER.ordering().levels().get(0) * 1_000_000L;
                        assertThat(served).as("service of %s", key).isGreaterThanOrEqualTo(
                                Math.max(firstLevel, EAGER.ordering().preemptAfter() * 1_000_000L));
                        serviceLevel++;
                        assertThat(preemptor.attained()).as("service of %s", p.preemptorJobId()).isLessThan(served);
                    } else {
                        assertThat(p.reason()).isEqualTo(PreemptionReason.RECLAIM);
                        assertThat(vq).isNotEqualTo(pq);
                        JobSpec spec = dispatchedSpec.get(key);
                        String model = spec.tasks().get(0).gpuModel();
                        // (a MIG instance is not pinned to its flavour: only MIG-capable devices host one)
                        if (model != null) {
                            int r = resources.indexOf(model);
                            long nominal = EAGER.queues().stream().filter(q -> q.name().equals(vq)).findFirst()
                                    .map(q -> q.quotas().get(model)).map(FairShareConfig.ResourceQuota::nominal)
                                    .orElse(0L);
                            assertThat(at.usage().get(vq).get(r)).as("%s's use of %s when %s was preempted", vq,
                                    model, p.jobId()).isGreaterThan(nominal);
                        }
                    }
                }
                if (f instanceof QueueFact.JobDispatched d) {
                    dispatchedAt.put(d.jobId() + "#" + d.attempt(), run.now);
                    dispatchedSpec.put(d.jobId() + "#" + d.attempt(), d.spec());
                }
                mirror.replay(f, run.now);
            }
        }
        Statistics.label("preempted").collect(preemptions > 0);
        Statistics.label("by service level").collect(serviceLevel > 0);
        // the property must not hold vacuously: enough histories do preempt
        Statistics.label("preempted").coverage(c -> c.check(true).percentage(pct -> pct >= 5));
        Statistics.label("by service level").coverage(c -> c.check(true).percentage(pct -> pct >= 3));
    }

    private static String queueOf(QueuedJob job) {
        return job.spec().queue() != null ? job.spec().queue() : job.tenant();
    }

    private static int classOf(QueuedJob job) {
        return EAGER.priorityClasses().get(job.spec().priorityClass() == null ? EAGER.defaultPriorityClass()
                : job.spec().priorityClass());
    }

    @Property(tries = 200)
    void theSameInputsGiveTheSameDecisions(@ForAll("histories") List<Op> history) {
        Run a = new Run();
        Run b = new Run();
        history.forEach(a::step);
        history.forEach(b::step);
        assertThat(a.facts).isEqualTo(b.facts);
    }

    /**
     * Steady backlog: queues of random weights borrow a 120-GPU pool, every queue always has 1-GPU jobs waiting and
     * the oldest running job ends every 10 seconds. After many half-lives every queue's share of the pool is within
     * epsilon = 0.03 (3.6 GPUs) of weight / sum of weights.
     */
    @Property(tries = 15)
    void underSteadyBacklogWeightedSharesConvergeToTheWeights(
            @ForAll @Size(min = 2, max = 4) List<@IntRange(min = 1, max = 4) Integer> weights) {
        int capacity = 120;
        ConfigBuilder b = aConfig().flavours("H100").halfLife("10m").starvationWait("1000d").cohort("pool")
                .queue(aQueue("donor").cohort("pool").quota("H100", capacity));
        for (int i = 0; i < weights.size(); i++) {
            b.queue(aQueue("t" + i).cohort("pool").weight(weights.get(i)).quota("H100", 0));
        }
        QueueCore core = new QueueCore(b.build());
        Instant now = JobBuilder.EPOCH;
        Deque<String> running = new ArrayDeque<>();
        Map<String, Integer> submitted = new HashMap<>();
        Map<String, Integer> dispatched = new HashMap<>();
        Map<String, Integer> allocation = new HashMap<>();
        for (int step = 0; step < 6000; step++) {
            now = now.plusSeconds(10);
            for (int i = 0; i < weights.size(); i++) {
                String t = "t" + i;
                while (submitted.getOrDefault(t, 0) - dispatched.getOrDefault(t, 0) < 3) {
                    int n = submitted.merge(t, 1, Integer::sum);
                    List<QueueFact> out = core.apply(aJob(t + "-" + n).tenant(t).gpus(1)
                            .submittedAt(now.getEpochSecond() - JobBuilder.EPOCH.getEpochSecond()).submitted(), now);
                    collect(out, running, allocation, dispatched);
                }
            }
            if (running.size() >= capacity) {
                String done = running.poll();
                String tenant = done.substring(0, done.indexOf('-'));
                allocation.merge(tenant, -1, Integer::sum);
                core.apply(new Input.RunSucceeded(done, tenant, 1), now);
                collect(core.apply(new Input.Released(done, tenant, 1, ReleaseCause.RUN_SUCCEEDED), now), running, allocation,
                        dispatched);
            }
        }
        double total = weights.stream().mapToInt(Integer::intValue).sum();
        for (int i = 0; i < weights.size(); i++) {
            double share = allocation.getOrDefault("t" + i, 0) / (double) capacity;
            assertThat(share).as("share of t%d (weight %d of %s)", i, weights.get(i), weights)
                    .isCloseTo(weights.get(i) / total, org.assertj.core.data.Offset.offset(0.03));
        }
    }

    private static void collect(List<QueueFact> facts, Deque<String> running, Map<String, Integer> allocation,
                                Map<String, Integer> dispatched) {
        for (QueueFact f : facts) {
            if (f instanceof QueueFact.JobDispatched d) {
                running.add(d.jobId());
                allocation.merge(d.tenant(), 1, Integer::sum);
                dispatched.merge(d.tenant(), 1, Integer::sum);
            }
        }
    }
}
