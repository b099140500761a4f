package io.gantry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gantry.cli.api.ApiClient;
import io.gantry.cli.api.ApiError;
import io.gantry.cli.output.Output;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "why", mixinStandardHelpOptions = true,
        description = "Why a job waits (or was preempted, requeued, ended), and how its queue's "
        + "quota stands.")
final class WhyCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(index = "0", paramLabel = "JOB")
    String jobId;

    @Override
    public Integer call() {
        JsonNode job = root.job(jobId);
        QueuePosition pos = QueuePosition.of(root.client(), job);
        JsonNode queue = queueRow(JobText.queue(job));
        Instant now = root.env().clock().instant();
        List<String> because = explain(job, pos, now);
        List<String> quota = queue == null ? List.of() : quota(queue);
        ObjectNode answer = ApiClient.JSON.createObjectNode();
        answer.put("jobId", job.path("jobId").asText());
        answer.put("state", JobText.state(job));
        answer.put("attempt", job.path("attempt").asInt());
        answer.set("waitReason", job.path("waitReason"));
        answer.set("waitMessage", job.path("waitMessage"));
        answer.set("waitCause", job.path("waitCause"));
        answer.set("waitSince", job.path("waitSince"));
        answer.set("explanation", ApiClient.JSON.valueToTree(because));
        if (pos != null) {
            answer.put("queuePosition", pos.position());
            answer.put("queuePending", pos.pending());
        }
        answer.set("queue", queue == null ? ApiClient.JSON.nullNode() : queue);
        root.output().show(answer, () -> {
            StringBuilder s = new StringBuilder();
            s.append("job ").append(job.path("jobId").asText()).append(" (").append(job.path("name").asText())
                    .append(") is ").append(JobText.state(job)).append(", attempt ")
                    .append(job.path("attempt").asInt()).append('\n');
            because.forEach(l -> s.append("  ").append(l).append('\n'));
            if (!quota.isEmpty()) {
                s.append('\n');
                quota.forEach(l -> s.append(l).append('\n'));
            }
            return s.toString();
        });
        return ExitCode.OK;
    }

    static List<String> explain(JsonNode job, QueuePosition pos, Instant now) {
        List<String> out = new ArrayList<>();
        String state = JobText.state(job);
        String reason = JobText.text(job, "waitReason");
        String message = JobText.text(job, "waitMessage");
        switch (state) {
            case "SUBMITTED" -> out.add("accepted; the queue has not taken it in yet (this takes a moment)");
            case "QUEUED", "DISPATCHED" -> {
                if (reason != null) {
                    out.add("waits because " + JobText.waitWords(reason, JobText.text(job, "waitCause")) + ".");
                    if (message != null && !message.isBlank()) {
                        String since = JobText.text(job, "waitSince");
                        out.add((reason.equals("CAPACITY") ? "placement says" : "the queue says")
                                + (since == null ? "" : " (" + Output.age(since, now) + " ago)") + ": " + message);
                    }
                } else {
                    out.add(state.equals("QUEUED") ? "is in its queue, next to be offered to placement when its "
                            + "turn and quota come" : "has been offered to placement, which is finding GPUs for it");
                }
                if (pos != null) {
                    out.add("it is " + JobText.ordinal(pos.position()) + " of " + pos.pending() + " pending jobs in "
                            + "queue " + JobText.queue(job) + ".");
                }
            }
            case "RUNNING" -> {
                Instant started = JobText.runStarted(job);
                out.add("is running" + (started == null ? "" : " for " + Output.duration(Duration.between(started, now)))
                        + ": " + JobText.placements(job));
                String stopping = JobText.preemption(job, now);
                if (stopping != null) {
                    out.add("it is " + stopping + ".");
                }
            }
            case "INTERRUPTED" -> out.add("its run was interrupted; recovery decides whether it runs again");
            default -> {
                String ending = JobText.ending(job);
                Duration ran = JobText.ranFor(job);
                out.add("ended " + state + (ending == null || ending.isBlank() ? "" : ": " + ending)
                        + (ran == null ? "" : " after running " + Output.duration(ran)));
            }
        }
        // a run that ended before the current attempt: preempted, its node failed, requeued
        JsonNode released = JobText.last(job, "AllocationReleased");
        if (released != null && job.path("attempt").asInt() > released.path("attempt").asInt()) {
            out.add("attempt " + released.path("attempt").asInt() + " was stopped: "
                    + JobText.text(released, "detail") + "; the job went back to its queue keeping its place");
        }
        JsonNode resumed = JobText.last(job, "JobRequeued");
        if (resumed != null && JobText.text(resumed, "detail") != null) {
            out.add("requeued: " + JobText.text(resumed, "detail"));
        }
        return out;
    }

    private JsonNode queueRow(String name) {
        if (name == null) {
            return null;
        }
        try {
            for (JsonNode q : root.client().get(ApiClient.Service.QUEUE, "/v1/queues").path("queues")) {
                if (name.equals(q.path("name").asText())) {
                    return q;
                }
            }
        } catch (ApiError e) {
            return null;
        }
        return null;
    }

    static List<String> quota(JsonNode q) {
        List<String> out = new ArrayList<>();
        String cohort = JobText.text(q, "cohort");
        out.add("queue " + q.path("name").asText() + " (tenant " + q.path("tenant").asText()
                + (cohort == null ? "" : ", cohort " + cohort) + "): " + JobText.amount(q, "reservedGpus") + " of "
                + JobText.amount(q, "quotaGpus") + " GPUs of quota in use; " + q.path("pending").asInt() + " pending ("
                + q.path("parked").asInt() + " parked), " + q.path("dispatched").asInt() + " dispatched");
        for (JsonNode f : q.path("flavours")) {
            out.add("  " + f.path("flavour").asText() + ": " + JobText.amount(f, "used") + " used of "
                    + JobText.amount(f, "nominal") + " nominal, " + JobText.amount(f, "borrowed") + " borrowed, "
                    + JobText.amount(f, "lent") + " lent; " + (cohort == null
                    ? "no cohort: neither borrows nor lends"
                    : "may borrow " + limit(f.path("borrowingLimit")) + ", may lend " + limit(f.path("lendingLimit"))));
        }
        return out;
    }

    private static String limit(JsonNode n) {
        return n.isNumber() ? n.asText() : "without limit";
    }
}
