package io.gantry.admission.http;

import io.gantry.admission.core.RunTokenCheck;
import io.gantry.admission.db.JobRecord;
import io.gantry.admission.db.JobStore;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.RunTokens;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;

import java.util.List;

/** Answers for a run token presented on a job's endpoint: the job of its current run, or the refusal to send. */
final class RunTokenGuard {
    private RunTokenGuard() {
    }

    /** The job and the attempt the token is the current run of ({@code refusal} null), or why not. */
    record Outcome(JobRecord job, int attempt, HttpResponse<?> refusal) {
    }

    static Outcome check(JobStore store, String id, String runToken) {
        JobRecord job = store.find(id).orElse(null);
        int attempt = job == null ? 0 : job.status().attempt();
        boolean current = job != null && RunTokens.matches(runToken, store.runToken(id, attempt).orElse(null));
        boolean ended = job != null && job.status().state().isTerminal();
        boolean earlier = job != null && !current && !ended && ofAnEarlierRun(store, id, attempt, runToken);
        boolean newer = RunTokens.claim(runToken).filter(c -> c.isOf(id) && c.attempt() > attempt).isPresent();
        return switch (RunTokenCheck.decide(job != null, current, ended, earlier, newer)) {
            case CURRENT_RUN -> new Outcome(job, attempt, null);
            case RUN_FINISHED -> new Outcome(job, attempt, Problem.response(HttpStatus.CONFLICT, "Run finished",
                    "job " + id + " is " + job.status().state() + "; its runs report nothing more", List.of()));
            case NOT_THIS_RUN -> new Outcome(null, 0, Problem.response(HttpStatus.FORBIDDEN, "Forbidden",
                    "this token does not belong to the current run of job " + id, List.of()));
            case NOT_KNOWN_YET -> new Outcome(null, 0, Problem.response(HttpStatus.SERVICE_UNAVAILABLE,
                    "Run not known yet", "the current run of job " + id + " is not known here yet; retry shortly",
                    List.of()).header("Retry-After", "1"));
        };
    }

    private static boolean ofAnEarlierRun(JobStore store, String id, int current, String runToken) {
        for (int a = 1; a < current; a++) {
            if (RunTokens.matches(runToken, store.runToken(id, a).orElse(null))) {
                return true;
            }
        }
        return false;
    }
}
