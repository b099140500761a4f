package io.gantry.billing.http;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.InvoiceRendering;
import io.gantry.billing.core.Invoicing;
import io.gantry.billing.core.RatedLine;
import io.gantry.billing.core.Reconciliation;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.core.WindowBound;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.money.BillingSettings;
import io.gantry.billing.money.InvoiceService;
import io.gantry.billing.money.PriceBookService;
import io.gantry.billing.money.Reconciler;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Ids;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Money reads and the admin's invoicing actions. A tenant sees only its own documents and costs; another tenant's
 * document is answered 404, like one that does not exist.
 */
@Controller("/v1")
@ExecuteOn(TaskExecutors.BLOCKING)
public class InvoiceController {
    private final BillingStore store;
    private final InvoiceService invoices;
    private final PriceBookService prices;
    private final Reconciler reconciler;
    private final BillingSettings settings;
    private final io.gantry.billing.money.FinOpsService finops;

    public InvoiceController(BillingStore store, InvoiceService invoices, PriceBookService prices,
                             Reconciler reconciler, BillingSettings settings,
                             io.gantry.billing.money.FinOpsService finops) {
        this.finops = finops;
        this.store = store;
        this.invoices = invoices;
        this.prices = prices;
        this.reconciler = reconciler;
        this.settings = settings;
    }

    @Serdeable
    public record DocumentList(List<InvoiceViews.SummaryView> invoices) {
    }

    @Serdeable
    public record Issued(String month, List<InvoiceViews.DocumentView> issued) {
    }

