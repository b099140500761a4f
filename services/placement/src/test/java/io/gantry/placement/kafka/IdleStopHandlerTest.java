package io.gantry.placement.kafka;

import io.gantry.events.AllocationReleased;
import io.gantry.events.JobPreempted;
import io.gantry.events.PreemptionReason;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.StopEvent;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static io.gantry.placement.kafka.PlacementHandlerRestartTest.GRANTED;
import static io.gantry.placement.kafka.PlacementHandlerRestartTest.restoreGrant;
import static io.gantry.placement.kafka.PlacementHandlerRestartTest.simulatedHandler;
import static org.assertj.core.api.Assertions.assertThat;

/** A run the queue stops for idling (JobPreempted reason IDLE) is told so and released with reason IDLE. */
class IdleStopHandlerTest {

    private static QueuePreemptionEvent idleStop(Instant at, int graceSeconds) {
        return stop(at, graceSeconds, PreemptionReason.IDLE,
                "GPUs idle for 30 min since " + GRANTED + " (idle timeout 30 min of queue vision)");
    }

    private static QueuePreemptionEvent stop(Instant at, int graceSeconds, PreemptionReason reason, String message) {
        return QueuePreemptionEvent.newBuilder().setEventId(reason + "-" + at).setJobId("job-1").setOccurredAt(at)
                .setPayload(JobPreempted.newBuilder().setTenant("vision").setAttempt(1)
                        .setReason(reason).setGraceSeconds(graceSeconds).setMessage(message).build()).build();
    }

    /** A handler over a day-long run of job-1 granted at {@code GRANTED}, restored from the log. */
    private static PlacementHandler running(MutableClock wall) {
        PlacementHandler h = simulatedHandler(wall);
        restoreGrant(h, 86_400L, null);
        return h;
    }

    @Test
    void aSuspendedJobsRunIsReleasedSuspendedNotPreempted() {
        MutableClock wall = new MutableClock(GRANTED.plusSeconds(600));
        PlacementHandler h = running(wall);
        PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();
        h.restored(out);

        h.handle(Topics.QUEUE_PREEMPTION_EVENTS, "job-1", stop(wall.instant(), 30, PreemptionReason.SUSPENDED,
                "suspended by vision"), out);
        wall.advance(Duration.ofSeconds(31));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).singleElement().isInstanceOfSatisfying(AllocationReleased.class, r ->
                assertThat(r.getReason()).as("the tenant's own stop: billing never credits it").isEqualTo(
                        ReleaseReason.SUSPENDED));
    }

    @Test
    void anIdleStopIsNoticedAsIdleAndReleasedIdleAtTheEndOfItsGracePeriod() {
        MutableClock wall = new MutableClock(GRANTED.plusSeconds(1800));
        PlacementHandler h = running(wall);
        PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();
        h.restored(out);

        h.handle(Topics.QUEUE_PREEMPTION_EVENTS, "job-1", idleStop(wall.instant(), 30), out);

        assertThat(out.values).filteredOn(v -> v instanceof StopEvent).singleElement()
                .satisfies(v -> {
                    var notice = (io.gantry.events.RunStopRequested) ((StopEvent) v).getPayload();
                    assertThat(notice.getReason()).isEqualTo(ReleaseReason.IDLE);
                    assertThat(notice.getMessage()).startsWith("GPUs idle for 30 min");
                });
        wall.advance(Duration.ofSeconds(31));
        h.tick(wall.instant(), out);

        assertThat(out.allocationPayloads()).as("no outcome, only the release").singleElement()
                .isInstanceOfSatisfying(AllocationReleased.class, r -> {
                    assertThat(r.getReason()).isEqualTo(ReleaseReason.IDLE);
                    assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(1830));
                });
        assertThat(h.state().liveAllocations()).isEmpty();
    }

    @Test
    void anIdleStopPendingAtARestartIsStillReleasedIdle() {
        PlacementHandler h = simulatedHandler(new MutableClock(GRANTED.plusSeconds(2000)));
        restoreGrant(h, 86_400L, null);
        h.restore(Topics.QUEUE_PREEMPTION_EVENTS, "job-1", idleStop(GRANTED.plusSeconds(1800), 30));
        PlacementHandlerRestartTest.Recorded out = new PlacementHandlerRestartTest.Recorded();

        h.restored(out);

        assertThat(out.allocationPayloads()).singleElement().isInstanceOfSatisfying(AllocationReleased.class, r -> {
            assertThat(r.getReason()).isEqualTo(ReleaseReason.IDLE);
            assertThat(r.getReleasedAt()).isEqualTo(GRANTED.plusSeconds(1830));
        });
    }
}
