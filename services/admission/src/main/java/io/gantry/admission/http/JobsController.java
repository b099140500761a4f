package io.gantry.admission.http;

import io.gantry.admission.core.BudgetGate;
import io.gantry.admission.core.ClusterLimits;
import io.gantry.admission.core.CostEstimate;
import io.gantry.admission.core.Idempotency;
import io.gantry.admission.core.JobSpec;
import io.gantry.admission.core.JobSpecTree;
import io.gantry.admission.core.JobSpecValidator;
import io.gantry.admission.core.JobState;
import io.gantry.admission.core.OpenJobsCap;
import io.gantry.admission.core.SubmitRate;
import io.gantry.admission.core.Validated;
import io.gantry.admission.db.JobRecord;
import io.gantry.admission.db.JobStore;
import io.gantry.admission.db.KeyClaim;
import io.gantry.admission.kafka.WireMapping;
import io.gantry.admission.kafka.ClusterLimitsHolder;
import io.gantry.admission.kafka.EventPublisher;
import io.gantry.admission.kafka.EventPublisher.PublishFailedException;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.JobCancelRequested;
import io.gantry.events.JobSubmitted;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.kafka.DatabaseFailures;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Delete;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.json.JsonMapper;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The public job API. Parses and validates in the core, publishes to Kafka, reads the PostgreSQL read model.
 * Blocking (JDBC, waiting for Kafka acks), so it runs on the blocking executor.
 */
@Controller("/v1/jobs")
@ExecuteOn(TaskExecutors.BLOCKING)
public class JobsController {
    private static final Logger LOG = LoggerFactory.getLogger(JobsController.class);
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final JsonMapper json;
    private final JobSpecValidator validator = new JobSpecValidator();
    private final ClusterLimitsHolder limits;
    private final EventPublisher publisher;
    private final JobStore store;
    private final Clock clock;
    private final int maxBodyBytes;
    private final OpenJobsCap openJobs;
    private final SubmitRate submitRate;

