package io.gantry.queue.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Invariants over random histories of submissions, placement answers, failures and recoveries. */
class QueueCoreProperties {
    private static final String[] TENANTS = {"a", "b", "c"};
    private static final Quotas QUOTAS = Quotas.ofGpus(8, Map.of("b", 16, "c", 4));

    enum Kind { SUBMIT, CANCEL, GRANT, DEFER, SUCCEED, FAIL, RELEASE, NODE_FAILED, REQUEUE, ABANDON, CAPACITY }

    /** One random step; job and attempt are resolved against the core's state when it runs. */
    record Op(Kind kind, int job, int gpus, boolean currentAttempt) {
    }

    @Provide
    Arbitrary<List<Op>> histories() {
        Arbitrary<Op> op = Combinators.combine(
                Arbitraries.of(Kind.class),
                Arbitraries.integers().between(0, 9),
                Arbitraries.integers().between(0, 20),
                Arbitraries.integers().between(0, 9).map(i -> i < 8)).as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(80);
    }

    /** Whole GPUs, fractions and MIG instances alike: what a tenant reserves never exceeds its quota, in thousandths. */
    @Property(tries = 300)
    void reservedGpusNeverExceedATenantsQuota(@ForAll("histories") List<Op> history) {
        QueueCore core = new QueueCore(FairShareConfig.implicit(QUOTAS));
        for (Op op : history) {
            run(core, op);
            for (String tenant : TENANTS) {
                assertThat(core.reservedMilli(tenant)).as("reserved thousandths of a GPU of %s", tenant)
                        .isLessThanOrEqualTo(QUOTAS.of(tenant));
            }
        }
    }

    @Property(tries = 300)
    void replayingTheEmittedFactsIntoAFreshCoreGivesTheSameState(@ForAll("histories") List<Op> history) {
        QueueCore live = new QueueCore(FairShareConfig.implicit(QUOTAS));
        QueueCore replayed = new QueueCore(FairShareConfig.implicit(QUOTAS));
        Instant clock = Instant.EPOCH;
        for (Op op : history) {
            // the core's clock never goes back: its facts happen at the latest time it was given
            clock = timeOf(op).isAfter(clock) ? timeOf(op) : clock;
            Instant at = clock;
            run(live, op).forEach(f -> replayed.replay(f, at));
            assertThat(replayed.state()).isEqualTo(live.state());
        }
    }

