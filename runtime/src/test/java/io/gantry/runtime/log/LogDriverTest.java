package io.gantry.runtime.log;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobCancelled;
import io.gantry.events.QueueJobEvent;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The driver keeps the promises the Kafka processor keeps, for a toy "queue" that answers every cancel request with
 * a JobCancelled once, remembers what it cancelled by replaying its own topic, and ticks.
 */
class LogDriverTest {
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    /** State: jobs already cancelled, rebuilt from queue.job-events. */
    static final class ToyQueue implements EventHandler {
        final Set<String> cancelled = new HashSet<>();
        final List<Instant> ticks = new ArrayList<>();
        int handled;
        int handledWhenCaughtUp = -1;
        int caughtUps;
        /** What nextTickAt answers (null: the fixed interval). */
        Instant dueAt;

        @Override
        public Instant nextTickAt(Instant now) {
            return dueAt;
        }

        @Override
        public void restore(Topic<?> topic, String key, Object value) {
            if (((QueueJobEvent) value).getPayload() instanceof JobCancelled) {
                cancelled.add(key);
            }
        }

        @Override
        public void handle(Topic<?> topic, String key, Object value, Output out) {
            handled++;
            JobCancelRequested req = (JobCancelRequested) ((AdmissionJobEvent) value).getPayload();
            if (req.getTenant().equals("boom")) {
                throw new IllegalArgumentException("tenant boom is poison");
            }
            if (cancelled.add(key)) {
                out.send(Topics.QUEUE_JOB_EVENTS, key, QueueJobEvent.newBuilder().setEventId("e-" + key)
                        .setJobId(key).setOccurredAt(T0).setPayload(new JobCancelled(req.getTenant(), 0, "t", null))
                        .build());
            }
        }

        @Override
        public void caughtUp(Instant now, Output out) {
            caughtUps++;
            handledWhenCaughtUp = handled;
        }

        @Override
        public void tick(Instant now, Output out) {
            ticks.add(now);
        }
    }

    private final VirtualClock clock = new VirtualClock(T0);
    private final List<ToyQueue> started = new ArrayList<>();

    private LogDriver driver(boolean wire) {
        return LogDriver.builder(clock).encodeOnTheWire(wire)
                .service(Service.QUEUE, () -> {
                    ToyQueue q = new ToyQueue();
                    started.add(q);
                    return q;
                }, List.of(Topics.ADMISSION_JOB_EVENTS), List.of(Topics.QUEUE_JOB_EVENTS), Duration.ofSeconds(10))
                .build();
    }

    private ToyQueue current() {
        return started.get(started.size() - 1);
    }

    private static AdmissionJobEvent cancel(String job, String tenant) {
        return AdmissionJobEvent.newBuilder().setEventId("c-" + job + "-" + tenant).setJobId(job).setOccurredAt(T0)
                .setPayload(new JobCancelRequested(tenant, tenant)).build();
    }

    private static long answers(LogDriver d, String job) {
        return d.values(Topics.QUEUE_JOB_EVENTS).stream().filter(e -> e.getJobId().equals(job)).count();
    }

    @Test
    void answersEachInputOnceAndARestartRebuildsStateWithoutRepeatingItself() {
        LogDriver d = driver(false).start();
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a"));
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a"));
        d.runUntilIdle();
        assertThat(answers(d, "j1")).isEqualTo(1);

        d.restart(Service.QUEUE);
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a"));
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j2", cancel("j2", "a"));
        d.runUntilIdle();

        assertThat(current().cancelled).containsExactlyInAnyOrder("j1", "j2");
        assertThat(current().handled).as("offsets survive the restart: only the new records").isEqualTo(2);
        assertThat(answers(d, "j1")).isEqualTo(1);
        assertThat(answers(d, "j2")).isEqualTo(1);
    }

    @Test
    void aCrashBeforeTheCommitLeavesNoTraceAndTheRestartAnswersExactlyOnce() {
        LogDriver d = driver(false).start();
        d.crashDuringNextBatch(Service.QUEUE);
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a"));
        d.runUntilIdle();

        assertThat(started).as("restarted after the crash").hasSize(2);
        assertThat(answers(d, "j1")).isEqualTo(1);
        assertThat(current().handled).as("the lost batch's input is handled again").isEqualTo(1);
    }

    @Test
    void aPoisonRecordGoesToTheDeadLetterTopicWithItsSourceAndTheLoopGoesOn() {
        LogDriver d = driver(false).start();
        d.publish(Topics.ADMISSION_JOB_EVENTS, "bad", cancel("bad", "boom"));
        d.publish(Topics.ADMISSION_JOB_EVENTS, "good", cancel("good", "a"));
        d.runUntilIdle();

        List<InMemoryLog.Entry> dead = d.log().entries(Topics.deadLetter(Service.QUEUE).name());
        assertThat(dead).singleElement().satisfies(e -> {
            assertThat(e.key()).isEqualTo("bad");
            assertThat(e.headers()).containsEntry("gantry.source.topic", "admission.job-events")
                    .containsEntry("gantry.source.offset", "0");
            assertThat(e.headers().get("gantry.error")).contains("tenant boom is poison");
        });
        assertThat(answers(d, "good")).isEqualTo(1);
    }

