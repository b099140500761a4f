package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gantry.cli.output.Output;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** A job as the API shows it ({@code GET /v1/jobs/{id}}), told in words. */
final class JobText {
    static final Set<String> TERMINAL = Set.of("SUCCEEDED", "FAILED", "CANCELLED");

    private JobText() {
    }

    static String state(JsonNode job) {
        return job.path("state").asText();
    }

    static boolean terminal(JsonNode job) {
        return TERMINAL.contains(state(job));
    }

    /** A number of the API as people read it: {@code 2}, {@code 2.5} (GPU quotas count shares in thousandths). */
    static String amount(JsonNode n, String field) {
        JsonNode v = n.path(field);
        if (!v.isNumber()) {
            return v.isMissingNode() || v.isNull() ? "0" : v.asText();
        }
        return v.decimalValue().stripTrailingZeros().toPlainString();
    }

    static String text(JsonNode n, String field) {
        JsonNode v = n.path(field);
        return v.isMissingNode() || v.isNull() ? null : v.asText();
    }

    /** The queue the job waits in: the one it named, else the tenant's own (the implicit default). */
    static String queue(JsonNode job) {
        String q = text(job.path("spec"), "queue");
        return q != null ? q : text(job, "tenant");
    }

    /** What a wait reason (WaitReason in schemas) means for the user. */
    /** {@link #waitWords(String)}, finer where the wait's typed cause says more (its quota allows it, but it waits). */
    static String waitWords(String reason, String cause) {
        if ("QUOTA".equals(reason) && "TURN".equals(cause)) {
            return "its quota allows it, and jobs ahead of it in its queue go first";
        }
        return waitWords(reason);
    }

    static String waitWords(String reason) {
        if (reason == null) {
            return null;
        }
        return switch (reason) {
            case "QUOTA" -> "its queue's GPU quota is in use: running it now would exceed the quota (nominal plus "
                    + "what its cohort can lend), or the quota is held for a starving job ahead of it; it starts "
                    + "when quota frees";
            case "CAPACITY" -> "the quota allows it, but the cluster has no room for it as asked right now; it is "
                    + "tried again when capacity frees";
            case "NEVER_FITS" -> "it asks for more than its queue could ever get, or for a queue or GPU flavour its "
                    + "tenant does not have; it cannot start unless the queue configuration changes";
            case "DEPENDENCY" -> "a job it depends on has not ended as it asks (afterok: succeeded, afterany: ended, "
                    + "afternotok: failed); it charges no quota meanwhile, and is cancelled if that can no longer happen";
            case "SUSPENDED" -> "it is suspended; `gantry resume` puts it back in its place in its queue";
            case "BUDGET" -> "the monthly money budget of its tenant or queue is exhausted and set to hold new work; "
                    + "it starts when the budget is raised or the month ends";
            case "BACKOFF" -> "its last run failed and it is retried under its retry policy, after a backoff; it is "
                    + "offered again when the backoff ends";
            default -> "waiting (" + reason + ")";
        };
    }

    static String placements(JsonNode job) {
        List<String> parts = new ArrayList<>();
        for (JsonNode p : job.path("placements")) {
            List<String> gpus = new ArrayList<>();
            p.path("gpuIndices").forEach(i -> gpus.add(i.asText()));
            parts.add(p.path("task").asText() + "[" + p.path("replica").asText() + "] on " + p.path("node").asText()
                    + (gpus.isEmpty() ? "" : " GPUs " + String.join(",", gpus)));
        }
        return String.join(", ", parts);
    }

    /** The latest history entry of one of the types, or null. */
    static JsonNode last(JsonNode job, String... types) {
        JsonNode found = null;
        for (JsonNode h : job.path("history")) {
            for (String t : types) {
                if (t.equals(h.path("type").asText())) {
                    found = h;
                }
            }
        }
        return found;
    }

    /** When the current attempt's run started, or null. */
    static Instant runStarted(JsonNode job) {
        int attempt = job.path("attempt").asInt();
        Instant start = null;
        for (JsonNode h : job.path("history")) {
            if ("JobRunStarted".equals(h.path("type").asText()) && h.path("attempt").asInt() == attempt) {
                start = Instant.parse(h.path("occurredAt").asText());
            }
        }
        return start;
    }

