package io.gantry.billing.http;

import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.money.ExactYaml;
import io.gantry.billing.money.PriceBookService;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
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
import java.util.Map;
import java.util.Set;

/**
 * The price book: everyone may read the version in force (a tenant should know what its GPU time costs); only an
 * admin may apply a new one, as JSON or YAML. A new version never changes a price already in force.
 */
@Controller("/v1/price-book")
@ExecuteOn(TaskExecutors.BLOCKING)
public class PriceBookController {
    private static final Set<String> YAML = Set.of("application/yaml", "application/x-yaml", "text/yaml");

    private final PriceBookService prices;

    public PriceBookController(PriceBookService prices) {
        this.prices = prices;
    }

    @Serdeable
    public record Version(long version, @Nullable String appliedAt, @Nullable String appliedBy,
                          Map<String, Object> book) {
    }

    @Get
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        BillingStore.PriceBookRow row = prices.currentRow();
        return HttpResponse.ok(new Version(row == null ? 0 : row.version(),
                row == null ? null : row.appliedAt().toString(), row == null ? null : row.appliedBy(), prices.tree()));
    }

    @Get("/versions")
    public HttpResponse<?> versions(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        if (!caller.admin()) {
            return Problems.adminOnly("the price book history");
        }
        return HttpResponse.ok(prices.history().stream().map(r -> new Version(r.version(), r.appliedAt().toString(),
                r.appliedBy(), asMap(prices.parseJson(r.document())))).toList());
    }

    @Put(consumes = MediaType.ALL)
    public HttpResponse<?> put(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, HttpRequest<?> request,
                               @Nullable @Body byte[] body) {
        if (!caller.admin()) {
            return Problems.adminOnly("changing the price book");
        }
        String raw = request.getHeaders().get(HttpHeaders.CONTENT_TYPE);
        String type = raw == null ? "" : raw.split(";")[0].trim().toLowerCase(java.util.Locale.ROOT);
        Object tree;
        try {
            if (YAML.contains(type)) {
                var charset = JsonBody.charsetProblem(raw);
                if (charset.isPresent()) {
                    return unsupported(charset.get());
                }
                String text = JsonBody.utf8(body);
                if (text.isBlank()) {
                    return Problem.badRequest(List.of(new Problem.FieldError("body", "is required (the price book)")));
                }
                try {
                    tree = ExactYaml.load(text);
                } catch (RuntimeException e) {
                    return Problem.badRequest(List.of(new Problem.FieldError("body", "is not valid YAML: "
                            + ExactYaml.problem(e))));
                }
            } else if (JsonBody.contentTypeProblem(raw).isEmpty()) {
                tree = JsonBody.parse(body);
            } else {
                return unsupported("must be application/json or application/yaml, was "
                        + (raw == null ? "missing" : "'" + raw + "'"));
            }
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        }
        try {
            BillingStore.PriceBookRow row = prices.apply(tree, caller.tenant());
            return HttpResponse.ok(new Version(row.version(), row.appliedAt().toString(), row.appliedBy(),
                    asMap(prices.parseJson(row.document()))));
        } catch (InvalidInput e) {
            return Problems.of(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    private static HttpResponse<?> unsupported(String message) {
        return Problem.response(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "Unsupported media type",
                "Content-Type: " + message, List.of(new Problem.FieldError("Content-Type", message)));
    }
}
