package io.gantry.queue.adapter;

import io.gantry.queue.core.ConfigException;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Put;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.serde.annotation.Serdeable;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The queue configuration through the admin API: read it (with the last refused one) and replace it. A new
 * configuration is validated in full, applied without a restart and published on {@code queue.config-events};
 * an invalid one is refused with every problem named by its path, and the live one is kept.
 */
@Controller("/v1/admin/queue-config")
public class AdminConfigController {
    private final QueueProcessor queue;

    public AdminConfigController(QueueProcessor queue) {
        this.queue = queue;
    }

    @Serdeable
    public record Applied(long version, String source, String appliedBy, String appliedAt, String sha256,
                          String yaml) {
        static Applied of(LiveConfig.Applied a) {
            return a == null ? null : new Applied(a.version(), a.source(), a.appliedBy(), a.at().toString(),
                    a.sha256(), a.yaml());
        }
    }

    @Serdeable
    public record Rejected(String source, String by, String at, List<String> problems) {
        static Rejected of(LiveConfig.Rejected r) {
            return r == null ? null : new Rejected(r.source(), r.by(), r.at().toString(), r.problems());
        }
    }

    @Serdeable
    public record Status(Applied current, Rejected lastRejected) {
    }

    @Get
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        if (!caller.admin()) {
            return forbidden();
        }
        QueueEventHandler.ConfigStatus s = onLoop((h, out) -> h.configStatus());
        return HttpResponse.ok(new Status(Applied.of(s.current()), Rejected.of(s.rejected())));
    }

    /** The body is the whole configuration as YAML (Content-Type application/yaml or text/plain). */
    @Put(consumes = {"application/yaml", "application/x-yaml", MediaType.TEXT_PLAIN})
    public HttpResponse<?> put(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @Body String yaml)
            throws Exception {
        if (!caller.admin()) {
            return forbidden();
        }
        if (yaml == null || yaml.isBlank()) {
            return Problem.badRequest(List.of(new Problem.FieldError("body",
                    "must be the whole queue configuration as YAML")));
        }
        try {
            LiveConfig.Applied a = onLoop((h, out) -> h.applyAdmin(yaml, caller.tenant(), out));
            return HttpResponse.ok(Applied.of(a));
        } catch (ConfigException e) {
            List<Problem.FieldError> errors = new ArrayList<>();
            for (String p : e.problems()) {
                // "body: queues[0].quotas.H100.lendingLimit: must be ..." -> field and message
                String rest = p.startsWith("body: ") ? p.substring(6) : p;
                int colon = rest.indexOf(": ");
                errors.add(colon > 0 ? new Problem.FieldError(rest.substring(0, colon), rest.substring(colon + 2))
                        : new Problem.FieldError("body", rest));
            }
            return Problem.badRequest(errors);
        }
    }

    private static HttpResponse<?> forbidden() {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the queue configuration needs the admin role",
                List.of());
    }

    private <T> T onLoop(java.util.function.BiFunction<QueueEventHandler, io.gantry.runtime.kafka.Output, T> command)
            throws Exception {
        try {
            return queue.command(command);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ConfigException c) {
                throw c;
            }
            throw new QueueController.QueueUnavailableException(e);
        } catch (TimeoutException e) {
            throw new QueueController.QueueUnavailableException(e);
        }
    }

    @io.micronaut.http.annotation.Error(exception = QueueController.QueueUnavailableException.class)
    public HttpResponse<?> unavailable(QueueController.QueueUnavailableException e) {
        return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Service unavailable",
                "the queue is rebuilding its state; retry shortly", List.of()).header("Retry-After", "1");
    }
}
