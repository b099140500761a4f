package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Attained-service order inside a queue (the default): a job that already received a level's worth of service waits
 * behind jobs that have not; a run past a level that saved a checkpoint yields to a waiting job of its queue and
 * priority below it; a job that waited promoteAfter stands at the first level again. Levels here: one GPU-hour;
 * 8 GPUs x 450 s reach it.
 */
class AttainedServiceTest {
    private static final Map<String, Object> PREEMPTION = Map.of("minRunTime", "5m", "gracePeriod", "30s");

    private static ConfigBuilder team(Object ordering) {
        return aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8))
                .set("preemption", PREEMPTION).set("ordering", ordering);
    }

    /** LAS with no floor under preemption by service level: a run yields as soon as it passed the level. */
    private static QueueDriver las() {
        return QueueDriver.with(team(Map.of("policy", "las", "levels", List.of(1), "promoteAfter", "8h",
                "preemptAfter", 0)).build());
    }

    /** Every run saves a checkpoint at {@code second} (so it can be preempted by service level). */
    private static Input.CheckpointCommitted saved(String job, int attempt, long second) {
        return new Input.CheckpointCommitted(job, "team", attempt, second, "/ckpt/" + job + "/" + second,
                JobBuilder.EPOCH.plusSeconds(second));
    }

    private static List<QueueFact.JobPreempted> preempted(QueueDriver q) {
        return q.facts.stream().filter(f -> f instanceof QueueFact.JobPreempted)
                .map(f -> (QueueFact.JobPreempted) f).toList();
    }

    @Test
    void aRunPastTheFirstLevelYieldsToANewJobOfItsQueueAndComesBackBehindIt() {
        QueueDriver q = las().at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        q.at(500).apply(saved("long", 1, 500));
        q.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));

        assertThat(preempted(q)).singleElement().satisfies(p -> {
            assertThat(p.jobId()).isEqualTo("long");
            assertThat(p.reason()).isEqualTo(PreemptionReason.SERVICE_LEVEL);
            assertThat(p.message()).isEqualTo("job short at service level 0 in queue team needs 8 x H100; this run"
                    + " reached level 1 with 1.3 GPU-hours of service");
        });
        q.at(630).released("long", 1, ReleaseCause.PREEMPTED);
        assertThat(q.dispatchOrder()).containsExactly("long", "short");
        assertThat(q.core.state().live().get("long").attained()).as("8 GPUs x 630 s, in millionths of a GPU-second")
                .isEqualTo(8_000L * 630_000);

        assertThat(q.lastWait("long").message()).isEqualTo("waiting for quota: queue team uses 8 of 8 H100, job needs"
                + " 8; service level 1 (1.40 GPU-hours received; lower levels go first)");
        assertThat(q.core.pending("team")).singleElement().satisfies(p -> {
            assertThat(p.serviceLevel()).isEqualTo(1);
            assertThat(p.attainedMilliGpuMillis()).isEqualTo(8_000L * 630_000);
        });
        // a newer job at the first level goes before the older one that already had its hour
        q.at(700).submit(aJob("fresh").tenant("team").gpus(8).submittedAt(700));
        q.at(800).finished("short");
        assertThat(q.dispatchOrder()).containsExactly("long", "short", "fresh");
        assertThat(q.rebuilt().state()).isEqualTo(q.core.state());
    }

    @Test
    void aRunBelowTheFirstLevelOrYoungerThanTheMinimumRunTimeIsNotPreempted() {
        QueueDriver q = las().at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        q.at(300).apply(saved("long", 1, 300));
        q.at(400).submit(aJob("short").tenant("team").gpus(8).submittedAt(400));
        assertThat(preempted(q)).as("8 x 400 s < one GPU-hour").isEmpty();

        // past the level by its service before this run, but this run is younger than the minimum run time
        QueueDriver r = las().at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        r.at(500).apply(saved("long", 1, 500));
        r.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        r.at(630).released("long", 1, ReleaseCause.PREEMPTED);
        r.at(700).finished("short");
        assertThat(r.dispatchCount("long")).isEqualTo(2);
        r.at(750).apply(saved("long", 2, 750));
        r.at(800).submit(aJob("other").tenant("team").gpus(8).submittedAt(800));
        assertThat(preempted(r)).hasSize(1);
        r.at(1000).apply(new Input.Tick(false));
        assertThat(preempted(r)).as("its second run was dispatched at 701 (when short's release came)").hasSize(1);
        r.at(1001).apply(new Input.Tick(false));
        assertThat(preempted(r)).as("five minutes after its second dispatch").hasSize(2);
    }

    @Test
    void aRunIsPreemptedByServiceLevelOnlyOnceItsJobReceivedPreemptAfter() {
        // levels order the queue from one GPU-hour; runs yield to that order only from two GPU-hours on
        QueueDriver q = QueueDriver.with(team(Map.of("policy", "las", "levels", List.of(1), "promoteAfter", "8h",
                "preemptAfter", 2)).build());
        q.at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        q.at(500).apply(saved("long", 1, 500));
        q.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        q.at(899).apply(new Input.Tick(false));
        assertThat(preempted(q)).as("level 1 at 450 s, but 8 x 899 s < 2 GPU-hours").isEmpty();
        q.at(900).apply(new Input.Tick(false));
        assertThat(preempted(q)).singleElement().satisfies(p -> {
            assertThat(p.jobId()).isEqualTo("long");
            assertThat(p.reason()).isEqualTo(PreemptionReason.SERVICE_LEVEL);
        });
        // the order itself does not wait for the floor: the new job stands before the one past the level
        q.at(930).released("long", 1, ReleaseCause.PREEMPTED);
        q.at(940).submit(aJob("fresh").tenant("team").gpus(8).submittedAt(940));
        q.at(1000).finished("short");
        assertThat(q.dispatchOrder()).containsExactly("long", "short", "fresh");
    }

    @Test
    void aRunThatSavedNoCheckpointIsNotPreemptedByServiceLevelItWouldStartOver() {
        QueueDriver q = las().at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        q.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        q.at(3600).apply(new Input.Tick(false));
        assertThat(preempted(q)).isEmpty();
        q.at(3700).apply(saved("long", 1, 3700)).apply(new Input.Tick(false));
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactly("long");
    }

    @Test
    void aFifoQueueAndAHigherPriorityRunAreNeverPreemptedByServiceLevel() {
        QueueDriver fifo = QueueDriver.with(team(Map.of("policy", "fifo")).build()).at(0)
                .submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        fifo.at(500).apply(saved("long", 1, 500));
        fifo.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        assertThat(preempted(fifo)).isEmpty();

        QueueDriver q = QueueDriver.with(team(Map.of("policy", "las", "preemptAfter", 0))
                        .classes("normal", 0, "high", 10).build())
                .at(0).submit(aJob("long").tenant("team").gpus(8).priorityClass("high").submittedAt(0));
        q.at(500).apply(saved("long", 1, 500));
        q.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        assertThat(preempted(q)).isEmpty();
    }

    @Test
    void aQueueMayChooseFifoWhileTheOthersStayInAttainedServiceOrder() {
        FairShareConfig c = aConfig().flavours("H100").set("preemption", PREEMPTION)
                .set("ordering", Map.of("preemptAfter", 0))
                .queue(aQueue("team").quota("H100", 8).set("ordering", "fifo"))
                .queue(aQueue("lab").quota("H100", 8)).build();
        assertThat(c.orderingOf(c.queues().get(0))).isEqualTo(FairShareConfig.OrderingPolicy.FIFO);
        assertThat(c.orderingOf(c.queues().get(1))).isEqualTo(FairShareConfig.OrderingPolicy.LAS);
        QueueDriver q = QueueDriver.with(c).at(0).submit(aJob("t1").tenant("team").gpus(8).submittedAt(0),
                aJob("l1").tenant("lab").gpus(8).submittedAt(0));
        q.at(500).apply(saved("t1", 1, 500)).apply(new Input.CheckpointCommitted("l1", "lab", 1, 500, "/ckpt/l1",
                JobBuilder.EPOCH.plusSeconds(500)));
        q.at(600).submit(aJob("t2").tenant("team").gpus(8).submittedAt(600),
                aJob("l2").tenant("lab").gpus(8).submittedAt(600));
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactly("l1");
    }

    @Test
    void aCohortNamesTheOrderingOfItsQueuesAndThoseBelowItUnlessAQueueNamesItsOwn() {
        FairShareConfig c = aConfig().flavours("H100").set("preemption", PREEMPTION)
                .cohort(Map.of("name", "batch", "ordering", "fifo"))
                .cohort(Map.of("name", "nightly", "parent", "batch"))
                .cohort(Map.of("name", "interactive", "parent", "batch", "ordering", "las"))
                .queue(aQueue("etl").cohort("batch").quota("H100", 8))
                .queue(aQueue("reports").cohort("nightly").quota("H100", 8))
                .queue(aQueue("notebooks").cohort("interactive").quota("H100", 8))
                .queue(aQueue("mixed").cohort("nightly").quota("H100", 8).set("ordering", "las"))
                .queue(aQueue("team").quota("H100", 8)).build();

        assertThat(c.queues()).extracting(c::orderingOf).containsExactly(FairShareConfig.OrderingPolicy.FIFO,
                FairShareConfig.OrderingPolicy.FIFO, FairShareConfig.OrderingPolicy.LAS,
                FairShareConfig.OrderingPolicy.LAS, FairShareConfig.OrderingPolicy.LAS);
        assertThat(FairShareConfig.fromYaml(c.toDocument())).as("written back").isEqualTo(c);
        assertThatThrownBy(() -> aConfig().flavours("H100").cohort(Map.of("name", "batch", "ordering", "lifo"))
                .queue(aQueue("etl").cohort("batch").quota("H100", 8)).build())
                .hasMessageContaining("cohorts[0].ordering: must be fifo or las, was 'lifo'");

        // a run of the FIFO cohort's queue is never preempted by service level; one of the LAS queue is (no idle
        // quota left to borrow in the tree)
        FairShareConfig full = aConfig().flavours("H100").set("preemption", PREEMPTION)
                .set("ordering", Map.of("preemptAfter", 0))
                .cohort(Map.of("name", "batch", "ordering", "fifo"))
                .cohort(Map.of("name", "interactive", "parent", "batch", "ordering", "las"))
                .queue(aQueue("etl").cohort("batch").quota("H100", 8))
                .queue(aQueue("notebooks").cohort("interactive").quota("H100", 8)).build();
        QueueDriver q = QueueDriver.with(full).at(0).submit(aJob("e1").tenant("etl").gpus(8).submittedAt(0),
                aJob("n1").tenant("notebooks").gpus(8).submittedAt(0));
        q.at(500).apply(new Input.CheckpointCommitted("e1", "etl", 1, 500, "/ckpt/e1", JobBuilder.EPOCH.plusSeconds(500)))
                .apply(new Input.CheckpointCommitted("n1", "notebooks", 1, 500, "/ckpt/n1",
                        JobBuilder.EPOCH.plusSeconds(500)));
        q.at(600).submit(aJob("e2").tenant("etl").gpus(8).submittedAt(600),
                aJob("n2").tenant("notebooks").gpus(8).submittedAt(600));
        assertThat(preempted(q)).extracting(QueueFact.JobPreempted::jobId).containsExactly("n1");
    }

    @Test
    void aJobWaitingPromoteAfterStandsAtTheFirstLevelAgain() {
        QueueDriver q = las().at(0).submit(aJob("long").tenant("team").gpus(8).submittedAt(0));
        q.at(500).apply(saved("long", 1, 500));
        q.at(600).submit(aJob("short").tenant("team").gpus(8).submittedAt(600));
        q.at(630).released("long", 1, ReleaseCause.PREEMPTED);
        // "long" (level 1) has waited since 630: at 630 + 8 h it is at level 0 again, and older than "late"
        q.at(630 + 8 * 3600 - 100).submit(aJob("late").tenant("team").gpus(8).submittedAt(630 + 8 * 3600 - 100));
        q.at(630 + 8 * 3600).apply(new Input.Tick(false));
        q.at(630 + 8 * 3600 + 10).finished("short");
        assertThat(q.dispatchOrder()).containsExactly("long", "short", "long");
    }

    @Test
    void levelsAreConfiguredInGpuHoursAscendingAndWrittenBack() {
        FairShareConfig c = team(Map.of("policy", "las", "levels", List.of(0.5, 4, 32), "promoteAfter", "never"))
                .build();
        assertThat(c.ordering()).isEqualTo(new FairShareConfig.Ordering(FairShareConfig.OrderingPolicy.LAS,
                List.of(1_800L, 14_400L, 115_200L), null));
        assertThat(FairShareConfig.fromYaml(c.toDocument())).isEqualTo(c);
        FairShareConfig floor = team(Map.of("policy", "las", "preemptAfter", 1.5)).build();
        assertThat(floor.ordering().preemptAfter()).isEqualTo(5_400L);
        assertThat(FairShareConfig.fromYaml(floor.toDocument())).isEqualTo(floor);
        assertThat(aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8)).build().ordering())
                .as("the default").isEqualTo(new FairShareConfig.Ordering(FairShareConfig.OrderingPolicy.LAS,
                        List.of(3_600L), Duration.ofHours(8), 32 * 3_600L));
        assertThatThrownBy(() -> team(Map.of("policy", "lifo", "levels", List.of(2, 1), "promoteAfter", "0",
                "preemptAfter", -1)).build())
                .hasMessageContaining("ordering.policy: must be fifo or las, was 'lifo'")
                .hasMessageContaining("ordering.levels[1]: must be greater than the level before it, was 1")
                .hasMessageContaining("ordering.promoteAfter: must be > 0 or never, was '0'")
                .hasMessageContaining("ordering.preemptAfter: must be GPU-hours >= 0 (at most 1e6), was -1");
        assertThatThrownBy(() -> team(Map.of("preemptAfter", "lots")).build())
                .hasMessageContaining("ordering.preemptAfter: must be a number, was lots")
                .message().doesNotContain("GPU-hours >= 0");
        assertThatThrownBy(() -> aConfig().flavours("H100").queue(aQueue("team").quota("H100", 8)
                .set("ordering", "random")).build()).hasMessageContaining("queues[0].ordering: must be fifo or las");
    }
}
