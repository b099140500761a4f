package io.gantry.testkit.impure;

/** Breaks the pure-core rule on purpose, without a single import line: what a scan of imports would miss. */
public final class Impure {
    public long wallClock() {
        return java.time.Instant.now().toEpochMilli();
    }

    public boolean touchesTheDisk() {
        return new java.io.File("/tmp").exists();
    }

    public java.util.function.LongSupplier readsTheWallClockInALambda() {
        return () -> System.nanoTime();
    }
}
