package io.gantry.admission.http;

import io.gantry.admission.core.Access;
import io.gantry.admission.core.FieldError;
import io.gantry.admission.db.AccessStore;
import io.gantry.admission.kafka.AccessEvents;
import io.gantry.admission.kafka.EventPublisher;
import io.gantry.admission.kafka.EventPublisher.PublishFailedException;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.JsonBody;
import io.gantry.runtime.http.Problem;
import io.gantry.schemas.Topics;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpHeaders;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.Post;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The admin API for tenants and their API tokens (admin role only). The rules are in {@link Access}; this stores
 * each change and publishes it on {@code admission.access-events} in one step (the row commits only after Kafka's
 * ack), which is how every service's token filter learns of it. A token's secret appears once, in the answer that
 * created it (issue, rotate), and nowhere else: not in the database, the topic or a log.
 */
@Controller("/v1/admin")
@ExecuteOn(TaskExecutors.BLOCKING)
public class AdminAccessController {
    private static final Logger LOG = LoggerFactory.getLogger(AdminAccessController.class);

    private final AccessStore store;
    private final EventPublisher publisher;
    private final Clock clock;
    private final io.gantry.runtime.http.TokenAuthFilter auth;

    public AdminAccessController(AccessStore store, EventPublisher publisher, Clock clock,
                                 io.gantry.runtime.http.TokenAuthFilter auth) {
        this.store = store;
        this.publisher = publisher;
        this.clock = clock;
        this.auth = auth;
    }

    /** The tenants of the tokens file this service started with. */
    private java.util.SortedSet<String> fileTenants() {
        return auth.fileTenants();
    }

