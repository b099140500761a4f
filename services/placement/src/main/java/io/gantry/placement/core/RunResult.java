package io.gantry.placement.core;

import java.time.Instant;
import java.util.Objects;

/**
 * How a run ended, as its backend reported it.
 *
 * @param onItsOwn the backend knows the run did not end in answer to a stop: a simulated run ends when its modelled
 *                 run time does, whatever it was told (a real process may save and exit 0 on a stop notice, so a
 *                 real backend never says this; see {@link ClusterState#runEnded})
 * @param lost     the infrastructure ended it, not the job: the backend lost the run (placement restarted and its
 *                 processes were gone or had to be killed) or saw its node fail; released as {@code NODE_FAILED}, so
 *                 recovery requeues it from its newest checkpoint within its restart budget, not its retries
 */
public record RunResult(boolean succeeded, Integer exitCode, String message, Instant finishedAt, boolean onItsOwn,
                        boolean lost) {
    public RunResult {
        Objects.requireNonNull(finishedAt, "finishedAt");
        message = message == null ? "" : message;
        if (succeeded && lost) {
            throw new IllegalArgumentException("a lost run did not succeed");
        }
    }

    public static RunResult succeeded(Instant at) {
        return new RunResult(true, 0, "", at, false, false);
    }

    /** A success the backend knows the run reached on its own (a simulated run's modelled end). */
    public static RunResult succeededOnItsOwn(Instant at) {
        return new RunResult(true, 0, "", at, true, false);
    }

    public static RunResult failed(Integer exitCode, String message, Instant at) {
        return new RunResult(false, exitCode, message, at, false, false);
    }

    /** The infrastructure lost the run ({@link #lost}). */
    public static RunResult lost(String message, Instant at) {
        return new RunResult(false, null, message, at, false, true);
    }
}
