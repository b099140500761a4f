package io.gantry.queue.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Operator scenarios for the fair-share queue: cohorts, borrowing and lending, DRF, priority classes, backfill. */
class FairShareTest {

    record Case(String name, ConfigBuilder config, Consumer<QueueDriver> scenario, Consumer<QueueDriver> then) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static JobBuilder[] ones(String prefix, String tenant, int n, int firstSecond) {
        return IntStream.rangeClosed(1, n).mapToObj(i -> aJob(prefix + i).tenant(tenant).gpus(1)
                .submittedAt(firstSecond + i)).toArray(JobBuilder[]::new);
    }

    private static QueueFact[] queued(JobBuilder... jobs) {
        return Stream.of(jobs).map(JobBuilder::queued).toArray(QueueFact[]::new);
    }

    /** NVIDIA Saturn-V: one queue per team sharing the cluster, 8 GPUs nominal each. */
    private static ConfigBuilder saturn() {
        return aConfig().flavours("H100").cohort("saturn")
                .queue(aQueue("team-a").cohort("saturn").quota("H100", 8))
                .queue(aQueue("team-b").cohort("saturn").quota("H100", 8))
                .queue(aQueue("team-c").cohort("saturn").quota("H100", 8));
    }

    /** Kueue: two queues of 16 H100 in cohort research. */
    private static ConfigBuilder research(Long visionBorrowing, Long nlpLending) {
        return aConfig().flavours("H100").cohort("research")
                .queue(aQueue("vision").cohort("research").quota("H100", 16, visionBorrowing, null))
                .queue(aQueue("nlp").cohort("research").quota("H100", 16, null, nlpLending));
    }