    @Post(value = "/tenants", consumes = MediaType.ALL)
    public HttpResponse<?> createTenant(@RequestAttribute(Caller.ATTRIBUTE) Caller caller,
                                        @Nullable @Header(HttpHeaders.CONTENT_TYPE) String contentType,
                                        @Nullable @Body byte[] body) {
        if (!caller.admin()) {
            return forbidden();
        }
        Access.Parsed<Access.NewTenant> parsed;
        try {
            parsed = Access.newTenant(JsonBody.parse(contentType, body));
        } catch (JsonBody.Rejected r) {
            return Problem.of(r);
        }
        if (!parsed.isValid()) {
            return badRequest(parsed.errors());
        }
        Instant now = clock.instant();
        Access.NewTenant request = parsed.value();
        boolean inFile = fileTenants().contains(request.name());
        return change(() -> store.write(tx -> {
            Access.Outcome<Access.Tenant> outcome = Access.create(tx.tenantForUpdate(request.name()), request, inFile,
                    now);
            if (outcome.isOk()) {
                if (!tx.insertTenant(outcome.value(), now)) {
                    // created by a concurrent request between our read and our insert
                    return Access.create(Optional.of(outcome.value()), request, now);
                }
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, request.name(),
                        AccessEvents.of(outcome.value(), caller.tenant(), now));
            }
            return outcome;
        }), t -> {
            LOG.info("admin {} created tenant {}", caller.tenant(), t.name());
            return HttpResponse.created(tenantView(t), URI.create("/v1/admin/tenants/" + t.name()));
        });
    }

    @Get("/tenants")
    public HttpResponse<?> tenants(@RequestAttribute(Caller.ATTRIBUTE) Caller caller) {
        if (!caller.admin()) {
            return forbidden();
        }
        List<Access.Tenant> stored = store.tenants();
        List<Map<String, Object>> tenants = new java.util.ArrayList<>(stored.stream()
                .map(AdminAccessController::tenantView).toList());
        java.util.Set<String> named = stored.stream().map(Access.Tenant::name)
                .collect(java.util.stream.Collectors.toSet());
        // the tokens file's tenants exist too, unless and until the admin API gave them a record
        fileTenants().stream().filter(name -> !named.contains(name))
                .forEach(name -> tenants.add(fileTenantView(name)));
        return HttpResponse.ok(Map.of("tenants", tenants));
    }

    @Get("/tenants/{name}")
    public HttpResponse<?> tenant(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tenantNameProblem(name) != null) {
            return badRequest(List.of(new FieldError("name", Access.tenantNameProblem(name))));
        }
        return store.tenant(name).<HttpResponse<?>>map(t -> HttpResponse.ok(tenantView(t)))
                .orElseGet(() -> fileTenants().contains(name) ? HttpResponse.ok(fileTenantView(name))
                        : Problem.notFound("no tenant " + name));
    }

    @Post(value = "/tenants/{name}/disable", consumes = MediaType.ALL)
    public HttpResponse<?> disable(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name) {
        return setState(caller, name, Access.TenantState.DISABLED);
    }

    @Post(value = "/tenants/{name}/enable", consumes = MediaType.ALL)
    public HttpResponse<?> enable(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name) {
        return setState(caller, name, Access.TenantState.ACTIVE);
    }

    private HttpResponse<?> setState(Caller caller, String name, Access.TenantState to) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tenantNameProblem(name) != null) {
            return badRequest(List.of(new FieldError("name", Access.tenantNameProblem(name))));
        }
        Instant now = clock.instant();
        boolean inFile = fileTenants().contains(name);
        return change(() -> store.write(tx -> {
            Optional<Access.Tenant> before = tx.tenantForUpdate(name);
            Access.Outcome<Access.Tenant> outcome = Access.setState(before, name, to, caller.tenant(), inFile, now);
            if (outcome.isOk() && before.isEmpty()) {
                if (!tx.insertTenant(outcome.value(), now)) {
                    // made by a concurrent request between our read and our insert: the state it set stands
                    return Access.setState(tx.tenantForUpdate(name), name, to, caller.tenant());
                }
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, name,
                        AccessEvents.of(outcome.value(), caller.tenant(), now));
            } else if (outcome.isOk() && !outcome.value().equals(before.orElseThrow())) {
                tx.updateTenant(outcome.value(), now);
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, name,
                        AccessEvents.of(outcome.value(), caller.tenant(), now));
            }
            return outcome;
        }), t -> {
            LOG.info("admin {} set tenant {} {}", caller.tenant(), name, to);
            return HttpResponse.ok(tenantView(t));
        });
    }

    @Post(value = "/tenants/{name}/tokens", consumes = MediaType.ALL)
    public HttpResponse<?> issue(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name,
                                 @Nullable @Header(HttpHeaders.CONTENT_TYPE) String contentType,
                                 @Nullable @Body byte[] body) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tenantNameProblem(name) != null) {
            return badRequest(List.of(new FieldError("name", Access.tenantNameProblem(name))));
        }
        Object tree = null;
        if (body != null && body.length > 0) {
            try {
                tree = JsonBody.parse(contentType, body);
            } catch (JsonBody.Rejected r) {
                return Problem.of(r);
            }
            if (tree == null) {
                return badRequest(List.of(new FieldError("body", "must be a JSON object (or no body at all, for a "
                        + "token with the defaults)")));
            }
        }
        Instant now = clock.instant();
        Access.Parsed<Access.Issue> parsed = Access.issue(tree, now);
        if (!parsed.isValid()) {
            return badRequest(parsed.errors());
        }
        TokenSecrets.NewToken fresh = TokenSecrets.next();
        boolean inFile = fileTenants().contains(name);
        return change(() -> store.write(tx -> {
            Access.Outcome<Access.Issued> outcome = Access.issue(tx.tenantForUpdate(name), name, inFile,
                    parsed.value(), fresh.tokenId(), fresh.sha256(), now);
            if (outcome.isOk()) {
                Access.Tenant created = outcome.value().newTenant();
                if (created != null && tx.insertTenant(created, now)) {
                    publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, name,
                            AccessEvents.of(created, caller.tenant(), now));
                }
                Access.Token token = outcome.value().token();
                tx.insertToken(token);
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, fresh.tokenId(), AccessEvents.of(token, now));
            }
            return outcome;
        }), issued -> {
            Access.Token t = issued.token();
            LOG.info("admin {} issued token {} ({}) for tenant {}", caller.tenant(), t.tokenId(), t.role(), name);
            return secretAnswer(t, fresh.secret(), null, now);
        });
    }

    @Get("/tenants/{name}/tokens")
    public HttpResponse<?> tokens(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tenantNameProblem(name) != null) {
            return badRequest(List.of(new FieldError("name", Access.tenantNameProblem(name))));
        }
        if (store.tenant(name).isEmpty()) {
            return Problem.notFound("no tenant " + name);
        }
        Instant now = clock.instant();
        return HttpResponse.ok(Map.of("tokens", store.tokens(name).stream().map(t -> tokenView(t, now)).toList()));
    }

    @Post(value = "/tokens/{id}/revoke", consumes = MediaType.ALL)
    public HttpResponse<?> revoke(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tokenIdProblem(id) != null) {
            return badRequest(List.of(new FieldError("id", Access.tokenIdProblem(id))));
        }
        Instant now = clock.instant();
        return change(() -> store.write(tx -> {
            Optional<Access.Token> before = tx.tokenForUpdate(id);
            Access.Outcome<Access.Token> outcome = Access.revoke(before, id, now);
            if (outcome.isOk() && !outcome.value().equals(before.orElseThrow())) {
                tx.updateToken(outcome.value());
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, id, AccessEvents.of(outcome.value(), now));
            }
            return outcome;
        }), t -> {
            LOG.info("admin {} revoked token {} of tenant {}", caller.tenant(), id, t.tenant());
            return HttpResponse.ok(tokenView(t, now));
        });
    }

    @Post(value = "/tokens/{id}/rotate", consumes = MediaType.ALL)
    public HttpResponse<?> rotate(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String id,
                                  @Nullable @QueryValue String overlap) {
        if (!caller.admin()) {
            return forbidden();
        }
        if (Access.tokenIdProblem(id) != null) {
            return badRequest(List.of(new FieldError("id", Access.tokenIdProblem(id))));
        }
        Access.Parsed<Duration> parsedOverlap = Access.overlap(overlap);
        if (!parsedOverlap.isValid()) {
            return badRequest(parsedOverlap.errors());
        }
        Instant now = clock.instant();
        TokenSecrets.NewToken fresh = TokenSecrets.next();
        return change(() -> store.write(tx -> {
            Optional<Access.Token> old = tx.tokenForUpdate(id);
            Optional<Access.Tenant> tenant = old.isEmpty() ? Optional.empty()
                    : tx.tenantForUpdate(old.get().tenant());
            Access.Outcome<Access.Rotation> outcome = Access.rotate(old, tenant, id, parsedOverlap.value(),
                    fresh.tokenId(), fresh.sha256(), now);
            if (outcome.isOk()) {
                tx.insertToken(outcome.value().issued());
                tx.updateToken(outcome.value().replaced());
                // the new token first: a reader never sees the old one gone before its successor exists
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, fresh.tokenId(),
                        AccessEvents.of(outcome.value().issued(), now));
                publisher.publish(Topics.ADMISSION_ACCESS_EVENTS, id, AccessEvents.of(outcome.value().replaced(), now));
            }
            return outcome;
        }), r -> {
            LOG.info("admin {} rotated token {} to {} (overlap {})", caller.tenant(), id, r.issued().tokenId(),
                    parsedOverlap.value());
            return secretAnswer(r.issued(), fresh.secret(), r.replaced(), now);
        });
    }

    // ---- answers ------------------------------------------------------------------------------------------------

    private interface Change<T> {
        Access.Outcome<T> run();
    }

    /** Runs a change and maps its outcome: the answer, 404/409 naming the field, or 503 if Kafka did not ack. */
    private <T> HttpResponse<?> change(Change<T> change, java.util.function.Function<T, HttpResponse<?>> answer) {
        Access.Outcome<T> outcome;
        try {
            outcome = change.run();
        } catch (RuntimeException e) {
            if (causedByPublish(e)) {
                LOG.warn("access change not published, nothing changed: {}", e.getMessage());
                return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Unavailable",
                        "the change could not be published (Kafka did not acknowledge it); nothing changed, retry",
                        List.of());
            }
            throw e;
        }
        if (outcome.isOk()) {
            return answer.apply(outcome.value());
        }
        List<Problem.FieldError> errors = List.of(new Problem.FieldError(outcome.field(), outcome.message()));
        return outcome.refusal() == Access.Refusal.NOT_FOUND
                ? Problem.response(HttpStatus.NOT_FOUND, "Not found", outcome.message(), errors)
                : Problem.response(HttpStatus.CONFLICT, "Conflict", outcome.message(), errors);
    }

    private static boolean causedByPublish(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof PublishFailedException) {
                return true;
            }
        }
        return false;
    }

    private static HttpResponse<?> secretAnswer(Access.Token t, String secret, Access.Token replaced, Instant now) {
        Map<String, Object> body = tokenView(t, now);
        body.put("token", secret);
        body.put("warning", "this is the only time the token is shown: store it now (Gantry keeps only its hash)");
        if (replaced != null) {
            body.put("replaced", tokenView(replaced, now));
        }
        return HttpResponse.created(body, URI.create("/v1/admin/tenants/" + t.tenant() + "/tokens"))
                // the answer holds a secret: no cache may keep it
                .header(HttpHeaders.CACHE_CONTROL, "no-store");
    }

    /** A tenant only the tokens file names: active (disabling it gives it a record). */
    static Map<String, Object> fileTenantView(String name) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("displayName", name);
        m.put("state", Access.TenantState.ACTIVE.name());
        m.put("source", "tokens-file");
        return m;
    }

    static Map<String, Object> tenantView(Access.Tenant t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", t.name());
        m.put("displayName", t.displayName());
        m.put("state", t.state().name());
        m.put("createdAt", t.createdAt().toString());
        return m;
    }

    static Map<String, Object> tokenView(Access.Token t, Instant now) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tokenId", t.tokenId());
        m.put("tenant", t.tenant());
        m.put("role", t.role().name().toLowerCase(java.util.Locale.ROOT));
        m.put("label", t.label());
        m.put("state", t.stateAt(now));
        m.put("createdAt", t.createdAt().toString());
        m.put("expiresAt", t.expiresAt().toString());
        m.put("revokedAt", t.revokedAt() == null ? null : t.revokedAt().toString());
        m.put("replacedBy", t.replacedBy());
        return m;
    }

    private static HttpResponse<?> forbidden() {
        return Problem.response(HttpStatus.FORBIDDEN, "Forbidden", "only admins manage tenants and tokens", List.of());
    }

    private static HttpResponse<?> badRequest(List<FieldError> errors) {
        return Problem.badRequest(errors.stream().map(e -> new Problem.FieldError(e.field(), e.message())).toList());
    }
}
