package io.gantry.runtime.http;

import io.gantry.runtime.access.AccessDirectory;
import io.gantry.runtime.access.AccessView;
import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.RequestFilter;
import io.micronaut.http.annotation.ServerFilter;
import jakarta.inject.Inject;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;

/**
 * Authenticates every {@code /v1/**} request by its {@code Authorization: Bearer <token>} header and stores the
 * {@link Caller} as a request attribute. Missing, unknown, revoked or expired tokens get 401 problem+json, a token
 * of a disabled tenant 403.
 *
 * <p>Two sources of tokens: the bootstrap tokens file ({@code gantry.auth.tokens-file}), and the tenants and tokens
 * admins manage through admission, as the {@link AccessView} of {@code admission.access-events} holds them (when
 * the service has Kafka). A tenant the view says is disabled is refused with its file tokens too.
 */
@ServerFilter("/v1/**")
public class TokenAuthFilter {
    /** Request attribute holding a run token presented to the checkpoint or preemption-notice endpoint. */
    public static final String RUN_TOKEN_ATTRIBUTE = "gantry.runToken";
    private static final java.util.regex.Pattern CHECKPOINT_REPORT =
            java.util.regex.Pattern.compile("/v1/jobs/[^/]+/checkpoints/?");
    private static final java.util.regex.Pattern PREEMPTION_NOTICE =
            java.util.regex.Pattern.compile("/v1/jobs/[^/]+/preemption/?");
    private final TokenStore tokens;
    private final AccessDirectory managed;
    private final Clock clock;

    /**
     * Fails closed: without a tokens file and an access view every {@code /v1} request is refused; a broken file
     * stops the start. Expiry is wall-clock time, never a service's own (the simulated cluster's may run faster).
     */
    @Inject
    public TokenAuthFilter(@Value("${gantry.auth.tokens-file:}") String tokensFile, @Nullable AccessView view)
            throws IOException {
        this.tokens = tokensFile == null || tokensFile.isBlank() ? TokenStore.parse("tokens: []")
                : TokenStore.load(Path.of(tokensFile));
        // without Kafka (or with the view switched off) only the file counts: an empty directory knows no tenant
        this.managed = view == null ? new AccessDirectory() : view.directory();
        this.clock = Clock.systemUTC();
    }

    /** The tenants the tokens file names (they exist without being created through the admin API). */
    public java.util.SortedSet<String> fileTenants() {
        return tokens.tenants();
    }

    /** Returns null to let the request through (hence {@code @Nullable}, which Micronaut 4 requires). */
    @RequestFilter
    @Nullable
    public HttpResponse<?> authenticate(HttpRequest<?> request) {
        HttpResponse<?> refusal = refusal(request);
        if (refusal instanceof io.micronaut.http.MutableHttpResponse<?> r) {
            // a refusal skips the response filter below
            r.getHeaders().set(io.micronaut.http.HttpHeaders.CACHE_CONTROL, "no-store");
        }
        return refusal;
    }

    /** Null when the request may pass (its caller set), else the answer refusing it. */
    @Nullable
    private HttpResponse<?> refusal(HttpRequest<?> request) {
        List<String> given = request.getHeaders().getAll(io.micronaut.http.HttpHeaders.AUTHORIZATION);
        if (given.size() > 1) {
            // which one would count is a guess a proxy and this service might make differently
            return Problem.badRequest(List.of(new Problem.FieldError("Authorization", "given " + given.size()
                    + " times; send one `Authorization: Bearer <token>` header")));
        }
        String header = request.getHeaders().getAuthorization().orElse("");
        if (!header.isBlank() && !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Problem.response(HttpStatus.UNAUTHORIZED, "Unauthorized", "only `Authorization: Bearer <token>` "
                    + "is accepted, not the " + header.strip().split("\\s+", 2)[0] + " scheme", List.of())
                    .header("WWW-Authenticate", "Bearer");
        }
        String token = header.regionMatches(true, 0, "Bearer ", 0, 7) ? header.substring(7).trim() : "";
        if (RunTokens.isRunToken(token)) {
            // a run's own token authenticates two things only, its checkpoint reports and reading its preemption
            // notice; the endpoint checks the token against the run, so it is passed on, never looked up here
            if (request.getMethod() == HttpMethod.POST && CHECKPOINT_REPORT.matcher(request.getPath()).matches()
                    || request.getMethod() == HttpMethod.GET && PREEMPTION_NOTICE.matcher(request.getPath()).matches()) {
                request.setAttribute(RUN_TOKEN_ATTRIBUTE, token);
                return null;
            }
            return Problem.response(HttpStatus.UNAUTHORIZED, "Unauthorized",
                    "a run token only reports its run's checkpoints (POST /v1/jobs/{id}/checkpoints) and reads its "
                            + "preemption notice (GET /v1/jobs/{id}/preemption)", List.of())
                    .header("WWW-Authenticate", "Bearer");
        }
        if (token.isEmpty()) {
            return Problem.response(HttpStatus.UNAUTHORIZED, "Unauthorized",
                    "missing `Authorization: Bearer <token>` header", List.of()).header("WWW-Authenticate", "Bearer");
        }
        String hash = HexFormat.of().formatHex(TokenStore.sha256(token));
        AccessDirectory.Decision decision = managed.decide(hash, tokens.authenticate(token), clock.instant());
        if (decision instanceof AccessDirectory.Refused refused) {
            var answer = Problem.response(refused.status() == 403 ? HttpStatus.FORBIDDEN : HttpStatus.UNAUTHORIZED,
                    refused.status() == 403 ? "Forbidden" : "Unauthorized", refused.detail(), List.of());
            return refused.status() == 403 ? answer : answer.header("WWW-Authenticate", "Bearer");
        }
        request.setAttribute(Caller.ATTRIBUTE, ((AccessDirectory.Allowed) decision).caller());
        return null;
    }

    /**
     * Every {@code /v1} answer is one caller's (their jobs and variables, a token shown once): no cache, shared or
     * private, may keep it.
     */
    @io.micronaut.http.annotation.ResponseFilter
    public void noStore(io.micronaut.http.MutableHttpResponse<?> response) {
        // set, not added: an answer that says so itself (a token shown once) keeps one header
        response.getHeaders().set(io.micronaut.http.HttpHeaders.CACHE_CONTROL, "no-store");
    }
}