    public JobsController(JsonMapper json, ClusterLimitsHolder limits, EventPublisher publisher, JobStore store,
                          Clock clock, @Value("${gantry.admission.max-body-bytes:65536}") int maxBodyBytes,
                          @Value("${gantry.admission.max-open-jobs:10000}") int maxOpenJobs,
                          @Value("${gantry.admission.submit-rate:100}") double submitRate,
                          @Value("${gantry.admission.submit-burst:500}") int submitBurst) {
        this.openJobs = new OpenJobsCap(maxOpenJobs);
        this.submitRate = new SubmitRate(submitRate, submitBurst);
        this.json = json;
        this.limits = limits;
        this.publisher = publisher;
        this.store = store;
        this.clock = clock;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** Response header of an accepted job whose tenant or queue is near or over its money budget. */
    public static final String BUDGET_WARNING = "Gantry-Budget-Warning";

    /** Response header of an accepted job that the queue will hold because its money budget is exhausted (HOLD). */
    public static final String BUDGET_HOLD = "Gantry-Budget-Hold";

    @Post(consumes = MediaType.ALL)
    public HttpResponse<?> submit(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                  @Nullable @Header("Idempotency-Key") String idempotencyKey,
                                  @Nullable @Header("Content-Type") String contentType,
                                  @Nullable @QueryValue String dryRun,
                                  @Nullable @Body byte[] body) {
        boolean dry = dryRun != null && !dryRun.equals("false");
        if (dry && !dryRun.equals("true") && !dryRun.isEmpty()) {
            return Problem.badRequest(List.of(new Problem.FieldError("dryRun", "must be true or false")));
        }
        // before any work: a tenant submitting in a tight loop is told to slow down (dry runs count too)
        SubmitRate.Decision pace = submitRate.take(caller.tenant(), System.nanoTime());
        if (!pace.allowed()) {
            return Problem.response(HttpStatus.TOO_MANY_REQUESTS, "Too many submissions", pace.refusal(), List.of())
                    .header(HttpHeaders.RETRY_AFTER, Long.toString(pace.retryAfterSeconds()));
        }
        if (body != null && body.length > maxBodyBytes) {
            return Problem.response(HttpStatus.REQUEST_ENTITY_TOO_LARGE, "Request body too large",
                    "the job spec must be at most " + maxBodyBytes + " bytes, not " + body.length,
                    List.of(new Problem.FieldError("body", "larger than " + maxBodyBytes + " bytes")));
        }
        String keyProblem = idempotencyKey == null ? null : Idempotency.keyProblem(idempotencyKey);
        if (keyProblem != null) {
            return Problem.badRequest(List.of(new Problem.FieldError("Idempotency-Key", keyProblem)));
        }
        Object tree;
        try {
            tree = JsonBody.parse(contentType, body);
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        }
        ClusterLimits current = limits.current();
        if (current == null) {
            return unavailable("admission is still reading the cluster's nodes; retry in a few seconds");
        }
        String tenant = caller.tenant();
        String selfId = idempotencyKey == null ? null : Idempotency.ids(tenant, idempotencyKey).jobId();
        Validated validated = validator.validate(tree, current, limits.catalog(), tenant,
                ids -> store.existing(tenant, ids), selfId);
        if (validated.waitsForNodes()) {
            // a cluster that is starting: retry once a node has registered
            return unavailable("no node has registered yet, so GPUs cannot be placed; retry in a few seconds");
        }
        if (!validated.isValid()) {
            return Problem.badRequest(validated.errors().stream()
                    .map(e -> new Problem.FieldError(e.field(), e.message())).toList());
        }
        JobSpec spec = validated.spec();
        // the money budget gate: billing's announced state, never a call to billing
        BudgetGate.Decision budget = limits.budgets().decide(tenant, spec.queue() != null ? spec.queue() : tenant,
                clock.instant());
        if (dry) {
            return dryRun(spec, tenant, budget);
        }
        String jobId;
        String eventId;
        String requestHash = null;
        boolean ownClaim = false;
        if (idempotencyKey != null) {
            Idempotency.Ids ids = Idempotency.ids(tenant, idempotencyKey);
            jobId = ids.jobId();
            eventId = ids.eventId();
            requestHash = sha256(canonical(spec));
            KeyClaim claim;
            java.util.Optional<JobRecord> existing;
            try {
                claim = store.claimKey(tenant, idempotencyKey, requestHash, jobId, clock.instant());
                existing = claim.claimed() ? java.util.Optional.empty() : store.find(jobId);
            } catch (Exception e) { // the store's SQLException arrives undeclared through the transaction template
                LOG.warn("Idempotency-Key of a submission could not be claimed; nothing was submitted: {}", e.toString());
                String detail = "nothing was submitted: retry with the same Idempotency-Key";
                return DatabaseFailures.isUnavailable(e)
                        ? Problem.databaseUnavailable("the job store (PostgreSQL) is unavailable; " + detail)
                        : unavailable("the job store is unavailable; " + detail);
            }
            // only the request that claimed the key may give it back: a retry that found the claim (PUBLISH_AGAIN)
            // runs beside a first request that may still be publishing, or whose event may be on the log already
            ownClaim = claim.claimed();
            switch (Idempotency.decide(claim.claimed(), claim.requestHash(), requestHash, existing.isPresent())) {
                case CONFLICT:
                    return Problem.response(HttpStatus.UNPROCESSABLE_ENTITY, "Idempotency-Key reused",
                            "Idempotency-Key '" + idempotencyKey + "' was already used for a different job spec",
                            List.of(new Problem.FieldError("Idempotency-Key", "already used with a different body")));
                case ANSWER_CURRENT_STATE:
                    return accepted(jobId, existing.orElseThrow().status().state());
                case PUBLISH:
                case PUBLISH_AGAIN:
                default:
                    break;
            }
        } else {
            jobId = UUID.randomUUID().toString();
            eventId = UUID.randomUUID().toString();
        }
        // a repeated request for an accepted job was answered above; a new job meets the budget gate here
        if (budget.verdict() == BudgetGate.Verdict.REJECT) {
            var refused = Problem.response(HttpStatus.PAYMENT_REQUIRED, "Budget exhausted",
                    budget.message(), List.of(new Problem.FieldError(budget.field(), budget.message())));
            releaseKey(tenant, idempotencyKey, ownClaim ? requestHash : null);
            return refused;
        }
        // and the tenant's cap on jobs not yet ended (a few more may pass when submissions race: the count is a read)
        String capped = openJobs.limit() == 0 ? null : openJobs.refusal(tenant, store.openJobs(tenant));
        if (capped != null) {
            releaseKey(tenant, idempotencyKey, ownClaim ? requestHash : null);
            return Problem.response(HttpStatus.TOO_MANY_REQUESTS, "Too many open jobs", capped, List.of())
                    .header(HttpHeaders.RETRY_AFTER, "60");
        }
        Instant now = clock.instant();
        java.util.Optional<CostEstimate.Estimate> estimate = estimate(spec, tenant, now);
        AdmissionJobEvent event = AdmissionJobEvent.newBuilder()
                .setEventId(eventId)
                .setJobId(jobId)
                .setOccurredAt(now)
                .setPayload(JobSubmitted.newBuilder()
                        .setTenant(tenant)
                        .setSpec(WireMapping.toAvro(spec))
                        .setIdempotencyKey(idempotencyKey)
                        .build())
                .build();
        java.util.concurrent.atomic.AtomicBoolean sent = new java.util.concurrent.atomic.AtomicBoolean();
        try {
            // the row first, the event before it commits: what cannot be stored is never published
            store.applyThen(WireMapping.fromAdmission(event, Topics.ADMISSION_JOB_EVENTS.name()), () -> {
                sent.set(true);
                publisher.publish(event);
            });
        } catch (PublishFailedException e) {
            LOG.warn("could not publish JobSubmitted {}: {}", jobId, e.getMessage());
            // no release: the event may be on the log all the same (an ack lost after the append), and the job then
            // exists (the read model stores it from there); the key keeps naming it, so a retry with the same body
            // is answered with it (or publishes it, if it is not there) and one with another body is refused
            return unavailable("the job could not be recorded (Kafka did not acknowledge it); retry, ideally with "
                    + "an Idempotency-Key");
        } catch (Exception e) { // a RuntimeException, or the store's SQLException undeclared
            LOG.warn("JobSubmitted {} could not be stored{}: {}", jobId,
                    sent.get() ? " (its event was sent: it may be on the log)" : "; nothing was published", e.toString());
            if (DatabaseFailures.isUnavailable(e)) {
                // no release: it would wait for the pool once more. A retry with the key submits the job if this
                // attempt did not (the claim names no job), or answers it if its event reached Kafka before the
                // commit failed (the read-model consumer stores it from there)
                return Problem.databaseUnavailable("the job store (PostgreSQL) is unavailable; retry with the same "
                        + "Idempotency-Key (a job this attempt recorded is then answered, never submitted twice)");
            }
            if (sent.get()) {
                // the commit failed after the send: the job may be on the log, and the key keeps naming it
                return unavailable("the job could not be recorded (the read model refused it after its event was "
                        + "sent); retry with the same Idempotency-Key (a job that was submitted is then answered)");
            }
            releaseKey(tenant, idempotencyKey, ownClaim ? requestHash : null);
            return unavailable("the job could not be recorded (the read model refused it); nothing was submitted");
        }
        Map<String, Object> answer0 = acceptedBody(jobId, JobState.SUBMITTED);
        estimate.ifPresent(e -> answer0.put("costEstimate", costEstimateView(e)));
        return withBudgetHeader(HttpResponse.accepted(URI.create("/v1/jobs/" + jobId)).body(answer0), budget);
    }

    /**
     * {@code POST /v1/jobs?dryRun=true}: every check of a submission ran (fields, GPU models, queue, what the cluster
     * can hold, dependencies, the money budget); nothing is stored or published and no Idempotency-Key is claimed.
     * 200 with what a submission would be now, and the budget headers a submission would get; a refusal is the
     * same problem a submission would get.
     */
    private HttpResponse<?> dryRun(JobSpec spec, String tenant, BudgetGate.Decision budget) {
        if (budget.verdict() == BudgetGate.Verdict.REJECT) {
            return Problem.response(HttpStatus.PAYMENT_REQUIRED, "Budget exhausted", budget.message(),
                    List.of(new Problem.FieldError(budget.field(), budget.message())));
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("dryRun", true);
        answer.put("tenant", tenant);
        answer.put("queue", spec.queue() != null ? spec.queue() : tenant);
        answer.put("heldByBudget", budget.verdict() == BudgetGate.Verdict.HOLD);
        estimate(spec, tenant, clock.instant()).ifPresent(e -> answer.put("costEstimate", costEstimateView(e)));
        return withBudgetHeader(HttpResponse.ok(answer), budget);
    }

    private static Map<String, Object> costEstimateView(CostEstimate.Estimate e) {
        return Map.of("amount", e.amount().toPlainString(), "currency", e.currency(),
                "timeLimitSeconds", e.timeLimitSeconds(), "priceBookVersion", e.priceBookVersion(),
                "basis", "at most: every task holding what it asks for the whole time limit, at the prices in force "
                        + "now, the most expensive accepted GPU model");
    }

    private static HttpResponse<?> withBudgetHeader(io.micronaut.http.MutableHttpResponse<?> answer,
                                                    BudgetGate.Decision budget) {
        if (budget.verdict() == BudgetGate.Verdict.WARN) {
            answer.header(BUDGET_WARNING, budget.message());
        } else if (budget.verdict() == BudgetGate.Verdict.HOLD) {
            // accepted: the queue holds it (it reads the same budget announcements) until the budget allows
            answer.header(BUDGET_HOLD, budget.message());
        }
        return answer;
    }

    /**
     * Frees the key a refused submission claimed, so a retry is a new submission. Best effort: while the database
     * is down the claim stays, and a retry with the key finds no job for it and submits it then.
     */
    private void releaseKey(String tenant, String idempotencyKey, String requestHash) {
        if (requestHash == null) {
            return;
        }
        try {
            store.releaseKey(tenant, idempotencyKey, requestHash);
        } catch (RuntimeException e) {
            LOG.warn("Idempotency-Key of a refused submission not released (a retry submits it anyway): {}",
                    e.toString());
        }
    }

    @Get("/{id}")
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id) {
        if (!JobIds.plausible(id)) {
            return JobIds.badId("id", id);
        }
        return visible(caller, id)
                .<HttpResponse<?>>map(r -> HttpResponse.ok(shownTo(caller, JobViews.detail(r, store.history(id),
                        CheckpointsController.views(store.checkpoints(id, CheckpointsController.SHOWN))))))
                .orElseGet(() -> notFound(id));
    }

    /** {@code view} as {@code caller} may see it: another tenant's job ids replaced for a tenant (an admin sees all). */
    private Object shownTo(Caller caller, Object view) {
        return caller.admin() ? view : JobViews.shownTo(store, caller.tenant(), view);
    }

    @Get
    public HttpResponse<?> list(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                @Nullable @QueryValue String state,
                                @Nullable @QueryValue String limit,
                                @Nullable @QueryValue String tenant,
                                @Nullable @QueryValue String cursor) {
        List<Problem.FieldError> errors = new java.util.ArrayList<>();
        JobState wanted = null;
        if (state != null) {
            try {
                wanted = JobState.valueOf(state.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                errors.add(new Problem.FieldError("state", "must be one of " + List.of(JobState.values())));
            }
        }
        int max = DEFAULT_LIMIT;
        if (limit != null) {
            try {
                max = Integer.parseInt(limit.trim());
                if (max < 1 || max > MAX_LIMIT) {
                    errors.add(new Problem.FieldError("limit", "must be between 1 and " + MAX_LIMIT));
                }
            } catch (NumberFormatException e) {
                errors.add(new Problem.FieldError("limit", "must be an integer"));
            }
        }
        JobStore.Cursor after = null;
        if (cursor != null) {
            after = Cursors.decode(cursor);
            if (after == null) {
                errors.add(new Problem.FieldError("cursor", "is not a cursor this API returned (use nextCursor "
                        + "from the previous page as it was given)"));
            }
        }
        if (tenant != null && !tenant.isEmpty() && !JobIds.plausible(tenant)) {
            errors.add(new Problem.FieldError("tenant", "must be " + io.gantry.runtime.http.Ids.RULE));
        }
        if (!errors.isEmpty()) {
            return Problem.badRequest(errors);
        }
        String scope;
        if (caller.admin()) {
            scope = tenant == null || tenant.isBlank() ? null : tenant;
        } else {
            if (tenant != null && !tenant.equals(caller.tenant())) {
                return Problem.response(HttpStatus.FORBIDDEN, "Forbidden",
                        "only admins may list another tenant's jobs", List.of());
            }
            scope = caller.tenant();
        }
        // one more than asked tells whether another page follows
        List<JobRecord> rows = store.list(scope, wanted, max + 1, after);
        List<JobRecord> shown = rows.size() > max ? rows.subList(0, max) : rows;
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("jobs", shownTo(caller, shown.stream().map(JobViews::summary).toList()));
        if (rows.size() > max) {
            JobRecord last = shown.get(shown.size() - 1);
            page.put("nextCursor", Cursors.encode(new JobStore.Cursor(last.submittedAt(), last.jobId())));
        }
        return HttpResponse.ok(page);
    }

    @Delete("/{id}")
    public HttpResponse<?> cancel(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id) {
        Live live = live(caller, id, "cancelled");
        if (live.refusal() != null) {
            return live.refusal();
        }
        JobRecord job = live.job();
        JobState state = job.status().state();
        try {
            publisher.publish(AdmissionJobEvent.newBuilder()
                    .setEventId(UUID.randomUUID().toString())
                    .setJobId(id)
                    .setOccurredAt(clock.instant())
                    .setPayload(JobCancelRequested.newBuilder()
                            .setTenant(job.tenant())
                            .setRequestedBy(caller.tenant())
                            .build())
                    .build());
        } catch (PublishFailedException e) {
            LOG.warn("could not publish JobCancelRequested {}: {}", id, e.getMessage());
            return unavailable("the cancellation could not be recorded (Kafka did not acknowledge it); retry");
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jobId", id);
        answer.put("state", state.name());
        return HttpResponse.accepted().body(answer);
    }

    /** A job the caller may act on and that has not ended, or the refusal to answer with. */
    private record Live(JobRecord job, HttpResponse<?> refusal) {
    }

    /** 400 for an implausible id, 404 for a job the caller cannot see, 409 for one that ended ("cannot be {@code done}"). */
    private Live live(Caller caller, String id, String done) {
        if (!JobIds.plausible(id)) {
            return new Live(null, JobIds.badId("id", id));
        }
        var found = visible(caller, id);
        if (found.isEmpty()) {
            return new Live(null, notFound(id));
        }
        JobState state = found.get().status().state();
        if (state.isTerminal()) {
            return new Live(null, Problem.response(HttpStatus.CONFLICT, "Job already finished",
                    "job " + id + " is already " + state + " and cannot be " + done, List.of()));
        }
        return new Live(found.get(), null);
    }

    /**
     * Suspends a job (Kubernetes {@code spec.suspend = true}): the queue keeps a queued job out of its order, and
     * stops a running one like a preemption (requeued from its newest checkpoint) and keeps it suspended.
     */
    @Post(value = "/{id}/suspend", consumes = MediaType.ALL)
    public HttpResponse<?> suspend(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id) {
        return suspension(caller, id, true);
    }

    /** Resumes a suspended job: it gets its place in its queue back (its submit time is kept). */
    @Post(value = "/{id}/resume", consumes = MediaType.ALL)
    public HttpResponse<?> resume(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id) {
        return suspension(caller, id, false);
    }

    /**
     * 202 with the job's state when the request was published; 200 with it, publishing nothing, when the job's newest
     * request (or, without one, its spec) already asks for the same; 409 for an ended job; 404 as for any job.
     */
    private HttpResponse<?> suspension(Caller caller, String id, boolean suspend) {
        Live live = live(caller, id, suspend ? "suspended" : "resumed");
        if (live.refusal() != null) {
            return live.refusal();
        }
        JobRecord job = live.job();
        JobState state = job.status().state();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jobId", id);
        answer.put("state", state.name());
        answer.put("suspended", suspend);
        if (JobViews.suspended(job, store.history(id)) == suspend) {
            return HttpResponse.ok(answer);
        }
        var request = io.gantry.events.SuspensionEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString())
                .setJobId(id)
                .setOccurredAt(clock.instant())
                .setPayload(suspend
                        ? new io.gantry.events.JobSuspendRequested(job.tenant(), caller.tenant())
                        : new io.gantry.events.JobResumeRequested(job.tenant(), caller.tenant()))
                .build();
        try {
            publisher.publish(Topics.ADMISSION_SUSPENSION_EVENTS, id, request);
        } catch (PublishFailedException e) {
            LOG.warn("could not publish a suspension request for {}: {}", id, e.getMessage());
            return unavailable("the request could not be recorded (Kafka did not acknowledge it); retry");
        }
        // into the read model now, so a repeated request answers at once (the consumer's copy is deduplicated)
        try {
            store.apply(WireMapping.fromSuspension(request, Topics.ADMISSION_SUSPENSION_EVENTS.name()));
        } catch (RuntimeException e) {
            LOG.warn("suspension request for {} published, read model not updated yet: {}", id, e.toString());
        }
        return HttpResponse.accepted().body(answer);
    }

    /** The job if it exists and the caller may see it; a tenant cannot tell another tenant's job from none. */
    private java.util.Optional<JobRecord> visible(Caller caller, String id) {
        return store.find(id).filter(r -> caller.mayAccess(r.tenant()));
    }

    /** The bound shown at submit; a price book it cannot read is no reason to refuse or fail a job. */
    private java.util.Optional<CostEstimate.Estimate> estimate(JobSpec spec, String tenant, Instant now) {
        try {
            return CostEstimate.of(spec, tenant, limits.prices(), now);
        } catch (RuntimeException e) {
            LOG.warn("no cost estimate for a job of {}: {}", tenant, e.toString());
            return java.util.Optional.empty();
        }
    }

    private static HttpResponse<?> accepted(String jobId, JobState state) {
        return HttpResponse.accepted(URI.create("/v1/jobs/" + jobId)).body(acceptedBody(jobId, state));
    }

    private static Map<String, Object> acceptedBody(String jobId, JobState state) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jobId", jobId);
        answer.put("state", state.name());
        return answer;
    }

    private static HttpResponse<?> notFound(String id) {
        return Problem.notFound("no job " + id);
    }

    private static HttpResponse<?> unavailable(String detail) {
        return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Service unavailable", detail, List.of())
                .header("Retry-After", "5");
    }

    private byte[] canonical(JobSpec spec) {
        try {
            return json.writeValueAsBytes(JobSpecTree.toTree(spec));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
