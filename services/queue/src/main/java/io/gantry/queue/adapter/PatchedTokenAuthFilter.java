package io.gantry.queue.adapter;

import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.TokenAuthFilter;
import io.gantry.runtime.http.TokenStore;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.RequestFilter;
import io.micronaut.http.annotation.ServerFilter;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The runtime's {@link TokenAuthFilter} with its return marked {@code @Nullable}: Micronaut 4.10 answers 500 when a
 * request filter returns null without it. Delete this class once the runtime is fixed (see .notes/queue.md).
 */
@ServerFilter("/v1/**")
@Requires(property = "gantry.auth.tokens-file")
@Replaces(TokenAuthFilter.class)
public class PatchedTokenAuthFilter {
    private final TokenStore tokens;

    public PatchedTokenAuthFilter(@Value("${gantry.auth.tokens-file}") String tokensFile) throws IOException {
        this.tokens = TokenStore.load(Path.of(tokensFile));
    }

    @RequestFilter
    @Nullable
    public HttpResponse<?> authenticate(HttpRequest<?> request) {
        String header = request.getHeaders().getAuthorization().orElse("");
        String token = header.regionMatches(true, 0, "Bearer ", 0, 7) ? header.substring(7).trim() : "";
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
