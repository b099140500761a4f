package io.gantry.placement.backend;

import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VirtualClockTest {
    private static final Instant WALL = Instant.parse("2030-01-01T00:00:00.123456Z");

    @Test
    void atSpeedUpOneVirtualTimeIsWallTimeInWholeMilliseconds() {
        MutableClock wall = new MutableClock(WALL);
        VirtualClock clock = new VirtualClock(wall, 1.0);

        wall.advance(Duration.ofMillis(1500));

        assertThat(clock.instant()).isEqualTo(Instant.parse("2030-01-01T00:00:01.623Z"));
    }

    @Test
    void aSpeedUpOfSixtyTurnsOneWallSecondIntoOneVirtualMinute() {
        MutableClock wall = new MutableClock(WALL);
        VirtualClock clock = new VirtualClock(wall, 60);
        Instant start = clock.instant();

        wall.advance(Duration.ofSeconds(1));

        assertThat(Duration.between(start, clock.instant())).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void afterARestartTheClockNeverReadsEarlierThanTheNewestRestoredEvent() {
        MutableClock wall = new MutableClock(WALL);
        VirtualClock clock = new VirtualClock(wall, 10);
        Instant newest = WALL.plus(Duration.ofHours(5)); // written by a faster run before the restart

        clock.notBefore(newest);
        wall.advance(Duration.ofSeconds(2));

        assertThat(clock.instant()).isEqualTo(newest.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).plusSeconds(20));
    }

    @Test
    void anOlderRestoredEventDoesNotMoveTheClock() {
        MutableClock wall = new MutableClock(WALL);
        VirtualClock clock = new VirtualClock(wall, 1);
        Instant before = clock.instant();

        clock.notBefore(WALL.minusSeconds(3600));

        assertThat(clock.instant()).isEqualTo(before);
    }

    @Test
    void aWallClockSteppingBackDoesNotMoveVirtualTimeBack() {
        MutableClock wall = new MutableClock(WALL);
        VirtualClock clock = new VirtualClock(wall, 1);
        wall.advance(Duration.ofSeconds(10));
        Instant seen = clock.instant();

        wall.set(WALL);

        assertThat(clock.instant()).isEqualTo(seen);
    }

    @Test
    void aSpeedUpMustBePositive() {
        assertThatThrownBy(() -> new VirtualClock(new MutableClock(WALL), 0)).hasMessageContaining("speedup");
    }
}
