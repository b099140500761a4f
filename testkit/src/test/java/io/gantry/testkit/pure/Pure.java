package io.gantry.testkit.pure;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Plain Java: what a core may use. */
public final class Pure {
    private final AtomicLong counter = new AtomicLong();

    public record Window(Instant from, Duration length) {
    }

    public List<Instant> ends(List<Window> windows) {
        counter.incrementAndGet();
        return windows.stream().map(w -> w.from().plus(w.length())).toList();
    }
}
