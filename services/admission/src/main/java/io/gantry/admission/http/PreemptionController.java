package io.gantry.admission.http;

import io.gantry.admission.core.JobStatus;
import io.gantry.admission.db.JobRecord;
import io.gantry.admission.db.JobStore;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.TokenAuthFilter;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The preemption notice of a job's current run: whether placement asked it to stop, why, and when it is killed. A
 * run polls it with its own token (GANTRY_RUN_TOKEN; the Python helper's {@code preemption_notice()}) to checkpoint
 * before its deadline where SIGTERM does not reach the training loop; the job's tenant (or an admin) may ask too.
 */
@Controller("/v1/jobs/{id}/preemption")
@ExecuteOn(TaskExecutors.BLOCKING)
public class PreemptionController {
    private final JobStore store;
    private final Clock clock;

    public PreemptionController(JobStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    @Get
    public HttpResponse<?> notice(@PathVariable String id,
                                  @Nullable @RequestAttribute(TokenAuthFilter.RUN_TOKEN_ATTRIBUTE) String runToken,
                                  @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        if (!JobIds.plausible(id)) {
            return JobIds.badId("id", id);
        }
        JobRecord job;
        if (runToken != null) {
            RunTokenGuard.Outcome run = RunTokenGuard.check(store, id, runToken);
            if (run.refusal() != null) {
                return run.refusal();
            }
            job = run.job();
        } else {
            job = caller == null ? null : store.find(id).filter(j -> caller.mayAccess(j.tenant())).orElse(null);
            if (job == null) {
                return Problem.notFound("no job " + id);
            }
        }
        Map<String, Object> answer = answer(job, clock.instant());
        if (caller == null || !caller.admin()) {
            // the run, or its tenant: another tenant's job named in the reason is not theirs to see
            answer = JobViews.shownTo(store, job.tenant(), answer);
        }
        return HttpResponse.ok(answer);
    }

    /** {@code preempting} and, when true, the notice with the whole seconds left before the deadline. */
    static Map<String, Object> answer(JobRecord job, Instant now) {
        JobStatus.Notice n = job.status().preemption();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jobId", job.jobId());
        m.put("attempt", job.status().attempt());
        m.put("state", job.status().state().name());
        m.put("preempting", n != null);
        if (n != null) {
            m.putAll(JobViews.notice(n));
            m.put("secondsLeft", Math.max(0, Duration.between(now, n.deadline()).toSeconds()));
        }
        return m;
    }
}
