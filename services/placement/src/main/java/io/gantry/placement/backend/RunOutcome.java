package io.gantry.placement.backend;

import io.gantry.placement.core.RunResult;

import java.time.Instant;

/** A backend's report that a run ended. */
public record RunOutcome(String allocationId, RunResult result) {

    public static RunOutcome succeeded(String allocationId, Instant at) {
        return new RunOutcome(allocationId, RunResult.succeeded(at));
    }

    /** A success the backend knows the run reached on its own, not in answer to a stop (a simulated run's end). */
    public static RunOutcome succeededOnItsOwn(String allocationId, Instant at) {
        return new RunOutcome(allocationId, RunResult.succeededOnItsOwn(at));
    }

    public static RunOutcome failed(String allocationId, Integer exitCode, String message, Instant at) {
        return new RunOutcome(allocationId, RunResult.failed(exitCode, message, at));
    }

    /** The infrastructure lost the run (see {@link RunResult#lost()}): requeued by recovery, not a failure of the job. */
    public static RunOutcome lost(String allocationId, String message, Instant at) {
        return new RunOutcome(allocationId, RunResult.lost(message, at));
    }
}
