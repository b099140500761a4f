package io.gantry.admission.http;

import io.gantry.admission.core.CheckpointReport;
import io.gantry.admission.core.JobSpec;
import io.gantry.admission.db.CheckpointRow;
import io.gantry.admission.db.JobRecord;
import io.gantry.admission.db.JobStore;
import io.gantry.admission.kafka.EventPublisher;
import io.gantry.admission.kafka.EventPublisher.PublishFailedException;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.TokenAuthFilter;
import io.gantry.schemas.Topics;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checkpoints: a running task reports one it committed, authenticated by its run's own token (GANTRY_RUN_TOKEN,
 * whose hash the grant carried), so a task can report for its own run only; the job's tenant (or an admin) lists
 * them. Each accepted report is a CheckpointCommitted on {@code admission.checkpoint-events}.
 */
@Controller("/v1/jobs/{id}/checkpoints")
@ExecuteOn(TaskExecutors.BLOCKING)
public class CheckpointsController {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CheckpointsController.class);
    static final int SHOWN = 20;
    private static final int MAX_LISTED = 1000;

    private final JobStore store;
    private final EventPublisher publisher;
    private final Clock clock;

    public CheckpointsController(JobStore store, EventPublisher publisher, Clock clock) {
        this.store = store;
        this.publisher = publisher;
        this.clock = clock;
    }

    @Post(consumes = MediaType.ALL)
    public HttpResponse<?> report(@PathVariable String id,
                                  @Nullable @RequestAttribute(TokenAuthFilter.RUN_TOKEN_ATTRIBUTE) String runToken,
                                  @Nullable @Header("Content-Type") String contentType,
                                  @Nullable @Body byte[] body) {
        if (runToken == null) {
            return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "checkpoints are reported by the run itself, "
                    + "with its run token (GANTRY_RUN_TOKEN), not with a tenant's token", List.of());
        }
        if (!JobIds.plausible(id)) {
            return JobIds.badId("id", id);
        }
        RunTokenGuard.Outcome run = RunTokenGuard.check(store, id, runToken);
        if (run.refusal() != null) {
            return run.refusal();
        }
        JobRecord job = run.job();
        int attempt = run.attempt();
        Object tree;
        try {
            tree = JsonBody.parse(contentType, body);
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        }
        CheckpointReport.Parsed parsed = CheckpointReport.parse(tree, declared(job));
        if (!parsed.isValid()) {
            return Problem.badRequest(parsed.errors().stream()
                    .map(e -> new Problem.FieldError(e.field(), e.message())).toList());
        }
        CheckpointReport r = parsed.report();
        Instant now = clock.instant();
        String eventId = r.eventId(id, attempt);
        CheckpointEvent event = CheckpointEvent.newBuilder().setEventId(eventId).setJobId(id).setOccurredAt(now)
                .setPayload(CheckpointCommitted.newBuilder().setTenant(job.tenant()).setAttempt(attempt)
                        .setStep(r.step()).setPath(r.path()).setSizeBytes(r.sizeBytes()).setSaveMillis(r.saveMillis())
                        .setReportedVia("api").setCommittedAt(now).build())
                .build();
        try {
            publisher.publish(Topics.ADMISSION_CHECKPOINT_EVENTS, id, event);
        } catch (PublishFailedException e) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Service unavailable",
                    "the checkpoint could not be recorded (Kafka did not acknowledge it); retry", List.of())
                    .header("Retry-After", "5");
        }
        try {
            store.recordCheckpoint(new CheckpointRow(eventId, id, attempt, r.step(), r.path(), r.sizeBytes(),
                    r.saveMillis(), now));
        } catch (RuntimeException e) {
            // on the log already; the read-model consumer records it from there
            LOG.warn("checkpoint {} of job {} published but not yet in the read model: {}", eventId, id, e.toString());
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jobId", id);
        answer.put("attempt", attempt);
        answer.put("step", r.step());
        return HttpResponse.accepted().body(answer);
    }

    @Get
    public HttpResponse<?> list(@PathVariable String id,
                                @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        if (!JobIds.plausible(id)) {
            return JobIds.badId("id", id);
        }
        if (caller == null || store.find(id).filter(j -> caller.mayAccess(j.tenant())).isEmpty()) {
            return Problem.notFound("no job " + id);
        }
        return HttpResponse.ok(Map.of("checkpoints", views(store.checkpoints(id, MAX_LISTED))));
    }

    static List<Map<String, Object>> views(List<CheckpointRow> rows) {
        return rows.stream().map(c -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("attempt", c.attempt());
            m.put("step", c.step());
            m.put("path", c.path());
            m.put("sizeBytes", c.sizeBytes());
            m.put("saveSeconds", c.saveMillis() == null ? null : c.saveMillis() / 1000.0);
            m.put("committedAt", c.committedAt().toString());
            return m;
        }).toList();
    }

    /** The job's declared checkpoint directory, from its stored spec. */
    private static JobSpec.Checkpoint declared(JobRecord job) {
        if (job.spec() instanceof Map<?, ?> spec && spec.get("checkpoint") instanceof Map<?, ?> c
                && c.get("dir") instanceof String dir) {
            return new JobSpec.Checkpoint(dir, null);
        }
        return null;
    }
}