    static Stream<Case> scenarios() {
        return Stream.of(
                new Case("Saturn-V: an idle team's quota is borrowed, and freed GPUs go to the teams with the "
                        + "lowest share, FIFO between equals", saturn(), q -> q
                        .submit(ones("a", "team-a", 24, 0))
                        .submit(ones("b", "team-b", 3, 30)).submit(ones("c", "team-c", 3, 33))
                        .submit(aJob("a25").tenant("team-a").gpus(1).submittedAt(36))
                        .finished("a1").finished("a2").finished("a3").finished("a4").finished("a5").finished("a6")
                        .finished("a7"),
                        q -> assertThat(q.dispatchOrder().subList(24, q.dispatchOrder().size()))
                                .containsExactly("b1", "c1", "b2", "c2", "b3", "c3", "a25")),
                new Case("Saturn-V: a team's big gang that does not fit does not block its small jobs behind it",
                        saturn(), q -> q
                        .submit(ones("a", "team-a", 24, 0))
                        .submit(aJob("gang").tenant("team-b").gang(2, 8).submittedAt(29))
                        .submit(ones("b", "team-b", 2, 30))
                        .finished("a1").finished("a2"),
                        q -> {
                            assertThat(q.dispatchOrder()).endsWith("b1", "b2").doesNotContain("gang");
                            assertThat(q.lastWait("gang").reason()).isEqualTo(WaitReason.QUOTA);
                            assertThat(q.lastWait("gang").message()).isEqualTo(
                                    "waiting for quota: cohort saturn needs 16 x H100, 0 free, 8 of its nominal 8 lent to "
                                            + "team-a");
                            assertThat(q.lastWait("gang").quotaWait()).isEqualTo(QuotaWait.NOMINAL_LENT);
                        }),
                new Case("Kueue: a queue borrows idle quota of its cohort only up to its borrowing limit",
                        research(4L, null), q -> q
                        .submit(IntStream.rangeClosed(1, 6).mapToObj(i -> aJob("v" + i).tenant("vision").gpus(4)
                                .submittedAt(i)).toArray(JobBuilder[]::new))
                        .submit(aJob("n1").tenant("nlp").gpus(12).submittedAt(10)),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("v1", "v2", "v3", "v4", "v5", "n1");
                            assertThat(q.lastWait("v6").message()).isEqualTo("waiting for quota: queue vision uses "
                                    + "20 H100 of nominal 16 + borrowing limit 4, job needs 4");
                            assertThat(q.lastWait("v6").quotaWait()).isEqualTo(QuotaWait.BORROWING_LIMIT);
                        }),
                new Case("Kueue: a lending limit keeps the rest of the lender's nominal for itself",
                        research(null, 8L), q -> q
                        .submit(IntStream.rangeClosed(1, 8).mapToObj(i -> aJob("v" + i).tenant("vision").gpus(4)
                                .submittedAt(i)).toArray(JobBuilder[]::new))
                        .submit(aJob("n1").tenant("nlp").gpus(8).submittedAt(10),
                                aJob("n2").tenant("nlp").gpus(4).submittedAt(11)),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("v1", "v2", "v3", "v4", "v5", "v6", "n1");
                            assertThat(q.lastWait("v7").message())
                                    .isEqualTo("waiting for quota: cohort research needs 4 x H100, 0 free");
                            assertThat(q.lastWait("n2").message()).isEqualTo("waiting for quota: cohort research "
                                    + "needs 4 x H100, 0 free, 8 of its nominal 16 lent to vision"); // what vision borrows
                            assertThat(Stream.of("v7", "n2").map(q::lastWait).map(QueueFact.JobWaiting::quotaWait))
                                    .containsExactly(QuotaWait.COHORT_FULL, QuotaWait.NOMINAL_LENT);
                        }),
                new Case("a job that names no model gets the first flavour with room, and placement is told which",
                        aConfig().flavours("H100", "A100").queue(aQueue("ml").quota("H100", 8).quota("A100", 8)),
                        q -> q.submit(aJob("x1").tenant("ml").gpus(8).submittedAt(1),
                                aJob("x2").tenant("ml").gpus(8).submittedAt(2),
                                aJob("x3").tenant("ml").gpus(4).model("A100").submittedAt(3),
                                aJob("x4").tenant("ml").gpus(0).submittedAt(4)),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("x1", "x2", "x4");
                            assertThat(q.dispatchedSpec("x1").tasks().get(0).gpuModel()).isEqualTo("H100");
                            assertThat(q.dispatchedSpec("x2").tasks().get(0).gpuModel()).isEqualTo("A100");
                            assertThat(q.dispatchedSpec("x4").tasks().get(0).gpuModel()).isNull();
                            assertThat(q.lastWait("x3").message())
                                    .isEqualTo("waiting for quota: queue ml uses 8 of 8 A100, job needs 4");
                        }),
                new Case("a job's list of acceptable models picks the first one its queue has quota for",
                        aConfig().flavours("H100", "A100").queue(aQueue("ml").quota("A100", 8)),
                        q -> q.submit(aJob("x1").tenant("ml").gpus(2).models("H100", "A100").submittedAt(1)),
                        q -> assertThat(q.dispatchedSpec("x1").tasks().get(0).gpuModel()).isEqualTo("A100")),
                new Case("a higher priority class goes first; JobSpec.priority breaks ties within a class",
                        aConfig().flavours("H100").classes("normal", 0, "high", 100)
                                .queue(aQueue("a").quota("H100", 4)), q -> q
                        .submit(aJob("a1").gpus(4).submittedAt(1), aJob("a2").gpus(4).submittedAt(2),
                                aJob("a3").gpus(4).priorityClass("high").submittedAt(3),
                                aJob("a4").gpus(4).priority(5).submittedAt(4))
                        .finished("a1").finished("a3").finished("a4"),
                        q -> assertThat(q.dispatchOrder()).containsExactly("a1", "a3", "a4", "a2")),
                new Case("a queue of weight 3 gets three times the GPUs of a queue of weight 1 under contention",
                        aConfig().flavours("H100").cohort("pool")
                                .queue(aQueue("donor").cohort("pool").quota("H100", 8))
                                .queue(aQueue("heavy").cohort("pool").weight(3).quota("H100", 0))
                                .queue(aQueue("light").cohort("pool").quota("H100", 0)), q -> q
                        .given(queued(ones("h", "heavy", 8, 0))).given(queued(ones("l", "light", 8, 10)))
                        .restored(),
                        q -> assertThat(q.dispatchOrder())
                                .containsExactly("h1", "l1", "h2", "h3", "h4", "l2", "h5", "h6")),
                new Case("jobs without a queue, with an unknown class or model, or too big, are told they never fit",
                        aConfig().flavours("H100").queue(aQueue("a").quota("H100", 8)), q -> q
                        .submit(aJob("z1").tenant("z").gpus(1), aJob("q1").queue("b").gpus(1),
                                aJob("c1").priorityClass("urgent").gpus(1), aJob("m1").model("V100").gpus(1),
                                aJob("big").gpus(40)),
                        q -> {
                            assertThat(q.dispatchOrder()).isEmpty();
                            assertThat(Stream.of("z1", "q1", "c1", "m1", "big").map(q::lastWait)
                                    .map(w -> w.reason() + ": " + w.message())).containsExactly(
                                    "NEVER_FITS: never fits: tenant z has no default queue 'z'",
                                    "NEVER_FITS: never fits: tenant a has no queue 'b'",
                                    "NEVER_FITS: never fits: unknown priority class 'urgent' (classes: normal)",
                                    "NEVER_FITS: never fits: queue a has no quota for GPU model(s) V100",
                                    "NEVER_FITS: never fits: job needs 40 x H100, queue a can get at most 8 "
                                            + "(nominal 8)");
                        }),
                new Case("a starving gang gets a reservation; backfill uses it only with jobs that end before "
                        + "the gang is due", aConfig().flavours("H100").starvationWait("10m")
                        .queue(aQueue("team").quota("H100", 8)), q -> q
                        .at(0).submit(aJob("r1").tenant("team").gpus(4).timeLimit(600).submittedAt(0),
                                aJob("r2").tenant("team").gpus(4).timeLimit(1200).submittedAt(0))
                        .at(10).submit(aJob("gang").tenant("team").gang(2, 4).submittedAt(10))
                        .at(20).submit(aJob("s1").tenant("team").gpus(2).submittedAt(20))
                        .at(700).finished("r1")
                        .at(710).submit(aJob("s2").tenant("team").gpus(2).timeLimit(300).submittedAt(710))
                        .at(720).submit(aJob("s3").tenant("team").gpus(2).timeLimit(600).submittedAt(720))
                        .at(1200).finished("r2")
                        .at(1300).finished("s2"),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("r1", "r2", "s2", "gang");
                            assertThat(q.all(QueueFact.JobWaiting.class, "gang")).extracting(QueueFact.JobWaiting::message)
                                    .anyMatch(m -> m.equals("reserved: waiting for quota: queue team uses 4 of 8 H100, "
                                            + "job needs 8 (est. 9 min)"));
                            assertThat(q.lastWait("s1").message()).isEqualTo("waiting for quota: queue team uses 8 of "
                                    + "8 H100, job needs 2");
                            assertThat(q.lastWait("s1").quotaWait()).isEqualTo(QuotaWait.OWN_QUOTA);
                            assertThat(q.all(QueueFact.JobWaiting.class, "gang")).extracting(QueueFact.JobWaiting::quotaWait)
                                    .contains(QuotaWait.STARVING);
                            assertThat(q.all(QueueFact.JobWaiting.class, "s3")).extracting(QueueFact.JobWaiting::quotaWait)
                                    .contains(QuotaWait.HELD_FOR_STARVING_JOB);
                            assertThat(q.all(QueueFact.JobWaiting.class, "s3")).extracting(QueueFact.JobWaiting::message)
                                    .anyMatch(m -> m.startsWith("waiting for quota: the free quota is reserved for "
                                            + "starving job gang"));
                        }),
                new Case("a starving gang's estimate counts only the runs with a time limit: known when they free "
                        + "enough",
                        aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 12)),
                        q -> q.at(0).submit(aJob("limited").tenant("team").gpus(4).timeLimit(1800).submittedAt(0),
                                        aJob("later").tenant("team").gpus(2).timeLimit(3600).submittedAt(0),
                                        aJob("open").tenant("team").gpus(4).submittedAt(0))
                                .at(10).submit(aJob("gang").tenant("team").gang(2, 2).submittedAt(10))
                                .at(700).submit(aJob("other").tenant("team").gpus(1).submittedAt(700)),
                        // needs 4 with 2 free: "limited" frees 4 at 1800 s ("later" is not needed, "open" never ends)
                        q -> assertThat(q.lastWait("gang").message()).isEqualTo("reserved: waiting for quota: "
                                + "queue team uses 10 of 12 H100, job needs 4 (est. 19 min)")),
                new Case("a starving gang that also waits for a run without a time limit has no estimate",
                        aConfig().flavours("H100").starvationWait("10m").queue(aQueue("team").quota("H100", 12)),
                        q -> q.at(0).submit(aJob("limited").tenant("team").gpus(4).timeLimit(1800).submittedAt(0),
                                        aJob("open").tenant("team").gpus(6).submittedAt(0))
                                .at(10).submit(aJob("gang").tenant("team").gang(2, 4).submittedAt(10))
                                .at(700).submit(aJob("other").tenant("team").gpus(1).submittedAt(700)),
                        // needs 8 with 2 free: "limited" frees only 4 by a known time
                        q -> assertThat(q.lastWait("gang").message()).isEqualTo("reserved: waiting for quota: "
                                + "queue team uses 10 of 12 H100, job needs 8 (no estimate: a running job it waits "
                                + "for has no time limit)")),
                new Case("a starving gang that must borrow does not hold back another queue's jobs within that "
                        + "queue's nominal quota; jobs that would borrow too still wait for it",
                        aConfig().flavours("H100").starvationWait("10m").cohort("pool")
                                .queue(aQueue("big").cohort("pool").quota("H100", 8))
                                .queue(aQueue("small").cohort("pool").quota("H100", 4))
                                .queue(aQueue("idle").cohort("pool").quota("H100", 8)), q -> q
                        .at(0).submit(aJob("r1").tenant("big").gpus(4).submittedAt(0),
                                aJob("r2").tenant("big").gpus(4).submittedAt(0),
                                aJob("s0").tenant("small").gpus(2).submittedAt(0))
                        .at(10).submit(aJob("gang").tenant("big").gang(3, 4).submittedAt(10))
                        .at(710).submit(aJob("own").tenant("small").gpus(2).submittedAt(710))
                        .at(720).submit(aJob("borrows").tenant("small").gpus(2).submittedAt(720)),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("r1", "r2", "s0", "own");
                            assertThat(q.lastWait("gang").message()).startsWith("reserved: waiting for quota");
                            assertThat(q.lastWait("borrows").message()).startsWith("waiting for quota: the free "
                                    + "quota is reserved for starving job gang");
                        }),
                new Case("without a configuration file every tenant has an implicit queue and any GPU model counts",
                        null, q -> q.submit(aJob("a1").gpus(30).model("H100"), aJob("a2").gpus(2).model("A100"),
                                aJob("a3").gpus(1)),
                        q -> {
                            assertThat(q.dispatchOrder()).containsExactly("a1", "a2");
                            assertThat(q.dispatchedSpec("a2").tasks().get(0).gpuModel()).isEqualTo("A100");
                            assertThat(q.lastWait("a3").message())
                                    .isEqualTo("waiting for quota: tenant a has 32 of 32 GPUs reserved, job needs 1");
                        }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void scenario(Case c) {
        QueueDriver q = c.config() == null ? QueueDriver.withQuota(32) : QueueDriver.with(c.config().build());
        c.scenario().accept(q);
        c.then().accept(q);
        assertThat(q.rebuilt().state()).as("state rebuilt from the facts").isEqualTo(q.core.state());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void theQueueViewShowsUsageBorrowingAndLending(Case c) {
        QueueDriver q = c.config() == null ? QueueDriver.withQuota(32) : QueueDriver.with(c.config().build());
        c.scenario().accept(q);
        for (QueueView v : q.core.queues(q.now())) {
            for (QueueView.FlavourView f : v.flavours()) {
                assertThat(f.borrowed()).as("%s %s borrowed", v.name(), f.flavour())
                        .isEqualTo(Math.max(0, f.used() - f.nominal()));
                assertThat(f.lent()).as("%s %s lent", v.name(), f.flavour()).isBetween(0L, f.nominal());
            }
        }
    }

    @org.junit.jupiter.api.Test
    void theLendingQueueShowsWhatItLentAndTheBorrowerWhatItBorrowed() {
        QueueDriver q = QueueDriver.with(research(null, 8L).build());
        q.submit(IntStream.rangeClosed(1, 6).mapToObj(i -> aJob("v" + i).tenant("vision").gpus(4).submittedAt(i))
                .toArray(JobBuilder[]::new));
        List<QueueView> views = q.core.queues(q.now());
        assertThat(views).extracting(QueueView::name).containsExactly("nlp", "vision");
        assertThat(views.get(0).flavours()).containsExactly(
                new QueueView.FlavourView("H100", 16_000, 0, 0, 8_000, null, 8_000L));
        assertThat(views.get(1).flavours()).containsExactly(
                new QueueView.FlavourView("H100", 16_000, 24_000, 8_000, 0, null, null));
        assertThat(views.get(1).fairShare()).isEqualTo(0.5);
        assertThat(views.get(1).weightedShare()).isEqualTo(24.0 / 32);
    }
}
