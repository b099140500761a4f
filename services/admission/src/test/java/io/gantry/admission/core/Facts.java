package io.gantry.admission.core;

import io.gantry.admission.core.AdmissionFact.Kind;

import java.time.Instant;
import java.util.List;

/** Fluent fixtures for job events; each call is one second later than the one before. */
final class Facts {
    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    private int seconds;
    private int ids;

    AdmissionFact submitted() {
        return fact(Kind.JOB_SUBMITTED, null);
    }

    AdmissionFact queued(int attempt) {
        return fact(Kind.JOB_QUEUED, attempt);
    }

    AdmissionFact waiting(int attempt, String reason, String message) {
        return fact(Kind.JOB_WAITING, attempt).withReason(reason).withMessage(message);
    }

    AdmissionFact dispatched(int attempt) {
        return fact(Kind.JOB_DISPATCHED, attempt);
    }

    AdmissionFact deferred(int attempt, String reason) {
        return fact(Kind.PLACEMENT_DEFERRED, attempt).withReason(reason).withMessage("needs 16 GPUs, 8 free");
    }

    AdmissionFact granted(int attempt, String node, Integer... gpus) {
        return fact(Kind.ALLOCATION_GRANTED, attempt)
                .withPlacements(List.of(new Placement("worker", 0, node, "H100", List.of(gpus))));
    }

    AdmissionFact runStarted(int attempt) {
        return fact(Kind.JOB_RUN_STARTED, attempt);
    }

    AdmissionFact runSucceeded(int attempt) {
        return fact(Kind.JOB_RUN_SUCCEEDED, attempt);
    }

    AdmissionFact released(int attempt, String reason) {
        return fact(Kind.ALLOCATION_RELEASED, attempt).withReason(reason);
    }

    AdmissionFact requeued(int interruptedAttempt) {
        return fact(Kind.JOB_REQUEUED, interruptedAttempt).withMessage("node failed");
    }

    AdmissionFact abandoned(int interruptedAttempt) {
        return fact(Kind.JOB_RECOVERY_ABANDONED, interruptedAttempt).withMessage("restart limit 3 reached");
    }

    AdmissionFact succeeded(int attempt) {
        return fact(Kind.JOB_SUCCEEDED, attempt);
    }

    AdmissionFact failed(int attempt) {
        return fact(Kind.JOB_FAILED, attempt).withMessage("exit 1");
    }

    AdmissionFact cancelled(int attempt) {
        return fact(Kind.JOB_CANCELLED, attempt);
    }

    AdmissionFact stopRequested(int attempt, String message, int graceSeconds) {
        AdmissionFact f = fact(Kind.RUN_STOP_REQUESTED, attempt).withReason("PREEMPTED").withMessage(message);
        return f.withDeadline(f.occurredAt().plusSeconds(graceSeconds));
    }

    AdmissionFact idleWarned(int attempt, String message) {
        return fact(Kind.JOB_IDLE_WARNED, attempt).withReason("IDLE").withMessage(message);
    }

    AdmissionFact idleCleared(int attempt) {
        return fact(Kind.JOB_IDLE_CLEARED, attempt).withMessage("GPUs busy again; the idle warning no longer stands");
    }

    AdmissionFact cancelRequested() {
        return fact(Kind.JOB_CANCEL_REQUESTED, null);
    }

    AdmissionFact fact(Kind kind, Integer attempt) {
        return AdmissionFact.of("e" + (++ids), T0.plusSeconds(++seconds), kind, attempt);
    }

    static JobStatus fold(List<AdmissionFact> facts) {
        JobStatus s = JobStatus.submitted();
        for (AdmissionFact f : facts) {
            s = s.apply(f);
        }
        return s;
    }
}
