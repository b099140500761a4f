package io.gantry.runtime.log;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when told: the driver's virtual time. Never goes backwards. */
public final class VirtualClock extends Clock {
    private Instant now;

    public VirtualClock(Instant start) {
        this.now = start;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return now;
    }

    /** Moves to {@code t}; a time in the past is ignored (the clock is monotonic). */
    public void moveTo(Instant t) {
        if (t.isAfter(now)) {
            now = t;
        }
    }
}
