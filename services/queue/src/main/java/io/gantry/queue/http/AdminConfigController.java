package io.gantry.queue.http;

import io.gantry.queue.config.LiveConfig;
import io.gantry.queue.config.QueueConfig;
import io.gantry.queue.kafka.QueueHandler;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.queue.core.ConfigException;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.Units;
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
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.serde.annotation.Serdeable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The queue configuration through the admin API: read it (with the last refused one) and replace it. A new
 * configuration is validated in full, applied without a restart and published on {@code queue.config-events};
 * an invalid one is refused with every problem named by its path, and the live one is kept.
 */
@Controller("/v1/admin/queue-config")
public class AdminConfigController {
    static final String YAML = "application/yaml";
    private static final java.util.Set<String> YAML_TYPES = java.util.Set.of(YAML, "application/x-yaml", "text/yaml",
            MediaType.TEXT_PLAIN);
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

    /**
     * The status as JSON; with {@code Accept: application/yaml} only the live configuration's text. Either is a
     * valid PUT body as it comes (the JSON one with {@code Content-Type: application/json}).
     */
    @Get(produces = {MediaType.APPLICATION_JSON, YAML})
    public HttpResponse<?> get(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, HttpRequest<?> request)
            throws Exception {
        if (!caller.admin()) {
            return forbidden();
        }
        java.util.Optional<HttpResponse<?>> there = toShardZero(request, new byte[0]);
        if (there.isPresent()) {
            return there.get();
        }
        QueueHandler.ConfigStatus s = onLoop((h, out) -> h.configStatus());
        if (wantsYaml(request) && s.current() != null) {
            return HttpResponse.ok(s.current().yaml().getBytes(StandardCharsets.UTF_8))
                    .contentType(MediaType.of(YAML + ";charset=utf-8"));
        }
        return HttpResponse.ok(new Status(Applied.of(s.current()), Rejected.of(s.rejected())));
    }

    private static boolean wantsYaml(HttpRequest<?> request) {
        for (MediaType m : request.accept()) {
            String name = m.getName();
            if (YAML_TYPES.contains(name)) {
                return true;
            }
            if (MediaType.APPLICATION_JSON.equals(name)) {
                return false;
            }
        }
        return false;
    }

    /**
     * The body is the whole configuration: YAML ({@code application/yaml}, {@code application/x-yaml},
     * {@code text/yaml}, {@code text/plain}) or JSON ({@code application/json}), UTF-8, exactly one document. A
     * JSON body may also be what {@code GET} answered: then its {@code current.yaml} is applied and the read-only
     * fields are ignored. {@code force=true} applies a configuration that would leave queued or running jobs without
     * their queue.
     */
    @Put(consumes = MediaType.ALL)
    public HttpResponse<?> put(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, HttpRequest<?> request,
                               @Nullable @Body byte[] body, @Nullable @QueryValue("force") String force)
            throws Exception {
        if (!caller.admin()) {
            return forbidden();
        }
        java.util.Optional<HttpResponse<?>> there = toShardZero(request, body);
        if (there.isPresent()) {
            return there.get();
        }
        if (force != null && !force.equals("true") && !force.equals("false")) {
            return Problem.badRequest(List.of(new Problem.FieldError("force", "must be true or false, was '"
                    + force + "'")));
        }
        String raw = request.getHeaders().get(HttpHeaders.CONTENT_TYPE);
        MediaType type;
        try {
            type = raw == null || raw.isBlank() ? null : MediaType.of(raw);
        } catch (RuntimeException e) {
            type = null;
        }
        if (type == null || !YAML_TYPES.contains(type.getName()) && !MediaType.APPLICATION_JSON.equals(type.getName())) {
            return unsupported("must be application/yaml, application/x-yaml, text/yaml, text/plain or "
                    + "application/json, was " + (raw == null ? "missing" : "'" + raw + "'"));
        }
        var charsetProblem = JsonBody.charsetProblem(raw);
        if (charsetProblem.isPresent()) {
            return unsupported(charsetProblem.get());
        }
        String text;
        try {
            text = JsonBody.utf8(body);
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        }
        if (text.isBlank()) {
            return Problem.badRequest(List.of(new Problem.FieldError("body",
                    "must be the whole queue configuration as YAML or JSON")));
        }
        try {
            String yaml = MediaType.APPLICATION_JSON.equals(type.getName()) ? fromJson(text) : text;
            boolean forced = "true".equals(force);
            LiveConfig.Applied a = onLoop((h, out) -> h.applyAdmin(yaml, caller.tenant(), forced, out));
            return HttpResponse.ok(Applied.of(a));
        } catch (ConfigException e) {
            List<Problem.FieldError> errors = new ArrayList<>();
            for (String p : e.problems()) {
                // "body: queues[0].quotas.H100.lendingLimit: must be ..." -> field and message
                String rest = p.startsWith("body: ") ? p.substring(6) : p;
                int colon = rest.indexOf(": ");
                errors.add(colon > 0 && !rest.startsWith("not valid YAML")
                        ? new Problem.FieldError(rest.substring(0, colon), rest.substring(colon + 2))
                        : new Problem.FieldError("body", rest));
            }
            return Problem.badRequest(errors);
        }
    }

    /**
     * A JSON body: the configuration itself (JSON is YAML, so it is applied as its own text), or a GET answer,
     * whose {@code current.yaml} is the configuration.
     */
    private static String fromJson(String text) {
        Object doc = QueueConfig.parseDocument(text, "body");
        if (doc instanceof Map<?, ?> m && m.containsKey("current")) {
            for (Object k : m.keySet()) {
                if (!"current".equals(k) && !"lastRejected".equals(k)) {
                    throw new ConfigException(List.of("body: " + k + ": unknown key in a GET answer (allowed: "
                            + "current, lastRejected)"));
                }
            }
            if (m.get("current") instanceof Map<?, ?> c && c.get("yaml") instanceof String yaml && !yaml.isBlank()) {
                return yaml;
            }
            throw new ConfigException(List.of("body: current.yaml: must be the configuration text"));
        }
        return text;
    }

    private static HttpResponse<?> unsupported(String message) {
        return Problem.response(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "Unsupported media type",
                "Content-Type: " + message, List.of(new Problem.FieldError("Content-Type", message)));
    }

    /**
     * Split by cohort tree, shard 0 decides the configuration: the answer of the instance owning it when that is
     * another one; empty when it is owned here (or the queue is not split).
     */
    private java.util.Optional<HttpResponse<?>> toShardZero(HttpRequest<?> request, byte[] body) {
        return Units.toOwnerOf(queue.units(), request, "0", body);
    }

    private static HttpResponse<?> forbidden() {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "the queue configuration needs the admin role",
                List.of());
    }

    private <T> T onLoop(java.util.function.BiFunction<QueueHandler, io.gantry.runtime.kafka.Output, T> command)
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
