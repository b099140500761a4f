package io.gantry.placement.backend;

import io.gantry.placement.core.PlacementFact;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What a run is told when placement asks it to stop: why, and when its tasks are killed if they have not exited.
 * Published as {@code RunStopRequested} (the API answers the run with it) and handed to the backend before SIGTERM,
 * which puts it where the tasks can read it without the network (the local backend's notice file, a pod
 * annotation). A task that commits a checkpoint before {@code deadline} resumes from it.
 *
 * @param reason   the release reason the run will end with ({@code PREEMPTED}, or {@code IDLE} for an idle stop)
 * @param message  the sentence: who takes the GPUs and why
 * @param noticeAt when the stop was asked
 * @param deadline when what still runs is killed
 */
public record PreemptionNotice(String jobId, int attempt, String reason, String message, Instant noticeAt,
                               Instant deadline) {

    /** The notice file's name in a local run's directory (its path is the task's {@code GANTRY_PREEMPTION_NOTICE}). */
    public static final String FILE = "gantry-preemption.json";

    public PreemptionNotice {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(noticeAt, "noticeAt");
        Objects.requireNonNull(deadline, "deadline");
        message = message == null || message.isBlank() ? "the run is preempted" : message;
    }

    /** The notice of {@code stop}, asked at {@code now}. */
    public static PreemptionNotice of(PlacementFact.PreemptionRequested stop, Instant now) {
        return new PreemptionNotice(stop.allocation().jobId(), stop.allocation().attempt(), stop.reason().name(), stop.why(),
                now, stop.deadline());
    }

    /** Whole seconds from the notice to the deadline (never negative; saturated at an int). */
    public int graceSeconds() {
        long s = Math.max(0, Duration.between(noticeAt, deadline).toSeconds());
        return (int) Math.min(Integer.MAX_VALUE, s);
    }

    /** The notice as one JSON object, the shape {@code GET /v1/jobs/{id}/preemption} answers with. */
    public String json() {
        return "{\"preempting\":true,\"jobId\":" + quote(jobId) + ",\"attempt\":" + attempt + ",\"reason\":"
                + quote(reason) + ",\"message\":" + quote(message) + ",\"noticeAt\":" + quote(noticeAt.toString())
                + ",\"deadline\":" + quote(deadline.toString()) + ",\"graceSeconds\":" + graceSeconds() + "}\n";
    }

    private static String quote(String s) {
        return '"' + new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(s)) + '"';
    }
}
