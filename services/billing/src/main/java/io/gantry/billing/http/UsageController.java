package io.gantry.billing.http;

import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.core.Usage;
import io.gantry.billing.core.UsageReport;
import io.gantry.billing.core.UsageRow;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.core.WindowBound;
import io.gantry.billing.db.Ledger;
import io.gantry.billing.db.UsageEntryRow;
import io.gantry.billing.money.BillingSettings;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Ids;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Usage reads. A tenant sees only its own ledger; an admin sees everyone's and may filter by tenant. Seconds are
 * strings with three decimals so that JSON number handling can never round them.
 */
@Controller("/v1/usage")
@ExecuteOn(TaskExecutors.BLOCKING)
public class UsageController {
    private final Ledger ledger;
    private final BillingSettings settings;

    public UsageController(Ledger ledger, BillingSettings settings) {
        this.ledger = ledger;
        this.settings = settings;
    }

    @Get
    public HttpResponse<?> usage(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                 @Nullable @QueryValue String from, @Nullable @QueryValue String to,
                                 @Nullable @QueryValue String tenant) {
        List<Problem.FieldError> errors = new ArrayList<>();
        Instant fromAt = instant("from", from, errors);
        Instant toAt = instant("to", to, errors);
        UsageWindow window = null;
        if (errors.isEmpty()) {
            try {
                window = new UsageWindow(fromAt, toAt);
            } catch (IllegalArgumentException e) {
                errors.add(fieldError(e.getMessage()));
            }
        }
        if (tenant != null && !tenant.isBlank() && !Ids.plausible(tenant)) {
            errors.add(new Problem.FieldError("tenant", "must be " + Ids.RULE));
        }
        if (!errors.isEmpty()) {
            return Problem.badRequest(errors);
        }
        Problems.Scope of = Problems.Scope.of(caller, tenant, "usage");
        if (of.refused() != null) {
            return of.refused();
        }
        String scope = of.tenant();
        UsageReport report = Usage.summarize(ledger.reaching(scope, window), window);
        return HttpResponse.ok(UsageView.of(report));
    }

    @Get("/entries")
    public HttpResponse<?> entries(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                   @Nullable @QueryValue String jobId) {
        if (jobId == null || jobId.isBlank()) {
            return Problem.badRequest(List.of(new Problem.FieldError("jobId", "is required")));
        }
        if (!Ids.plausible(jobId)) {
            return Problem.badRequest(List.of(new Problem.FieldError("jobId", "is not a job id (" + Ids.RULE + ")")));
        }
        // another tenant's job looks exactly like a job without usage: no hint that it exists
        List<EntryView> rows = ledger.ofJob(jobId).stream()
                .filter(r -> caller.mayAccess(r.tenant()))
                .map(EntryView::of)
                .toList();
        return HttpResponse.ok(rows);
    }

    /** The window end {@code value} names (see {@link WindowBound}); null and an error added when it names none. */
    private Instant instant(String field, String value, List<Problem.FieldError> errors) {
        try {
            return WindowBound.parse(field, value, settings.zone());
        } catch (InvalidInput e) {
            e.fields().forEach(f -> errors.add(new Problem.FieldError(f.field(), f.message())));
            return null;
        }
    }

    /** The core's messages start with the field name: {@code "to: must be after from"}. */
    private static Problem.FieldError fieldError(String message) {
        int colon = message.indexOf(':');
        return colon > 0 ? new Problem.FieldError(message.substring(0, colon), message.substring(colon + 1).trim())
                : new Problem.FieldError("query", message);
    }

    @Serdeable
    public record UsageView(String from, String to, List<RowView> rows, String totalGpuSeconds, long totalGpuMillis,
                            long totalGpuMicros) {
        static UsageView of(UsageReport report) {
            return new UsageView(iso(report.window().from()), iso(report.window().to()),
                    report.rows().stream().map(RowView::of).toList(), report.totalGpuSeconds().toPlainString(),
                    report.totalGpuMillis(), report.totalGpuMicros());
        }
    }

    @Serdeable
    public record RowView(String tenant, @Nullable String gpuModel, String gpuSeconds, long gpuMillis, long entries,
                          long gpuMicros) {
        static RowView of(UsageRow row) {
            return new RowView(row.tenant(), row.gpuModel(), row.gpuSeconds().toPlainString(), row.gpuMillis(),
                    row.entries(), row.gpuMicros());
        }
    }

    @Serdeable
    public record EntryView(String entryId, String tenant, String jobId, int attempt, String allocationId,
                            String nodeId, @Nullable String gpuModel, int gpuCount, String startedAt, String endedAt,
                            long durationMillis, long gpuMillis, String gpuSeconds, String recordedAt, long gpuMilli,
                            long gpuMicros) {
        static EntryView of(UsageEntryRow r) {
            return new EntryView(r.entryId(), r.tenant(), r.jobId(), r.attempt(), r.allocationId(), r.nodeId(),
                    r.gpuModel(), r.gpuCount(), iso(r.startedAt()), iso(r.endedAt()), r.durationMillis(),
                    r.gpuMillis(), Usage.secondsOfMicros(r.gpuMicros()).toPlainString(), iso(r.recordedAt()),
                    r.gpuMilli(), r.gpuMicros());
        }
    }

    private static String iso(Instant t) {
        return t == null ? null : t.toString();
    }
}
