package io.gantry.queue.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Idle reclamation (Backend.AI's idle timeout): a run of an interactive job in a queue with an idle timeout whose GPUs
 * stay idle is warned at half the timeout and stopped at the timeout; the job then fails with reason IDLE.
 */
class IdleReclamationTest {
    private static final long MIN = 60;

    /** Queue {@code a} of tenant {@code a} with 8 H100, and the idle timeout given (null: none). */
    private static FairShareConfig queueWithIdleTimeout(String timeout) {
        ConfigBuilder.QueueBuilder q = aQueue("a").quota("H100", 8);
        if (timeout != null) {
            q.set("idleTimeout", timeout);
        }
        return aConfig().flavours("H100").queue(q).build();
    }

    /** One running job {@code j} (granted at second 0 of its run); windows follow. */
    private static QueueDriver running(FairShareConfig config, JobBuilder job) {
        return QueueDriver.with(config).at(0).submit(job).granted(job.id(), 1);
    }

    /**
     * A case (placement never releases here, so a case ends at its stop: a stop not released within its grace
     * period and as long again expires and is asked for again): windows every 5 minutes, each ending at {@code 5 * (i + 1)} minutes; {@code idleSince[i]} is the
     * window's idleSince in minutes, or null for a busy window. {@code expected}: what the queue wrote, in order, as
     * {@code WARN@<window end>}, {@code CLEAR@...}, {@code STOP@...}.
     */
    record Case(String name, String timeout, boolean batch, Long[] idleSince, List<String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static Long[] idleFrom(long start, int windows) {
        Long[] w = new Long[windows];
        for (int i = 0; i < windows; i++) {
            w[i] = (i + 1) * 5 >= start + 5 ? start : null;
        }
        return w;
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("an idle run is warned once at half the timeout and stopped at the timeout", "30m", false,
                        idleFrom(0, 6), List.of("WARN@15", "STOP@30")),
                new Case("a run busy in between is cleared and its next idle stretch is warned and stopped afresh",
                        "30m", false, new Long[] {0L, 0L, 0L, 0L, null, 25L, 25L, 25L, 25L, 25L, 25L},
                        List.of("WARN@15", "CLEAR@25", "WARN@40", "STOP@55")),
                new Case("a new idle stretch seen without a busy window between clears the old warning", "30m", false,
                        new Long[] {0L, 0L, 0L, 18L, 18L}, List.of("WARN@15", "CLEAR@20")),
                new Case("a busy run is never warned", "30m", false, new Long[] {null, null, null, null, null, null,
                        null}, List.of()),
                new Case("a batch job is never warned or stopped", "30m", true, idleFrom(0, 12), List.of()),
                new Case("a queue without an idle timeout never warns or stops", null, false, idleFrom(0, 12),
                        List.of()),
                new Case("a queue that opted out with never never warns or stops", "never", false, idleFrom(0, 12),
                        List.of()),
                new Case("a window that already passes the timeout stops the run without a warning first", "5m",
                        false, new Long[] {0L}, List.of("STOP@5")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void idleRunsAreWarnedThenStoppedAsTheirQueueAndJobSay(Case c) {
        JobBuilder job = aJob("j").tenant("a").gpus(1);
        QueueDriver q = running(queueWithIdleTimeout(c.timeout()), c.batch() ? job.batch() : job);

        List<String> seen = new ArrayList<>();
        for (int i = 0; i < c.idleSince().length; i++) {
            long end = (i + 1) * 5L;
            q.at(end * MIN).window("j", 1, end * MIN, c.idleSince()[i] == null ? null : c.idleSince()[i] * MIN);
            for (QueueFact f : q.last) {
                if (f instanceof QueueFact.JobIdleWarned) {
                    seen.add("WARN@" + end);
                } else if (f instanceof QueueFact.JobIdleCleared) {
                    seen.add("CLEAR@" + end);
                } else if (f instanceof QueueFact.JobPreempted p && p.reason() == PreemptionReason.IDLE) {
                    seen.add("STOP@" + end);
                }
            }
        }

        assertThat(seen).isEqualTo(c.expected());
        // the replayed facts rebuild the same decisions' state
        assertThat(q.rebuilt().idleWarnedSince("j")).isEqualTo(q.core.idleWarnedSince("j"));
    }

    @Test
    void theWarningSaysHowLongTheGpusWereIdleAndWhenTheRunIsStopped() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        q.at(16 * MIN).window("j", 1, 16 * MIN, 0L);

        assertThat(q.all(QueueFact.JobIdleWarned.class, "j")).singleElement().satisfies(w -> {
            assertThat(w.idleSince()).isEqualTo(JobBuilder.EPOCH);
            assertThat(w.idleTimeout()).isEqualTo(Duration.ofMinutes(30));
            assertThat(w.stopAt()).isEqualTo(JobBuilder.EPOCH.plusSeconds(30 * MIN));
            assertThat(w.message()).isEqualTo("GPUs idle for 16 min; the run is stopped at "
                    + JobBuilder.EPOCH.plusSeconds(30 * MIN) + " (idle timeout 30 min of queue a) unless they become"
                    + " busy");
        });
    }

    @Test
    void aRunStoppedForIdlingEndsTheJobWithReasonIdleAndFreesItsQuotaWithoutARequeue() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(8))
                .submit(aJob("next").tenant("a").gpus(8));
        q.at(30 * MIN).window("j", 1, 30 * MIN, 0L);
        QueueFact.JobPreempted stop = q.all(QueueFact.JobPreempted.class, "j").get(0);
        assertThat(stop.preemptorJobId()).isNull();
        assertThat(stop.graceSeconds()).isEqualTo(30);
        assertThat(stop.message()).startsWith("GPUs idle for 30 min since ");
        q.at(30 * MIN + 10).window("j", 1, 30 * MIN + 10, 0L);
        assertThat(q.all(QueueFact.JobPreempted.class, "j")).as("asked once while it stops").hasSize(1);

        q.released("j", 1, ReleaseCause.IDLE);

        assertThat(q.all(QueueFact.JobFailed.class, "j")).singleElement().satisfies(f -> {
            assertThat(f.reason()).isEqualTo(FailureReason.IDLE);
            assertThat(f.message()).isEqualTo(stop.message());
        });
        assertThat(q.all(QueueFact.JobQueued.class, "j")).as("not requeued").hasSize(1);
        assertThat(q.core.status("j")).isEqualTo(JobState.FAILED);
        assertThat(q.dispatchCount("next")).as("its quota went to the next job").isEqualTo(1);
    }

    @Test
    void aReleaseAsPreemptedFromAPlacementThatKnowsNoIdleStillEndsTheJobAsIdle() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        q.at(31 * MIN).window("j", 1, 31 * MIN, 0L).released("j", 1, ReleaseCause.PREEMPTED);

        assertThat(q.all(QueueFact.JobFailed.class, "j")).extracting(QueueFact.JobFailed::reason)
                .containsExactly(FailureReason.IDLE);
        assertThat(q.all(QueueFact.JobQueued.class, "j")).hasSize(1);
    }

    @Test
    void aRunThatSucceedsDuringItsGracePeriodSucceeds() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        q.at(30 * MIN).window("j", 1, 30 * MIN, 0L).succeeded("j", 1).released("j", 1, ReleaseCause.RUN_SUCCEEDED);

        assertThat(q.core.status("j")).isEqualTo(JobState.SUCCEEDED);
    }

    @Test
    void windowsOfAnOlderRunOrOfAJobNotRunningDecideNothing() {
        QueueDriver q = QueueDriver.with(queueWithIdleTimeout("30m")).at(0).submit(aJob("j").tenant("a").gpus(16));
        int before = q.facts.size();
        q.window("j", 1, 40 * MIN, 0L); // never fits: queued, not running
        assertThat(q.facts).hasSize(before);
    }

    @Test
    void aRestartRebuildsTheWarningFromTheQueuesOwnFactsSoItIsNotWarnedTwiceAndIsStoppedOnTime() {
        QueueDriver live = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        live.at(15 * MIN).window("j", 1, 15 * MIN, 0L);
        assertThat(live.all(QueueFact.JobIdleWarned.class, "j")).hasSize(1);

        // a restarted queue: a fresh core given the facts only (no utilisation window is restored)
        QueueDriver restarted = QueueDriver.with(queueWithIdleTimeout("30m")).given(live.facts.toArray(
                QueueFact[]::new)).restored();
        assertThat(restarted.core.idleWarnedSince("j")).isEqualTo(JobBuilder.EPOCH);

        for (QueueDriver q : List.of(live, restarted)) {
            q.at(20 * MIN).window("j", 1, 20 * MIN, 0L).at(25 * MIN).window("j", 1, 25 * MIN, 0L);
            assertThat(q.all(QueueFact.JobIdleWarned.class, "j")).as("warned once").hasSize(1);
            q.at(30 * MIN).window("j", 1, 30 * MIN, 0L);
            assertThat(q.last).filteredOn(QueueFact.JobPreempted.class::isInstance).hasSize(1);
        }
    }

    @Test
    void aWarningThatOutlivesItsTimeoutIsClearedWhenTheQueueNoLongerStopsIdleRuns() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        q.at(15 * MIN).window("j", 1, 15 * MIN, 0L);

        q.reconfigure(queueWithIdleTimeout(null)).at(30 * MIN).window("j", 1, 30 * MIN, 0L);

        assertThat(q.last).singleElement().isInstanceOfSatisfying(QueueFact.JobIdleCleared.class, c ->
                assertThat(c.message()).startsWith("its queue no longer stops idle runs"));
        assertThat(q.core.status("j")).isEqualTo(JobState.DISPATCHED);
    }

    @Test
    void aLongerTimeoutAppliedWhileWarnedStopsOnlyAtTheNewTimeout() {
        QueueDriver q = running(queueWithIdleTimeout("30m"), aJob("j").tenant("a").gpus(1));
        q.at(15 * MIN).window("j", 1, 15 * MIN, 0L);

        q.reconfigure(queueWithIdleTimeout("1h")).at(30 * MIN).window("j", 1, 30 * MIN, 0L);
        assertThat(q.all(QueueFact.JobPreempted.class, "j")).isEmpty();
        q.at(60 * MIN).window("j", 1, 60 * MIN, 0L);
        assertThat(q.all(QueueFact.JobPreempted.class, "j")).hasSize(1);
    }
}
