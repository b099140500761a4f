package io.gantry.admission.core;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * One event about a job, from any topic, reduced to what the read model needs.
 *
 * @param eventId    the envelope's event id: the history holds each one once
 * @param occurredAt when the writer says it happened
 * @param kind       which event it was
 * @param attempt    the attempt it is about (for JobRequeued and JobRecoveryAbandoned: the interrupted one);
 *                   null for events that carry none (JobSubmitted, JobCancelRequested)
 * @param reason     an enum symbol where the event has one (wait, deferral or release reason); for AllocationGranted
 *                   the pool it was granted in; else null
 * @param message    a human sentence where the event has one, else null
 * @param placements for AllocationGranted: where each task replica was placed; else empty
 * @param deadline   for RunStopRequested: when placement kills what still runs of the attempt; for JobIdleWarned:
 *                   when the queue stops the run if its GPUs stay idle; else null
 * @param cause      for JobWaiting: what holds the job, typed (a QuotaWait symbol with QUOTA, a DeferralReason symbol
 *                   with CAPACITY); else null
 */
public record AdmissionFact(String eventId, Instant occurredAt, Kind kind, Integer attempt, String reason, String message,
                      List<Placement> placements, Instant deadline, String cause) {

    /** Every event kind that concerns a job, named as on the wire. */
    public enum Kind {
        JOB_SUBMITTED("JobSubmitted"),
        JOB_CANCEL_REQUESTED("JobCancelRequested"),
        JOB_QUEUED("JobQueued"),
        JOB_WAITING("JobWaiting"),
        JOB_DISPATCHED("JobDispatched"),
        QUOTA_RELEASED("QuotaReleased"),
        JOB_SUCCEEDED("JobSucceeded"),
        JOB_FAILED("JobFailed"),
        JOB_CANCELLED("JobCancelled"),
        ALLOCATION_GRANTED("AllocationGranted"),
        PLACEMENT_DEFERRED("PlacementDeferred"),
        JOB_RUN_STARTED("JobRunStarted"),
        JOB_RUN_SUCCEEDED("JobRunSucceeded"),
        JOB_RUN_FAILED("JobRunFailed"),
        ALLOCATION_RELEASED("AllocationReleased"),
        JOB_REQUEUED("JobRequeued"),
        JOB_RECOVERY_ABANDONED("JobRecoveryAbandoned"),
        RUN_STOP_REQUESTED("RunStopRequested"),
        JOB_SUSPEND_REQUESTED("JobSuspendRequested"),
        JOB_RESUME_REQUESTED("JobResumeRequested"),
        JOB_IDLE_WARNED("JobIdleWarned"),
        JOB_IDLE_CLEARED("JobIdleCleared");

        private final String eventType;

        Kind(String eventType) {
            this.eventType = eventType;
        }

        /** The Avro record name, as shown in a job's history. */
        public String eventType() {
            return eventType;
        }
    }

    /** The release reason that means the run was interrupted by a node failure rather than ended. */
    public static final String NODE_FAILED = "NODE_FAILED";

    public AdmissionFact {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(occurredAt, "occurredAt");
        Objects.requireNonNull(kind, "kind");
        placements = placements == null ? List.of() : List.copyOf(placements);
    }

    public AdmissionFact(String eventId, Instant occurredAt, Kind kind, Integer attempt, String reason, String message,
                         List<Placement> placements) {
        this(eventId, occurredAt, kind, attempt, reason, message, placements, null, null);
    }

    public static AdmissionFact of(String eventId, Instant occurredAt, Kind kind, Integer attempt) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, null, null, List.of());
    }

    public AdmissionFact withReason(String r) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, r, message, placements, deadline, cause);
    }

    public AdmissionFact withMessage(String m) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, reason, m, placements, deadline, cause);
    }

    public AdmissionFact withPlacements(List<Placement> p) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, reason, message, p, deadline, cause);
    }

    public AdmissionFact withCause(String c) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, reason, message, placements, deadline, c);
    }

    public AdmissionFact withDeadline(Instant d) {
        return new AdmissionFact(eventId, occurredAt, kind, attempt, reason, message, placements, d, cause);
    }

    public int attemptOrZero() {
        return attempt == null ? 0 : attempt;
    }

    /** One line for the history: the reason, the message, or where a grant put the tasks. */
    public String detail() {
        if (kind == Kind.ALLOCATION_GRANTED && !placements.isEmpty()) {
            return placements.stream()
                    .map(p -> p.task() + "[" + p.replica() + "] on " + p.nodeId() + " GPUs " + p.gpuIndices())
                    .collect(Collectors.joining(", "));
        }
        if (reason != null && message != null && !message.isBlank()) {
            return reason + ": " + message;
        }
        return reason != null ? reason : message;
    }
}