    @Serdeable
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.ALWAYS)
    public record Costs(@Nullable String from, @Nullable String to, String currency, long priceBookVersion,
                        List<InvoiceViews.CostLineView> lines, String total) {
    }

    @Get("/invoices")
    public HttpResponse<?> list(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @Nullable @QueryValue String month,
                                @Nullable @QueryValue String tenant) {
        Optional<HttpResponse<?>> bad = checkTenant(caller, tenant);
        if (bad.isPresent()) {
            return bad.get();
        }
        String m = null;
        if (month != null && !month.isBlank()) {
            try {
                m = BillingMonth.parse(month, settings.zone()).toString();
            } catch (InvalidInput e) {
                return Problems.of(e);
            }
        }
        String scope = scope(caller, tenant);
        return HttpResponse.ok(new DocumentList(store.documents(scope, m).stream()
                .map(InvoiceViews.SummaryView::of).toList()));
    }

    /** One document: JSON (default), {@code format=csv} or {@code format=md} (Markdown, for people). */
    @Get(value = "/invoices/{id}", produces = {MediaType.APPLICATION_JSON, "text/csv", "text/markdown"})
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id,
                               @Nullable @QueryValue String format) {
        if (!Ids.plausible(id)) {
            return Problem.badRequest(List.of(new Problem.FieldError("id", "is not a document id (" + Ids.RULE + ")")));
        }
        String f = format == null || format.isBlank() ? "json" : format.trim().toLowerCase(java.util.Locale.ROOT);
        if (!List.of("json", "csv", "md").contains(f)) {
            return Problem.badRequest(List.of(new Problem.FieldError("format", "must be json, csv or md")));
        }
        Optional<Invoice> doc = store.document(id).filter(d -> caller.mayAccess(d.tenant()));
        if (doc.isEmpty()) {
            return Problem.notFound("no document " + id);
        }
        return switch (f) {
            case "csv" -> HttpResponse.ok(InvoiceRendering.csv(doc.get()).getBytes(StandardCharsets.UTF_8))
                    .contentType(MediaType.of("text/csv;charset=utf-8"))
                    .header("Content-Disposition", "attachment; filename=\"" + id + ".csv\"");
            case "md" -> HttpResponse.ok(InvoiceRendering.markdown(doc.get()).getBytes(StandardCharsets.UTF_8))
                    .contentType(MediaType.of("text/markdown;charset=utf-8"));
            default -> HttpResponse.ok(InvoiceViews.DocumentView.of(doc.get())).contentType(MediaType.APPLICATION_JSON);
        };
    }

    /** Issues a closed month's invoices (and notes for what changed since); what was issued before stays. */
    @Post("/invoices/issue")
    public HttpResponse<?> issue(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                 @Nullable @QueryValue String month) {
        if (!caller.admin()) {
            return Problems.adminOnly("issuing invoices");
        }
        try {
            BillingMonth m = BillingMonth.parse(month, settings.zone());
            return HttpResponse.ok(new Issued(m.toString(), invoices.issue(m).stream()
                    .map(InvoiceViews.DocumentView::of).toList()));
        } catch (InvalidInput e) {
            return Problems.of(e);
        }
    }

    /** What a window costs at the prices in force (credits included), before any invoice: e.g. month to date. */
    @Get("/costs")
    public HttpResponse<?> costs(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @Nullable @QueryValue String from,
                                 @Nullable @QueryValue String to, @Nullable @QueryValue String tenant,
                                 @Nullable @QueryValue String month) {
        Optional<HttpResponse<?>> bad = checkTenant(caller, tenant);
        if (bad.isPresent()) {
            return bad.get();
        }
        UsageWindow window;
        try {
            if (month != null && (from != null || to != null)) {
                throw InvalidInput.of("month", "give month, or from and to, not both");
            }
            // a month is the operator's calendar month (gantry.billing.time-zone), as invoices count it
            BillingMonth m = month == null ? null : BillingMonth.parse(month, settings.zone());
            window = m != null ? new UsageWindow(m.from(), m.to()) : new UsageWindow(
                    WindowBound.parse("from", from, settings.zone()), WindowBound.parse("to", to, settings.zone()));
        } catch (InvalidInput e) {
            return Problems.of(e);
        } catch (IllegalArgumentException e) {
            return badWindow(e);
        }
        String scope = scope(caller, tenant);
        int digits = prices.current().minorDigits();
        List<RatedLine> lines = invoices.rate(scope, window);
        return HttpResponse.ok(new Costs(window.from() == null ? null : window.from().toString(),
                window.to() == null ? null : window.to().toString(), prices.current().currency(),
                prices.current().version(), lines.stream().map(l -> InvoiceViews.CostLineView.of(l, digits)).toList(),
                Invoicing.freshTotal(lines, digits).toPlainString()));
    }

    @Serdeable
    public record FinOpsView(String tenant, String gpuSeconds, int jobs, int successfulJobs, String cost,
                             String costOfUnsuccessfulJobs, @Nullable String costPerSuccessfulJob,
                             @Nullable String allocationShare) {
    }

    @Serdeable
    public record FinOpsReport(String from, String to, String currency, List<FinOpsView> tenants) {
    }

    /** Per tenant: GPU time, share of the registered capacity, cost, cost of unsuccessful jobs, cost per success. */
    @Get("/finops")
    public HttpResponse<?> finops(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                  @Nullable @QueryValue String from, @Nullable @QueryValue String to,
                                  @Nullable @QueryValue String tenant) {
        Optional<HttpResponse<?>> bad = checkTenant(caller, tenant);
        if (bad.isPresent()) {
            return bad.get();
        }
        Window parsed = window(from, to);
        if (parsed.problem() != null) {
            return parsed.problem();
        }
        UsageWindow window = parsed.window();
        String scope = scope(caller, tenant);
        return HttpResponse.ok(new FinOpsReport(window.from().toString(), window.to().toString(),
                prices.current().currency(), finops.summarize(scope, window).stream().map(v -> new FinOpsView(
                        v.tenant(), io.gantry.billing.core.Usage.secondsOfMicros(v.gpuMicros()).toPlainString(),
                        v.jobs(), v.successfulJobs(), v.cost().toPlainString(),
                        v.costOfUnsuccessfulJobs().toPlainString(),
                        v.costPerSuccessfulJob() == null ? null : v.costPerSuccessfulJob().toPlainString(),
                        v.allocationShare() == null ? null : v.allocationShare().toPlainString())).toList()));
    }

    /** A window from {@code from}/{@code to} (a missing end: the current month's), or the 400 naming the field. */
    private record Window(UsageWindow window, HttpResponse<?> problem) {
    }

    private Window window(String from, String to) {
        try {
            Instant f = WindowBound.parse("from", from, settings.zone());
            Instant t = WindowBound.parse("to", to, settings.zone());
            if (f == null || t == null) {
                BillingMonth m = BillingMonth.containing(Instant.now(), settings.zone());
                f = f == null ? m.from() : f;
                t = t == null ? m.to() : t;
            }
            return new Window(new UsageWindow(f, t), null);
        } catch (InvalidInput e) {
            return new Window(null, Problems.of(e));
        } catch (IllegalArgumentException e) {
            return new Window(null, badWindow(e));
        }
    }

    /** A window the ledger refuses ("from: ..."): 400 naming the field its message starts with. */
    private static HttpResponse<?> badWindow(IllegalArgumentException e) {
        String msg = String.valueOf(e.getMessage());
        int colon = msg.indexOf(':');
        return Problem.badRequest(List.of(colon > 0 ? new Problem.FieldError(msg.substring(0, colon),
                msg.substring(colon + 1).trim()) : new Problem.FieldError("query", msg)));
    }

    /** Whose figures a request reads: a tenant its own, an admin the one it names (all when it names none). */
    private static String scope(Caller caller, String tenant) {
        return caller.admin() ? blankToNull(tenant) : caller.tenant();
    }

    @Serdeable
    public record UtilisationView(String tenant, String gpuSecondsSampled, String gpuSecondsUsed,
                                  @Nullable String usedPercent) {
    }

    @Serdeable
    public record UtilisationReport(String from, String to, List<UtilisationView> tenants) {
    }

    /**
     * Per tenant: GPU time held on GPUs the backends reported utilisation for, and how much of it was busy (from
     * {@code placement.utilisation-events}); a window defaults to the current month.
     */
    @Get("/finops/utilisation")
    public HttpResponse<?> utilisation(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                       @Nullable @QueryValue String from, @Nullable @QueryValue String to,
                                       @Nullable @QueryValue String tenant) {
        Optional<HttpResponse<?>> bad = checkTenant(caller, tenant);
        if (bad.isPresent()) {
            return bad.get();
        }
        Window parsed = window(from, to);
        if (parsed.problem() != null) {
            return parsed.problem();
        }
        String scope = scope(caller, tenant);
        return HttpResponse.ok(new UtilisationReport(parsed.window().from().toString(),
                parsed.window().to().toString(), finops.utilisation(scope, parsed.window()).stream()
                .map(u -> new UtilisationView(u.tenant(),
                        io.gantry.billing.core.Usage.secondsOfMicros(u.heldGpuMicros()).toPlainString(),
                        io.gantry.billing.core.Usage.secondsOfMicros(u.usedGpuMicros()).toPlainString(),
                        u.usedPercent() == null ? null : u.usedPercent().toPlainString())).toList()));
    }

    @Serdeable
    public record IdleView(String tenant, String jobId, int attempt, String allocationId, String idleSince,
                           long idleSeconds, String gpusHeld, String gpusUsed) {
    }

    /**
     * Allocations still held whose GPUs have been idle (at most placement's idle percent of what they hold) for at
     * least {@code minIdle} (ISO-8601 duration, default PT0S), longest idle first.
     */
    @Get("/finops/idle")
    public HttpResponse<?> idle(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                @Nullable @QueryValue String tenant, @Nullable @QueryValue String minIdle) {
        Optional<HttpResponse<?>> bad = checkTenant(caller, tenant);
        if (bad.isPresent()) {
            return bad.get();
        }
        java.time.Duration min;
        try {
            min = minIdle == null || minIdle.isBlank() ? java.time.Duration.ZERO : java.time.Duration.parse(minIdle);
            if (min.isNegative()) {
                throw new java.time.format.DateTimeParseException("negative", minIdle, 0);
            }
        } catch (java.time.format.DateTimeParseException e) {
            return Problem.badRequest(List.of(new Problem.FieldError("minIdle",
                    "must be a non-negative ISO-8601 duration such as PT30M, was " + minIdle)));
        }
        String scope = scope(caller, tenant);
        return HttpResponse.ok(finops.idle(scope, min).stream().map(i -> new IdleView(i.tenant(), i.jobId(),
                i.attempt(), i.allocationId(), i.idleSince().toString(), i.idleFor().toSeconds(),
                java.math.BigDecimal.valueOf(i.heldGpuMilli(), 3).toPlainString(),
                java.math.BigDecimal.valueOf(i.usedGpuMilli(), 3).toPlainString())).toList());
    }

    @Get("/reconciliation")
    public HttpResponse<?> reconciliation(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                          @Nullable @QueryValue String month) {
        if (!caller.admin()) {
            return Problems.adminOnly("reconciliation");
        }
        try {
            Reconciliation.Report r = reconciler.reconcile(BillingMonth.parse(month, settings.zone()));
            return HttpResponse.ok(ReconciliationView.of(r));
        } catch (InvalidInput e) {
            return Problems.of(e);
        }
    }

    @Serdeable
    public record TenantView(String tenant, boolean balanced, long eventGpuMicros, long ledgerGpuMicros,
                             String eventAmount, String ledgerAmount, @Nullable String invoiced,
                             List<String> missingFromLedger, List<String> notInEvents, List<String> differing) {
    }

    @Serdeable
    public record ReconciliationView(String month, String currency, boolean balanced, List<TenantView> tenants) {
        static ReconciliationView of(Reconciliation.Report r) {
            return new ReconciliationView(r.month().toString(), r.currency(), r.balanced(), r.tenants().stream()
                    .map(t -> new TenantView(t.tenant(), t.balanced(), t.eventGpuMicros(), t.ledgerGpuMicros(),
                            t.eventAmount().toPlainString(), t.ledgerAmount().toPlainString(),
                            t.invoiced() == null ? null : t.invoiced().toPlainString(), t.missingFromLedger(),
                            t.notInEvents(), t.differing())).toList());
        }
    }

    private static Optional<HttpResponse<?>> checkTenant(Caller caller, String tenant) {
        if (tenant != null && !tenant.isBlank() && !Ids.plausible(tenant)) {
            return Optional.of(Problem.badRequest(List.of(new Problem.FieldError("tenant", "must be " + Ids.RULE))));
        }
        if (!caller.admin() && tenant != null && !tenant.isBlank() && !tenant.equals(caller.tenant())) {
            return Optional.of(Problems.ownTenantOnly(caller.tenant()));
        }
        return Optional.empty();
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
