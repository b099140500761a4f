package io.gantry.runtime.http;

import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpMethod;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.RequestFilter;
import io.micronaut.http.annotation.ServerFilter;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Authenticates every {@code /v1/**} request by its {@code Authorization: Bearer <token>} header and stores the
 * {@link Caller} as a request attribute. Missing or unknown tokens get 401 problem+json.
 */
@ServerFilter("/v1/**")
public class TokenAuthFilter {
    /** Request attribute holding a run token presented to the checkpoint endpoint. */
    public static final String RUN_TOKEN_ATTRIBUTE = "gantry.runToken";
    private static final java.util.regex.Pattern CHECKPOINT_REPORT =
            java.util.regex.Pattern.compile("/v1/jobs/[^/]+/checkpoints/?");
    private final TokenStore tokens;

    /** Fails closed: without a tokens file every {@code /v1} request is refused; a broken file stops the start. */
    public TokenAuthFilter(@Value("${gantry.auth.tokens-file:}") String tokensFile) throws IOException {
        this.tokens = tokensFile == null || tokensFile.isBlank() ? TokenStore.parse("tokens: []")
                : TokenStore.load(Path.of(tokensFile));
    }

    /** Returns null to let the request through (hence {@code @Nullable}, which Micronaut 4 requires). */
    @RequestFilter
    @Nullable
    public HttpResponse<?> authenticate(HttpRequest<?> request) {
        String header = request.getHeaders().getAuthorization().orElse("");
        String token = header.regionMatches(true, 0, "Bearer ", 0, 7) ? header.substring(7).trim() : "";
        if (RunTokens.isRunToken(token)) {
            // a run's own token authenticates one thing only, its checkpoint reports; the endpoint checks the token
            // against the run, so it is passed on, never looked up here
            if (request.getMethod() == HttpMethod.POST && CHECKPOINT_REPORT.matcher(request.getPath()).matches()) {
                request.setAttribute(RUN_TOKEN_ATTRIBUTE, token);
                return null;
            }
            return Problem.response(HttpStatus.UNAUTHORIZED, "Unauthorized",
                    "a run token only reports its run's checkpoints (POST /v1/jobs/{id}/checkpoints)", List.of())
                    .header("WWW-Authenticate", "Bearer");
        }
        var caller = tokens.authenticate(token);
        if (caller.isEmpty()) {
            return Problem.response(HttpStatus.UNAUTHORIZED, "Unauthorized",
                    token.isEmpty() ? "missing `Authorization: Bearer <token>` header" : "unknown API token",
                    List.of()).header("WWW-Authenticate", "Bearer");
        }
        request.setAttribute(Caller.ATTRIBUTE, caller.get());
        return null;
    }
}
