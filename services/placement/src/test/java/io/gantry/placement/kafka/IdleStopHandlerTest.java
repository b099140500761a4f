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
        return QueuePreemptionEvent.newBuilder().setEventId("idle-" + at).setJobId("job-1").setOccurredAt(at)
                .setPayload(JobPreempted.newBuilder().setTenant("vision").setAttempt(1)
                        .setReason(PreemptionReason.IDLE).setGraceSeconds(graceSeconds)
                        .setMessage("GPUs idle for 30 min since " + GRANTED + " (idle timeout 30 min of queue vision)")
                        .build()).build();
    }

    @Test
    void anIdleStopIsNoticedAsIdleAndReleasedIdleAtTheEndOfItsGracePeriod() {
        MutableClock wall = new MutableClock(GRANTED.plusSeconds(1800));
        PlacementHandler h = simulatedHandler(wall);
        restoreGrant(h, 86_400L, null);
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
