package io.gantry.billing.http;

import io.gantry.billing.core.Money;
import io.gantry.billing.core.Budget;
import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.money.BudgetService;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Put;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.util.List;

/** Money budgets: an admin replaces the whole set; a tenant reads its own with this month's spend. */
@Controller("/v1/budgets")
@ExecuteOn(TaskExecutors.BLOCKING)
public class BudgetController {
    private final BudgetService budgets;

    public BudgetController(BudgetService budgets) {
        this.budgets = budgets;
    }

    @Serdeable
    public record StatusView(String tenant, @Nullable String queue, String month, String limit, String spent,
                             String state, int thresholdPercent, String action, List<Integer> warnAt) {
        static StatusView of(Budget.Status s, int digits) {
            return new StatusView(s.budget().tenant(), s.budget().queue(), s.month().toString(),
                    Money.text(s.budget().limit(), digits), Money.text(s.spent(), digits), s.state().name(),
                    s.thresholdPercent(), s.budget().action().name(), s.budget().warnAt());
        }
    }

    @Serdeable
    public record Budgets(List<StatusView> budgets) {
    }

    @Get
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        return HttpResponse.ok(new Budgets(budgets.statuses().stream()
                .filter(s -> caller.mayAccess(s.budget().tenant())).map(s -> StatusView.of(s, budgets.minorDigits())).toList()));
    }

    @Put(consumes = MediaType.ALL)
    public HttpResponse<?> put(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, HttpRequest<?> request,
                               @Nullable @Body byte[] body) {
        if (!caller.admin()) {
            return Problems.adminOnly("setting budgets");
        }
        try {
            Object tree = JsonBody.parse(request.getHeaders().get(HttpHeaders.CONTENT_TYPE), body);
            return HttpResponse.ok(new Budgets(budgets.replace(tree).stream().map(s -> StatusView.of(s, budgets.minorDigits())).toList()));
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        } catch (InvalidInput e) {
            return Problems.of(e);
        }
    }
}
