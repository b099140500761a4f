package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.output.Output;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;

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

    int watch(String jobId, Duration interval, Duration timeout) {
        Output out = root.output();
        Instant deadline = timeout == null ? null : root.env().clock().instant().plus(timeout);
        String lastKey = null;
        while (true) {
            JsonNode job;
            QueuePosition pos;
            try {
                job = root.job(jobId);
                pos = QueuePosition.of(root.client(), job);
            } catch (CliException e) {
                // a service restarting (503, connection refused) does not end a watch; anything else does
                if (e.exitCode() != ExitCode.UNAVAILABLE || (deadline != null
                        && !root.env().clock().instant().isBefore(deadline))) {
                    throw e;
                }
                root.env().err().println("gantry: " + e.lines().get(0) + "; still watching");
                root.env().err().flush();
                pause(interval);
                continue;
            }
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
