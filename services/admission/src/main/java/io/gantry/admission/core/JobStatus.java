package io.gantry.admission.core;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What the read model knows about a job's progress, as a join-semilattice: {@link #apply(AdmissionFact)} only ever
 * keeps the greater of two values per component, so applying a set of events in any order, any number of times,
 * gives the same status. That matters because the events of one job come from four topics whose records the
 * consumer sees in no particular order relative to each other.
 *
 * <ul>
 *   <li>{@code progress}: the highest (attempt, rank) of the non-terminal states the events imply;</li>
 *   <li>{@code terminal}: set by the queue's JobSucceeded / JobFailed / JobCancelled, and then final (if, against
 *       the protocol, two differ, the higher (attempt, state) wins so that the answer is still deterministic);</li>
 *   <li>{@code waiting}: the latest wait-setting or wait-clearing event, by (attempt, time, protocol order, id);</li>
 *   <li>{@code grant}: the latest AllocationGranted, by the same key;</li>
 *   <li>{@code notice}: the latest RunStopRequested (the preemption notice), by (attempt, time, id);</li>
 *   <li>{@code idle}: the latest JobIdleWarned or JobIdleCleared (the queue's idle warning), by (attempt, time,
 *       protocol order, id).</li>
 * </ul>
 */
public record JobStatus(Progress progress, Terminal terminal, Mark waiting, Mark grant, Instant updatedAt,
                        Notice notice, Mark idle) {

    /** A non-terminal state reached in an attempt. */
    public record Progress(int attempt, JobState state) {
    }

    /** A terminal state and the attempt the queue reported with it. */
    public record Terminal(int attempt, JobState state) {
    }

    /**
     * A time-ordered marker: a wait reason set or cleared, or an allocation granted.
     *
     * @param order breaks ties between events of the same millisecond in protocol order (a deferral follows the
     *              dispatch it defers)
     */
    public record Mark(int attempt, Instant at, int order, String eventId, boolean set, String reason,
                       String message, List<Placement> placements, String cause) {
        public Mark {
            placements = placements == null ? List.of() : List.copyOf(placements);
        }
    }

    /**
     * Placement asked a run to stop: why, and when what still runs is killed.
     *
     * @param reason the release reason the run will end with
     */
    public record Notice(int attempt, Instant at, String eventId, String reason, String message, Instant deadline) {
        public Notice {
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(eventId, "eventId");
            Objects.requireNonNull(deadline, "deadline");
        }
    }

    private static final Comparator<Notice> NOTICE = Comparator.comparingInt(Notice::attempt)
            .thenComparing(Notice::at).thenComparing(Notice::eventId);
    private static final Comparator<Progress> PROGRESS =
            Comparator.comparingInt(Progress::attempt).thenComparingInt(p -> p.state().rank());
    private static final Comparator<Terminal> TERMINAL =
            Comparator.comparingInt(Terminal::attempt).thenComparingInt(t -> t.state().ordinal());
    private static final Comparator<Mark> MARK = Comparator.comparingInt(Mark::attempt)
            .thenComparing(Mark::at)
            .thenComparingInt(Mark::order)
            .thenComparing(Mark::eventId);

    public JobStatus {
        Objects.requireNonNull(progress, "progress");
    }

    /** A job that has been submitted and nothing else is known about yet. */
    public static JobStatus submitted() {
        return new JobStatus(new Progress(0, JobState.SUBMITTED), null, null, null, null, null, null);
    }

    /** This status joined with what {@code fact} implies. */
    public JobStatus apply(AdmissionFact fact) {
        return new JobStatus(
                max(progress, progressOf(fact), PROGRESS),
                max(terminal, terminalOf(fact), TERMINAL),
                max(waiting, waitOf(fact), MARK),
                max(grant, grantOf(fact), MARK),
                updatedAt == null || fact.occurredAt().isAfter(updatedAt) ? fact.occurredAt() : updatedAt,
                max(notice, noticeOf(fact), NOTICE),
                max(idle, idleOf(fact), MARK));
    }

    /**
     * The queue's idle warning of the current run while it runs and the warning stands (its message says when the
     * run is stopped unless its GPUs become busy); null otherwise.
     */
    public Mark idleWarning() {
        JobState s = state();
        return idle != null && idle.set() && idle.attempt() == attempt()
                && (s == JobState.DISPATCHED || s == JobState.RUNNING) ? idle : null;
    }

    /**
     * The preemption notice of the current run while it still runs: placement asked it to stop and kills it at
     * {@link Notice#deadline()}; null otherwise (no notice, an earlier attempt's, or the job ended or is queued again).
     */
    public Notice preemption() {
        JobState s = state();
        return notice != null && notice.attempt() == attempt() && !s.isTerminal() && s != JobState.QUEUED
                && s != JobState.INTERRUPTED ? notice : null;
    }

    public JobState state() {
        if (terminal != null) {
            return terminal.state();
        }
        // a dispatched job that placement deferred is parked back in its queue: the user sees it QUEUED, with why
        if (progress.state() == JobState.DISPATCHED && waiting != null && waiting.set()
                && waiting.attempt() == progress.attempt()) {
            return JobState.QUEUED;
        }
        return progress.state();
    }

    public int attempt() {
        return terminal != null ? Math.max(terminal.attempt(), progress.attempt()) : progress.attempt();
    }

    /** Why the job is not running yet, while it is waiting; null otherwise. */
    public String waitReason() {
        return isWaiting() ? waiting.reason() : null;
    }

    public String waitMessage() {
        return isWaiting() ? waiting.message() : null;
    }

    /**
     * What holds the waiting job, typed, when the services said: with QUOTA a QuotaWait symbol (e.g. COHORT_FULL,
     * HELD_FOR_STARVING_JOB), with CAPACITY placement's DeferralReason (e.g. FRAGMENTED); else null.
     */
    public String waitCause() {
        return isWaiting() ? waiting.cause() : null;
    }

    /**
     * When the wait's reason and message were said (the event's time): its figures are as of then (a parked gang's
     * placement message is not said again until capacity changes in a way that might let it fit); null when not
     * waiting.
     */
    public Instant waitSince() {
        return isWaiting() ? waiting.at() : null;
    }

    private boolean isWaiting() {
        JobState s = state();
        return waiting != null && waiting.set()
                && (s == JobState.SUBMITTED || s == JobState.QUEUED || s == JobState.DISPATCHED);
    }

    /** The pool the current attempt was granted in; null before the grant or once a new attempt began. */
    public String pool() {
        return grant != null && grant.attempt() == attempt() ? grant.reason() : null;
    }

    /** Where the current attempt's tasks were placed; empty before the grant or once a new attempt began. */
    public List<Placement> placements() {
        return grant != null && grant.attempt() == attempt() ? grant.placements() : List.of();
    }

    private static Progress progressOf(AdmissionFact f) {
        int a = f.attemptOrZero();
        return switch (f.kind()) {
            case JOB_SUBMITTED -> new Progress(0, JobState.SUBMITTED);
            case JOB_QUEUED, JOB_WAITING -> new Progress(a, JobState.QUEUED);
            // a grant or a deferral answers a dispatch, so it implies one even if the dispatch is not here yet
            case JOB_DISPATCHED, ALLOCATION_GRANTED, PLACEMENT_DEFERRED -> new Progress(a, JobState.DISPATCHED);
            case JOB_RUN_STARTED, JOB_RUN_SUCCEEDED, JOB_RUN_FAILED -> new Progress(a, JobState.RUNNING);
            case ALLOCATION_RELEASED -> AdmissionFact.NODE_FAILED.equals(f.reason())
                    ? new Progress(a, JobState.INTERRUPTED) : null;
            case JOB_RECOVERY_ABANDONED -> new Progress(a, JobState.INTERRUPTED);
            // recovery puts the job back in the queue as the next attempt
            case JOB_REQUEUED -> new Progress(a + 1, JobState.QUEUED);
            // requests are history: the queue's JobWaiting (SUSPENDED) and JobPreempted say what they did
            case JOB_CANCEL_REQUESTED, QUOTA_RELEASED, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED,
                 JOB_SUSPEND_REQUESTED, JOB_RESUME_REQUESTED, RUN_STOP_REQUESTED, JOB_IDLE_WARNED,
                 JOB_IDLE_CLEARED -> null;
        };
    }

    private static Terminal terminalOf(AdmissionFact f) {
        return switch (f.kind()) {
            case JOB_SUCCEEDED -> new Terminal(f.attemptOrZero(), JobState.SUCCEEDED);
            case JOB_FAILED -> new Terminal(f.attemptOrZero(), JobState.FAILED);
            case JOB_CANCELLED -> new Terminal(f.attemptOrZero(), JobState.CANCELLED);
            default -> null;
        };
    }

    private static Mark waitOf(AdmissionFact f) {
        return switch (f.kind()) {
            case JOB_DISPATCHED -> mark(f, 0, false, null, null);
            case PLACEMENT_DEFERRED -> mark(f, 1, true, "CAPACITY", "placement deferred: " + f.detail(), f.reason());
            case JOB_WAITING -> mark(f, 2, true, f.reason(), f.message(), f.cause());
            case ALLOCATION_GRANTED -> mark(f, 3, false, null, null);
            case JOB_RUN_STARTED -> mark(f, 4, false, null, null);
            default -> null;
        };
    }

    private static Notice noticeOf(AdmissionFact f) {
        if (f.kind() != AdmissionFact.Kind.RUN_STOP_REQUESTED || f.deadline() == null) {
            return null;
        }
        return new Notice(f.attemptOrZero(), f.occurredAt(), f.eventId(), f.reason(), f.message(), f.deadline());
    }

    private static Mark idleOf(AdmissionFact f) {
        return switch (f.kind()) {
            case JOB_IDLE_WARNED -> mark(f, 0, true, "IDLE", f.message());
            case JOB_IDLE_CLEARED -> mark(f, 1, false, null, f.message());
            default -> null;
        };
    }

    private static Mark grantOf(AdmissionFact f) {
        if (f.kind() != AdmissionFact.Kind.ALLOCATION_GRANTED) {
            return null;
        }
        return new Mark(f.attemptOrZero(), f.occurredAt(), 0, f.eventId(), true, f.reason(), null, f.placements(),
                null);
    }

    private static Mark mark(AdmissionFact f, int order, boolean set, String reason, String message) {
        return mark(f, order, set, reason, message, null);
    }

    private static Mark mark(AdmissionFact f, int order, boolean set, String reason, String message, String cause) {
        return new Mark(f.attemptOrZero(), f.occurredAt(), order, f.eventId(), set, reason, message, List.of(), cause);
    }

    private static <T> T max(T current, T candidate, Comparator<T> order) {
        if (candidate == null) {
            return current;
        }
        if (current == null) {
            return candidate;
        }
        return order.compare(candidate, current) > 0 ? candidate : current;
    }
}