    /**
     * A snapshot's rebuild: the memory of a core at any point of a history, then only the facts of the jobs live
     * there (each at its time), leaves the state, the memory (usage histories included) and the shares that
     * replaying every fact leaves; and both decide the same on everything that follows.
     */
    @Property(tries = 300)
    void theMemoryThenTheFactsOfTheLiveJobsRebuildWhatTheWholeHistoryDoes(@ForAll("histories") List<Op> history,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 80) int cut) {
        FairShareConfig config = FairShareConfig.implicit(QUOTAS, java.time.Duration.ofHours(1),
                java.time.Duration.ofMinutes(30));
        int at = Math.min(cut, history.size());
        QueueCore live = new QueueCore(config);
        List<QueueFact> facts = new ArrayList<>();
        List<Instant> times = new ArrayList<>();
        Instant clock = Instant.EPOCH;
        for (Op op : history.subList(0, at)) {
            clock = timeOf(op).isAfter(clock) ? timeOf(op) : clock;
            for (QueueFact f : run(live, op)) {
                facts.add(f);
                times.add(clock);
            }
        }
        QueueCore whole = new QueueCore(config);
        QueueCore rebuilt = new QueueCore(config);
        rebuilt.restoreMemory(live.memory());
        for (int i = 0; i < facts.size(); i++) {
            QueueFact f = facts.get(i);
            whole.replay(f, times.get(i));
            boolean reservation = f instanceof QueueFact.CapacityReservationRequested
                    || f instanceof QueueFact.CapacityReservationCancelled;
            if (live.live(f.jobId()) && !reservation) {
                rebuilt.replay(f, times.get(i));
            }
        }
        assertThat(rebuilt.state()).isEqualTo(whole.state());
        // the memory's clock is the live core's (its last input's time), the replay's its last fact's: the first
        // input after a start sets both to the time it is handled at
        assertThat(withoutClock(rebuilt.memory())).isEqualTo(withoutClock(whole.memory()));
        Instant later = clock.plusSeconds(1_800);
        assertThat(rebuilt.queues(later)).isEqualTo(whole.queues(later));
        assertThat(rebuilt.apply(new Input.Restored(), clock)).isEqualTo(whole.apply(new Input.Restored(), clock));
        for (Op op : history.subList(at, history.size())) {
            // time goes on from the start (a restart's inputs come at the wall clock, never before it)
            Instant now = timeOf(op).isAfter(clock) ? timeOf(op) : clock;
            assertThat(run(rebuilt, op, now)).isEqualTo(run(whole, op, now));
            clock = now;
        }
        assertThat(rebuilt.memory()).isEqualTo(whole.memory());
    }

    private static QueueMemory withoutClock(QueueMemory m) {
        return new QueueMemory(null, m.tenants(), m.finished(), m.usage(), m.capacityReservedFor());
    }

    @Property(tries = 200)
    void theSameInputsGiveTheSameFacts(@ForAll("histories") List<Op> history) {
        assertThat(runAll(history)).isEqualTo(runAll(history));
    }

    @Property(tries = 200)
    void aParkedJobIsDispatchedAtMostOncePerCapacityChange(@ForAll("histories") List<Op> history) {
        QueueCore core = new QueueCore(FairShareConfig.implicit(QUOTAS));
        for (Op op : history) {
            List<String> parkedBefore = new ArrayList<>();
            core.state().live().values().stream().filter(QueuedJob::parked).forEach(j -> parkedBefore.add(j.jobId()));
            List<QueueFact> facts = run(core, op);
            boolean capacityChange = op.kind() == Kind.CAPACITY || op.kind() == Kind.RELEASE
                    || op.kind() == Kind.NODE_FAILED;
            for (String jobId : parkedBefore) {
                long dispatched = facts.stream().filter(f -> f instanceof QueueFact.JobDispatched
                        && f.jobId().equals(jobId)).count();
                assertThat(dispatched).as("dispatches of parked %s", jobId).isLessThanOrEqualTo(capacityChange ? 1 : 0);
            }
        }
    }

    private static final String[] MIG = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};

    /** 0-12: whole GPUs; 13-16: a fraction of one GPU (230-920 thousandths); 17-20: a MIG instance. */
    static JobBuilder shape(JobBuilder job, int g) {
        if (g <= 12) {
            return job.gpus(g);
        }
        return g <= 16 ? job.fraction((g - 12) * 230) : job.mig(MIG[g - 17]);
    }

    private static List<QueueFact> runAll(List<Op> history) {
        QueueCore core = new QueueCore(FairShareConfig.implicit(QUOTAS));
        List<QueueFact> all = new ArrayList<>();
        history.forEach(op -> all.addAll(run(core, op)));
        return all;
    }

    /** When {@code op} happens (the facts it leads to are replayed at that time, as the service replays them). */
    private static Instant timeOf(Op op) {
        return JobBuilder.EPOCH.plusSeconds(op.job() * 10L + op.gpus());
    }

    private static List<QueueFact> run(QueueCore core, Op op) {
        return run(core, op, timeOf(op));
    }

    private static List<QueueFact> run(QueueCore core, Op op, Instant now) {
        String jobId = "j" + op.job();
        String tenant = TENANTS[op.job() % TENANTS.length];
        QueuedJob job = core.state().live().get(jobId);
        int attempt = job == null ? 1 : op.currentAttempt() ? job.attempt() : Math.max(1, job.attempt() - 1);
        Input input = switch (op.kind()) {
            // every third job retries its own failures (backoff 0, 10 or 20 s)
            case SUBMIT -> (op.job() % 3 == 0 ? shape(aJob(jobId).tenant(tenant), op.gpus()).retry(2, op.gpus() % 3 * 10L)
                    : shape(aJob(jobId).tenant(tenant), op.gpus())).submittedAt(op.gpus()).submitted();
            case CANCEL -> new Input.CancelRequested(jobId, tenant, tenant);
            case GRANT -> new Input.Granted(jobId, tenant, attempt);
            case DEFER -> new Input.Deferred(jobId, tenant, attempt, DeferralCause.INSUFFICIENT_FREE_GPUS, "no room " + op.gpus());
            case SUCCEED -> new Input.RunSucceeded(jobId, tenant, attempt);
            case FAIL -> new Input.RunFailed(jobId, tenant, attempt, "exit 1");
            case RELEASE -> new Input.Released(jobId, tenant, attempt, ReleaseCause.RUN_FAILED);
            case NODE_FAILED -> new Input.Released(jobId, tenant, attempt, ReleaseCause.NODE_FAILED);
            case REQUEUE -> new Input.Requeued(jobId, tenant, attempt, "again");
            case ABANDON -> new Input.RecoveryAbandoned(jobId, tenant, attempt, "limit");
            case CAPACITY -> new Input.CapacityChanged("node");
        };
        return core.apply(input, now);
    }

    @Property(tries = 50)
    void aTenantsJobsOfOneSizeAreDispatchedInSubmitOrderWhenEachRunsToCompletion(
            @ForAll @Size(min = 1, max = 12) List<@net.jqwik.api.constraints.IntRange(min = 1, max = 8) Integer> sizes,
            @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 8) int size) {
        List<Integer> gpus = sizes.stream().map(s -> size).toList();
        QueueCore core = new QueueCore(FairShareConfig.implicit(Quotas.uniform(8)));
        List<String> dispatched = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            core.apply(aJob(String.format("j%02d", i)).gpus(gpus.get(i)).submittedAt(i).submitted(), JobBuilder.EPOCH)
                    .stream().filter(f -> f instanceof QueueFact.JobDispatched).forEach(f -> dispatched.add(f.jobId()));
        }
        for (int i = 0; i < gpus.size(); i++) {
            String id = String.format("j%02d", i);
            core.apply(new Input.Released(id, "a", 1, ReleaseCause.RUN_SUCCEEDED), JobBuilder.EPOCH).stream()
                    .filter(f -> f instanceof QueueFact.JobDispatched).forEach(f -> dispatched.add(f.jobId()));
        }
        assertThat(dispatched).isSorted().hasSize(gpus.size());
    }
}
