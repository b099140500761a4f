package io.gantry.placement.core;

import java.time.Instant;
import java.util.Objects;

/** How a run ended, as its backend reported it. */
public record RunResult(boolean succeeded, Integer exitCode, String message, Instant finishedAt) {
    public RunResult {
        Objects.requireNonNull(finishedAt, "finishedAt");
        message = message == null ? "" : message;
    }

    public static RunResult succeeded(Instant at) {
        return new RunResult(true, 0, "", at);
    }

    public static RunResult failed(Integer exitCode, String message, Instant at) {
        return new RunResult(false, exitCode, message, at);
    }
}
