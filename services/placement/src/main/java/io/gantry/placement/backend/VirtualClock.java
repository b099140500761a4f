package io.gantry.placement.backend;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;

/**
 * Placement's clock: {@code virtual = anchor + (wall - anchorWall) * speedup}, in whole milliseconds (the wire
 * precision, so {@code grantedAt + runSeconds} survives a round trip exactly).
 *
 * <p>It never goes backwards: {@link #notBefore} moves the anchor up to the newest timestamp read back at start,
 * so a restart (or a smaller speed-up) cannot stamp an event earlier than one already written, and a wall clock
 * stepping back is absorbed.
 */
public final class VirtualClock extends Clock {
    private final Clock wall;
    private final double speedup;
    private Instant anchor;
    private Instant anchorWall;
    private Instant last = Instant.EPOCH;

    public VirtualClock(Clock wall, double speedup) {
        if (!(speedup > 0) || Double.isInfinite(speedup)) {
            throw new IllegalArgumentException("speedup must be a positive number, was " + speedup);
        }
        this.wall = wall;
        this.speedup = speedup;
        this.anchorWall = wall.instant();
        this.anchor = anchorWall.truncatedTo(ChronoUnit.MILLIS);
    }

    public double speedup() {
        return speedup;
    }

    @Override
    public synchronized Instant instant() {
        long elapsedMillis = wall.millis() - anchorWall.toEpochMilli();
        Instant now = anchor.plusMillis((long) Math.floor(elapsedMillis * speedup));
        if (now.isBefore(last)) {
            now = last;
        }
        last = now;
        return now;
    }

    /** Re-anchors so that from now on the clock reads at least {@code newest}. */
    public synchronized void notBefore(Instant newest) {
        if (newest != null && instant().isBefore(newest)) {
            anchor = newest.truncatedTo(ChronoUnit.MILLIS);
            anchorWall = wall.instant();
            last = anchor;
        }
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the virtual clock is UTC only");
    }
}
