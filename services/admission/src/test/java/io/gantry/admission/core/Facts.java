package io.gantry.admission.core;

import io.gantry.admission.core.JobFact.Kind;

import java.time.Instant;
import java.util.List;

/** Fluent fixtures for job events; each call is one second later than the one before. */
final class Facts {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private int seconds;
    private int ids;

    JobFact submitted() {
        return fact(Kind.JOB_SUBMITTED, null);
    }

    JobFact queued(int attempt) {
        return fact(Kind.JOB_QUEUED, attempt);
    }

    JobFact waiting(int attempt, String reason, String message) {
        return fact(Kind.JOB_WAITING, attempt).withReason(reason).withMessage(message);
    }

    JobFact dispatched(int attempt) {
        return fact(Kind.JOB_DISPATCHED, attempt);
    }

    JobFact deferred(int attempt, String reason) {
        return fact(Kind.PLACEMENT_DEFERRED, attempt).withReason(reason).withMessage("needs 16 GPUs, 8 free");
    }

    JobFact granted(int attempt, String node, Integer... gpus) {
        return fact(Kind.ALLOCATION_GRANTED, attempt)
                .withPlacements(List.of(new Placement("worker", 0, node, "H100", List.of(gpus))));
    }

    JobFact runStarted(int attempt) {
        return fact(Kind.JOB_RUN_STARTED, attempt);
    }

    JobFact runSucceeded(int attempt) {
        return fact(Kind.JOB_RUN_SUCCEEDED, attempt);
    }

    JobFact released(int attempt, String reason) {
        return fact(Kind.ALLOCATION_RELEASED, attempt).withReason(reason);
    }

    JobFact requeued(int interruptedAttempt) {
        return fact(Kind.JOB_REQUEUED, interruptedAttempt).withMessage("node failed");
    }

    JobFact abandoned(int interruptedAttempt) {
        return fact(Kind.JOB_RECOVERY_ABANDONED, interruptedAttempt).withMessage("restart limit 3 reached");
    }

    JobFact succeeded(int attempt) {
        return fact(Kind.JOB_SUCCEEDED, attempt);
    }

    JobFact failed(int attempt) {
        return fact(Kind.JOB_FAILED, attempt).withMessage("exit 1");
    }

    JobFact cancelled(int attempt) {
        return fact(Kind.JOB_CANCELLED, attempt);
    }

    JobFact cancelRequested() {
        return fact(Kind.JOB_CANCEL_REQUESTED, null);
    }

    JobFact fact(Kind kind, Integer attempt) {
        return JobFact.of("e" + (++ids), T0.plusSeconds(++seconds), kind, attempt);
    }

    static JobStatus fold(List<JobFact> facts) {
        JobStatus s = JobStatus.submitted();
        for (JobFact f : facts) {
            s = s.apply(f);
        }
        return s;
    }
}