    /** How long the last run of an ended job ran (its start to the job's end), or null if it never ran. */
    static Duration ranFor(JsonNode job) {
        Instant started = runStarted(job);
        JsonNode end = last(job, "JobSucceeded", "JobFailed", "JobCancelled");
        if (started == null || end == null) {
            return null;
        }
        return Duration.between(started, Instant.parse(end.path("occurredAt").asText()));
    }

    /** The newest reported checkpoint step, or null. */
    static String newestCheckpoint(JsonNode job) {
        JsonNode c = job.path("checkpoints");
        return c.isArray() && c.size() > 0 ? c.get(0).path("step").asText() : null;
    }

    /** Why the job ended, from its terminal event (JobFailed TIME_LIMIT: ..., JobRunFailed ...). */
    static String ending(JsonNode job) {
        JsonNode e = last(job, "JobSucceeded", "JobFailed", "JobCancelled");
        String detail = e == null ? null : text(e, "detail");
        if ("FAILED".equals(state(job))) {
            JsonNode run = last(job, "JobRunFailed");
            if ((detail == null || detail.isBlank()) && run != null) {
                detail = text(run, "detail");
            }
        }
        return detail;
    }

    /**
     * The run's preemption notice in words ("being stopped: why; killed in 25s unless it exits"), or null while the
     * run is not being stopped.
     */
    static String preemption(JsonNode job, Instant now) {
        JsonNode n = job.path("preemption");
        if (!n.isObject()) {
            return null;
        }
        String left = "";
        try {
            Duration d = Duration.between(now, Instant.parse(n.path("deadline").asText()));
            left = d.isNegative() ? "; its grace period is over" : "; stopped for good in " + Output.duration(d)
                    + " unless it exits (a checkpoint saved before then is kept)";
        } catch (java.time.DateTimeException e) {
            // no deadline to tell
        }
        return "being stopped: " + n.path("message").asText("preempted") + left;
    }

    /** The line `watch` shows for a job: its state and what it is doing or waiting for. */
    static String line(JsonNode job, Integer position, Integer pending, Instant now) {
        String state = state(job);
        StringBuilder s = new StringBuilder(String.format("%-10s", state));
        int attempt = job.path("attempt").asInt();
        if (attempt > 1) {
            s.append(" attempt ").append(attempt);
        }
        String reason = text(job, "waitReason");
        switch (state) {
            case "SUBMITTED" -> s.append(" accepted; the queue has not taken it yet");
            case "QUEUED", "DISPATCHED" -> {
                if (reason != null) {
                    s.append(" waiting: ").append(reason);
                    String msg = text(job, "waitMessage");
                    if (msg != null && !msg.isBlank()) {
                        s.append(" (").append(msg).append(')');
                    }
                } else {
                    s.append(state.equals("QUEUED") ? " in its queue" : " being placed");
                }
                if (position != null) {
                    s.append("; ").append(ordinal(position)).append(" of ").append(pending).append(" in queue ")
                            .append(queue(job));
                }
            }
            case "RUNNING" -> {
                s.append(' ').append(placements(job));
                Instant started = runStarted(job);
                if (started != null) {
                    s.append("; running ").append(Output.duration(Duration.between(started, now)));
                }
                JsonNode limit = job.path("spec").path("timeLimitSeconds");
                if (limit.isNumber()) {
                    s.append(" of at most ").append(Output.duration(Duration.ofSeconds(limit.asLong())));
                }
                String ckpt = newestCheckpoint(job);
                if (ckpt != null) {
                    s.append("; checkpoint step ").append(ckpt);
                }
                String stopping = preemption(job, now);
                if (stopping != null) {
                    s.append("; ").append(stopping);
                }
            }
            case "INTERRUPTED" -> {
                JsonNode r = last(job, "AllocationReleased", "JobRecoveryAbandoned");
                s.append(" its run was interrupted").append(r == null ? "" : ": " + text(r, "detail"));
            }
            default -> {
                String ending = ending(job);
                if (ending != null && !ending.isBlank()) {
                    s.append(' ').append(ending);
                }
                Duration ran = ranFor(job);
                if (ran != null) {
                    s.append(" after running ").append(Output.duration(ran));
                }
            }
        }
        return s.toString().stripTrailing();
    }

    static String ordinal(int n) {
        String suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                : switch (n % 10) {
                    case 1 -> "st";
                    case 2 -> "nd";
                    case 3 -> "rd";
                    default -> "th";
                };
        return n + suffix;
    }
}
