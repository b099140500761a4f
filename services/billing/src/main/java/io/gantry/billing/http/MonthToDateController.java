package io.gantry.billing.http;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.core.UsageReport;
import io.gantry.billing.core.UsageRow;
import io.gantry.billing.streams.MonthToDateStreams;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Ids;
import io.gantry.runtime.http.Problem;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;

/**
 * Month-to-date GPU time from the Kafka Streams aggregation: released allocations only, GPU time only (money is
 * {@code GET /v1/costs} over the month, which applies tiers, multipliers and credits). A tenant sees its own; an
 * admin all, or one with {@code tenant=}. 503 with {@code Retry-After} while the aggregation is not running.
 */
@Controller("/v1/usage/month-to-date")
@Requires(beans = MonthToDateStreams.class)
@ExecuteOn(TaskExecutors.BLOCKING)
public class MonthToDateController {
    static final String RETRY_AFTER_SECONDS = "5";

    private final MonthToDateStreams streams;

    public MonthToDateController(MonthToDateStreams streams) {
        this.streams = streams;
    }

    @Get
    public HttpResponse<?> monthToDate(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                       @Nullable @QueryValue String month, @Nullable @QueryValue String tenant) {
        BillingMonth asked = null;
        if (month != null && !month.isBlank()) {
            try {
                asked = BillingMonth.parse(month, streams.settings().zone());
            } catch (InvalidInput e) {
                return Problems.of(e);
            }
        }
        if (tenant != null && !tenant.isBlank() && !Ids.plausible(tenant)) {
            return Problem.badRequest(List.of(new Problem.FieldError("tenant", "must be " + Ids.RULE)));
        }
        Problems.Scope of = Problems.Scope.of(caller, tenant, "usage");
        if (of.refused() != null) {
            return of.refused();
        }
        String scope = of.tenant();
        try {
            BillingMonth m = asked != null ? asked : streams.currentMonth();
            List<UsageRow> rows = streams.rows(m.month(), scope);
            return HttpResponse.ok(MonthToDateView.of(m, new UsageReport(m.window(), rows)));
        } catch (MonthToDateStreams.NotQueryable e) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready",
                    "the month-to-date aggregation is " + streams.state() + "; retry shortly", List.of())
                    .header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS);
        }
    }

    @Serdeable
    public record MonthToDateView(String month, String timeZone, String from, String to,
                                  List<UsageController.RowView> rows, String totalGpuSeconds, long totalGpuMillis,
                                  long totalGpuMicros) {
        static MonthToDateView of(BillingMonth month, UsageReport report) {
            return new MonthToDateView(month.toString(), month.zone().getId(), month.from().toString(),
                    month.to().toString(), report.rows().stream().map(UsageController.RowView::of).toList(),
                    report.totalGpuSeconds().toPlainString(), report.totalGpuMillis(), report.totalGpuMicros());
        }
    }
}
