package io.gantry.queue.adapter;

import io.gantry.queue.core.PendingEntry;
import io.gantry.queue.core.TenantSummary;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/** Read-only views of the queues. A tenant sees its own queue; an admin sees every queue. */
@Controller("/v1/queues")
public class QueueController {
    private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    private final QueueProcessor queue;

    public QueueController(QueueProcessor queue) {
        this.queue = queue;
    }

    @Serdeable
    public record QueueRow(String tenant, int quotaGpus, long reservedGpus, int queued, int parked, int dispatched) {
        static QueueRow of(TenantSummary s) {
            return new QueueRow(s.tenant(), s.quotaGpus(), s.reservedGpus(), s.queued(), s.parked(), s.dispatched());
        }
    }

    @Serdeable
    public record Queues(List<QueueRow> queues) {
    }

    @Serdeable
    public record PendingJobRow(String jobId, int attempt, int gpus, String submittedAt, boolean parked,
                                String waitReason, String message) {
        static PendingJobRow of(PendingEntry e) {
            return new PendingJobRow(e.jobId(), e.attempt(), e.gpus(), e.submittedAt().toString(), e.parked(),
                    e.waitReason() == null ? null : e.waitReason().name(), e.message());
        }
    }

    @Serdeable
    public record Pending(String tenant, List<PendingJobRow> pending) {
    }

    @Get
    public HttpResponse<?> queues(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        List<QueueRow> rows = read(core -> caller.admin()
                ? core.summaries().stream().map(QueueRow::of).toList()
                : List.of(QueueRow.of(core.summary(caller.tenant()))));
        return HttpResponse.ok(new Queues(rows));
    }

    @Get("/{tenant}/pending")
    public HttpResponse<?> pending(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String tenant)
            throws Exception {
        if (!TENANT.matcher(tenant).matches()) {
            return Problem.badRequest(List.of(new Problem.FieldError("tenant",
                    "must be a lower-case tenant name ([a-z0-9][a-z0-9-]{0,62})")));
        }
        if (!caller.mayAccess(tenant)) {
            // 404, not 403: a tenant does not learn which other tenants exist
            return Problem.notFound("no queue " + tenant);
        }
        List<PendingJobRow> rows = read(core -> core.pending(tenant).stream().map(PendingJobRow::of).toList());
        return HttpResponse.ok(new Pending(tenant, rows));
    }

    private <T> T read(java.util.function.Function<io.gantry.queue.core.QueueCore, T> query) throws Exception {
        try {
            return queue.read(query);
        } catch (TimeoutException | ExecutionException e) {
            throw new QueueUnavailableException(e);
        }
    }

    /** The event loop is restoring or restarting; the client may retry. */
    static final class QueueUnavailableException extends RuntimeException {
        QueueUnavailableException(Throwable cause) {
            super("the queue is not ready", cause);
        }
    }

    @io.micronaut.http.annotation.Error(exception = QueueUnavailableException.class)
    public HttpResponse<?> unavailable(QueueUnavailableException e) {
        return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Service unavailable",
                "the queue is rebuilding its state; retry shortly", List.of()).header("Retry-After", "1");
    }
}
