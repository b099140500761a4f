package io.gantry.placement.core;

import java.time.Instant;
import java.util.Objects;

/**
 * How a run ended, as its backend reported it.
 *
 * @param onItsOwn the backend knows the run did not end in answer to a stop: a simulated run ends when its modelled
 *                 run time does, whatever it was told (a real process may save and exit 0 on a stop notice, so a
 *                 real backend never says this; see {@link ClusterState#runEnded})
 */
public record RunResult(boolean succeeded, Integer exitCode, String message, Instant finishedAt, boolean onItsOwn) {
    public RunResult {
        Objects.requireNonNull(finishedAt, "finishedAt");
        message = message == null ? "" : message;
    }

    public static RunResult succeeded(Instant at) {
        return new RunResult(true, 0, "", at, false);
    }

    /** A success the backend knows the run reached on its own (a simulated run's modelled end). */
    public static RunResult succeededOnItsOwn(Instant at) {
        return new RunResult(true, 0, "", at, true);
    }

    public static RunResult failed(Integer exitCode, String message, Instant at) {
        return new RunResult(false, exitCode, message, at, false);
    }
}
