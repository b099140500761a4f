package io.gantry.placement.core;

import java.time.Instant;

/**
 * Time arithmetic on numbers that arrive from the input topics, which may be anything a {@code long} holds
 * ({@code timeLimitSeconds = 9223372036854775807} was once accepted upstream). {@link Instant#plusSeconds} throws
 * past year 1,000,000,000 and a thrown handler dead-letters the record after some of its facts were already
 * replayed, so every such sum here saturates instead: an end at or past {@link #END_OF_TIME} is "never", and a
 * time limit that ends there is no limit in practice.
 */
public final class TimeMath {
    /**
     * Far enough to be "never" for any run, near enough that an instant before it still fits Avro's
     * timestamp-millis and a millisecond difference to it still fits a {@code long}.
     */
    public static final Instant END_OF_TIME = Instant.parse("+100000-01-01T00:00:00Z");

    private TimeMath() {
    }

    /** {@code t + seconds}, at most {@link #END_OF_TIME}; a negative {@code seconds} counts as 0. */
    public static Instant plusSeconds(Instant t, long seconds) {
        if (seconds <= 0 || !t.isBefore(END_OF_TIME)) {
            return t;
        }
        long room = END_OF_TIME.getEpochSecond() - t.getEpochSecond();
        return seconds >= room ? END_OF_TIME : t.plusSeconds(seconds);
    }

    /**
     * When a limit of {@code seconds} from {@code start} is reached, or null when there is none in practice
     * ({@code seconds} null, or the end would be at or past {@link #END_OF_TIME}).
     */
    public static Instant deadline(Instant start, Long seconds) {
        if (seconds == null) {
            return null;
        }
        Instant end = plusSeconds(start, seconds);
        return end.isBefore(END_OF_TIME) ? end : null;
    }

    /** {@code a + b} for non-negative values, at most {@link Long#MAX_VALUE}. */
    public static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    /** {@code a × b} for non-negative values, at most {@link Long#MAX_VALUE}. */
    public static long saturatedMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return hi != 0 || lo < 0 ? Long.MAX_VALUE : lo;
    }
}
