package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Follows a job until it ends: a line each time its state, wait, placement, queue position or newest checkpoint
 * changes (with JSON/YAML output, the job itself each time), then the exit code of its outcome.
 */
final class Watcher {
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());

    private final Cli root;

    Watcher(Cli root) {
        this.root = root;
    }

    /** How long the API may stay unreachable before a watch that reached it gives up, unless told otherwise. */
    static final Duration GIVE_UP_AFTER = Duration.ofMinutes(5);

    /**
     * @param timeout     how long to follow the job (null: until it ends)
     * @param giveUpAfter how long the API may stay unreachable (503, connection refused) before the watch ends
     *                    with {@link ExitCode#UNAVAILABLE}
     * @param reached     whether this command already had an answer from the API; if not, an unreachable API at
     *                    the first look ends the watch at once, as any other command (a mistyped address)
     */
    int watch(String jobId, Duration interval, Duration timeout, Duration giveUpAfter, boolean reached) {
        Output out = root.output();
        Instant deadline = timeout == null ? null : root.env().clock().instant().plus(timeout);
        Instant lastAnswer = root.env().clock().instant();
        boolean away = false;
        String lastKey = null;
        while (true) {
            JsonNode job;
            QueuePosition pos;
            try {
                job = root.job(jobId);
                pos = QueuePosition.of(root.client(), job);
            } catch (CliException e) {
                // a service restarting (503, connection refused) does not end a watch; anything else does
                Instant now = root.env().clock().instant();
                if (e.exitCode() != ExitCode.UNAVAILABLE || !reached
                        || (deadline != null && !now.isBefore(deadline))) {
                    throw e;
                }
                Instant giveUp = lastAnswer.plus(giveUpAfter);
                if (!now.isBefore(giveUp)) {
                    List<String> lines = new ArrayList<>(e.lines());
                    lines.add("gave up watching job " + jobId + ": no answer for " + Output.duration(giveUpAfter)
                            + "; it may still be running (gantry watch " + jobId + " when the API is back)");
                    throw new CliException(ExitCode.UNAVAILABLE, lines);
                }
                if (!away) {
                    // once per outage, not once per look
                    root.env().err().println("gantry: " + e.lines().get(0) + "; still watching (until "
                            + CLOCK.format(giveUp) + ")");
                    root.env().err().flush();
                    away = true;
                }
                pause(interval);
                continue;
            }
            if (away) {
                root.env().err().println("gantry: the API answers again");
                root.env().err().flush();
                away = false;
            }
            reached = true;
            lastAnswer = root.env().clock().instant();
            Instant now = root.env().clock().instant();
            String key = JobText.state(job) + "|" + job.path("attempt") + "|" + job.path("waitReason") + "|"
                    + job.path("waitMessage") + "|" + JobText.placements(job) + "|" + JobText.newestCheckpoint(job)
                    + "|" + (pos == null ? "" : pos.position() + "/" + pos.pending()) + "|" + job.path("preemption");
            if (!key.equals(lastKey)) {
                lastKey = key;
                if (out.format().machine()) {
                    ObjectNode copy = ((ObjectNode) job).deepCopy();
                    if (pos != null) {
                        copy.put("queuePosition", pos.position());
                        copy.put("queuePending", pos.pending());
                    }
                    if (out.format() == Output.Format.JSON) {
                        out.out().println(Output.jsonLine(copy));
                    } else {
                        out.out().print("---\n" + Output.yaml(copy));
                    }
                } else {
                    out.out().println(CLOCK.format(now) + "  " + JobText.line(job,
                            pos == null ? null : pos.position(), pos == null ? null : pos.pending(), now));
                }
                out.out().flush();
            }
            if (JobText.terminal(job)) {
                return switch (JobText.state(job)) {
                    case "SUCCEEDED" -> ExitCode.OK;
                    case "FAILED" -> ExitCode.JOB_FAILED;
                    default -> ExitCode.JOB_CANCELLED;
                };
            }
            if (deadline != null && !now.isBefore(deadline)) {
                root.env().err().println("gantry: job " + jobId + " is still " + JobText.state(job) + " after "
                        + Output.duration(timeout));
                return ExitCode.TIMEOUT;
            }
            pause(interval);
        }
    }

    static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCode.ERROR, "interrupted");
        }
    }

}
