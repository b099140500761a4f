package io.gantry.placement.http;

import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.LocalBackend;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Ids;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.Units;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A job's task output, where its pool's backend keeps it (the local backend's log files): the list of a run's logs,
 * and a piece of one from a byte offset, so a client follows a log by asking again from {@code nextOffset}. Only the
 * job's tenant (or an admin) reads it; for anyone else the job has no logs here.
 */
@Controller("/v1/jobs/{id}/logs")
@ExecuteOn(TaskExecutors.BLOCKING)
public class LogsController {
    static final int DEFAULT_LIMIT = 256 * 1024;
    static final int MAX_LIMIT = 4 * 1024 * 1024;

    private final PlacementProcessor placement;

    public LogsController(PlacementProcessor placement) {
        this.placement = placement;
    }

    @Get
    public HttpResponse<?> logs(io.micronaut.http.HttpRequest<?> request, @PathVariable String id, @Nullable @QueryValue Integer attempt,
                                @Nullable @QueryValue String task, @Nullable @QueryValue Integer replica,
                                @Nullable @QueryValue Long offset, @Nullable @QueryValue Integer limit,
                                @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        if (!Ids.plausible(id)) {
            return Problem.badRequest(List.of(new Problem.FieldError("id", "is not a job id (1..64 letters, digits "
                    + "or '._:-')")));
        }
        List<Problem.FieldError> errors = new java.util.ArrayList<>();
        if (attempt != null && attempt < 1) {
            errors.add(new Problem.FieldError("attempt", "must be 1 or more"));
        }
        if (replica != null && replica < 0) {
            errors.add(new Problem.FieldError("replica", "must be 0 or more"));
        }
        if (offset != null && offset < 0) {
            errors.add(new Problem.FieldError("offset", "must be 0 or more"));
        }
        if (limit != null && (limit < 1 || limit > MAX_LIMIT)) {
            errors.add(new Problem.FieldError("limit", "must be 1.." + MAX_LIMIT + " bytes"));
        }
        if (task != null && !Ids.plausible(task)) {
            errors.add(new Problem.FieldError("task", "is not a task name (1..64 letters, digits or '._:-')"));
        }
        if ((task == null) != (replica == null)) {
            errors.add(new Problem.FieldError(task == null ? "task" : "replica", "task and replica go together: one "
                    + "log (without both: the list of the run's logs)"));
        }
        if (!errors.isEmpty()) {
            return Problem.badRequest(errors);
        }
        for (PlacementProcessor.Pool pool : placement.pools()) {
            ExecutionBackend backend = pool.backend();
            Optional<ExecutionBackend.RunLogs> run = backend.logs(id, attempt);
            if (run.isEmpty()) {
                continue;
            }
            ExecutionBackend.RunLogs logs = run.get();
            if (caller == null || !(logs.tenant() == null ? caller.admin() : caller.mayAccess(logs.tenant()))) {
                break; // another tenant's job has no logs, as far as this caller can tell
            }
            if (task == null) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("jobId", id);
                m.put("attempt", logs.attempt());
                m.put("pool", pool.name());
                m.put("logs", logs.logs().stream().map(l -> Map.of("task", l.task(), "replica", l.replica(),
                        "sizeBytes", l.size())).toList());
                return HttpResponse.ok(m);
            }
            Optional<ExecutionBackend.LogChunk> chunk = backend.readLog(id, logs.attempt(), task, replica,
                    offset == null ? 0 : offset, limit == null ? DEFAULT_LIMIT : limit);
            if (chunk.isEmpty()) {
                return Problem.notFound("job " + id + " run " + logs.attempt() + " has no log of task " + task
                        + " replica " + replica);
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("jobId", id);
            m.put("attempt", logs.attempt());
            m.put("task", task);
            m.put("replica", replica);
            m.put("offset", chunk.get().offset());
            m.put("nextOffset", chunk.get().nextOffset());
            m.put("sizeBytes", chunk.get().size());
            m.put("text", chunk.get().text());
            return HttpResponse.ok(m);
        }
        // split by pool: the run may be in a pool another instance owns (its backend ran it there)
        Optional<HttpResponse<?>> elsewhere = Units.elsewhere(placement.units(), request, new byte[0]);
        if (elsewhere.isPresent()) {
            return elsewhere.get();
        }
        boolean local = placement.pools().stream().anyMatch(p -> p.backend() instanceof LocalBackend);
        return Problem.notFound("no output of job " + id + (attempt == null ? "" : " run " + attempt) + " here: "
                + (local ? "no such job of yours has run on this host (its tasks' output is kept for its runs here)"
                : "only the local backend keeps task output (the simulated one runs no processes; Kubernetes and "
                + "Slurm keep theirs in their own logs)"));
    }
}