    @Test
    void ticksRunAtTheirOwnVirtualTimesAndTimeMovesOnlyWhenAdvanced() {
        LogDriver d = driver(false).start();
        assertThat(clock.instant()).isEqualTo(T0);

        d.advanceTo(T0.plusSeconds(35));

        assertThat(current().ticks).containsExactly(T0, T0.plusSeconds(10), T0.plusSeconds(20), T0.plusSeconds(30));
        assertThat(clock.instant()).isEqualTo(T0.plusSeconds(35));
    }

    @Test
    void aHandlerThatSaysWhenItsWorkIsDueIsTickedThenAndNotAtEveryInterval() {
        LogDriver d = driver(false).start();
        d.advanceTo(T0); // the first tick, at start
        current().dueAt = T0.plusSeconds(95);
        d.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a")); // a batch: the driver asks again
        d.runUntilIdle();
        current().dueAt = Instant.MAX; // nothing pending after that tick

        d.advanceTo(T0.plusSeconds(1_000));

        assertThat(current().ticks).containsExactly(T0, T0.plusSeconds(95));
    }

    @Test
    void recordsOlderThanTheirTopicsRetentionAreDroppedAndOffsetsKeepCounting() {
        InMemoryLog log = new InMemoryLog();
        Topic<io.gantry.events.NodeHeartbeatEvent> hb = Topics.PLACEMENT_HEARTBEAT_EVENTS;
        for (int minute = 0; minute < 240; minute++) {
            log.append(hb, "n1", io.gantry.events.NodeHeartbeatEvent.newBuilder().setEventId("h" + minute)
                    .setNodeId("n1").setOccurredAt(T0).setPayload(new io.gantry.events.NodeHeartbeat((long) minute))
                    .build(), T0.plusSeconds(60L * minute));
        }

        assertThat(log.end(hb.name())).isEqualTo(240);
        List<InMemoryLog.Entry> kept = log.entries(hb.name());
        assertThat(kept.size()).as("an hour (plus the chunk not yet dropped), not four").isBetween(61, 121);
        assertThat(kept.get(kept.size() - 1).offset()).isEqualTo(239);
        assertThat(log.from(hb.name(), 0)).as("a reader behind the retained start reads from there").isEqualTo(kept);
        assertThat(log.entries(Topics.QUEUE_JOB_EVENTS.name())).isEmpty();
    }

    @Test
    void theHandlerHearsOncePerStartThatItCaughtUpAfterTheBacklogThatWaitedForIt() {
        LogDriver d = driver(false).start();
        assertThat(current().caughtUps).isEqualTo(1);
        for (int i = 0; i < 30; i++) {
            d.publish(Topics.ADMISSION_JOB_EVENTS, "b" + i, cancel("b" + i, "a"));
        }
        d.restart(Service.QUEUE);

        assertThat(current().caughtUps).isEqualTo(1);
        assertThat(current().handledWhenCaughtUp).isEqualTo(30);
    }

    @Test
    void onTheWireARecordTheSchemaCannotCarryFailsItsHandlerCallAsOnKafka() {
        LogDriver wire = LogDriver.builder(clock).encodeOnTheWire(true)
                .service(Service.QUEUE, () -> new EventHandler() {
                    @Override
                    public void handle(Topic<?> topic, String key, Object value, Output out) {
                        // eventId is required by the schema
                        out.send(Topics.QUEUE_JOB_EVENTS, key, new QueueJobEvent(null, key, T0,
                                new JobCancelled("a", 0, "t", null)));
                    }
                }, List.of(Topics.ADMISSION_JOB_EVENTS), List.of(), Duration.ofSeconds(1)).build().start();
        wire.publish(Topics.ADMISSION_JOB_EVENTS, "j1", cancel("j1", "a"));
        wire.runUntilIdle();

        assertThat(wire.values(Topics.QUEUE_JOB_EVENTS)).isEmpty();
        assertThat(wire.log().entries(Topics.deadLetter(Service.QUEUE).name())).hasSize(1);
    }

    @Test
    void aServiceCannotWriteAnotherServicesTopic() {
        LogDriver d = LogDriver.builder(clock)
                .service(Service.QUEUE, () -> new EventHandler() {
                    @Override
                    public void handle(Topic<?> topic, String key, Object value, Output out) {
                        out.send(Topics.ADMISSION_JOB_EVENTS, key, (AdmissionJobEvent) value);
                    }
                }, List.of(Topics.PLACEMENT_NODE_EVENTS), List.of(), Duration.ofSeconds(1)).build().start();

        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> d.command(Service.QUEUE, out -> {
            out.send(Topics.ADMISSION_JOB_EVENTS, "j", cancel("j", "a"));
            return null;
        }))).hasMessageContaining("may not write admission.job-events");
    }
}
