package io.gantry.runtime.http;

import io.gantry.runtime.kafka.Ownership;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.core.order.Ordered;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.MediaType;
import io.micronaut.http.MutableHttpResponse;
import io.micronaut.http.ServerHttpRequest;
import io.micronaut.http.annotation.RequestFilter;
import io.micronaut.http.annotation.ServerFilter;
import io.micronaut.http.body.CloseableAvailableByteBody;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * On a standby instance of a service with one owner ({@link OwnedWork}), answers every API request by forwarding it
 * to the owner, as is: method, path and query, the body, and the headers that matter (authorization, content type,
 * idempotency key); the owner's answer comes back unchanged, with {@code Gantry-Served-By} naming the owner. So a load
 * balancer may send requests to any instance. While no owner is known (a failover under way) the answer is 503
 * problem+json with {@code Retry-After}; a request already forwarded once is never forwarded again.
 */
@ServerFilter("/v1/**")
@Requires(beans = OwnedWork.class)
public class OwnerForwardingFilter implements Ordered {
    /** Marks a forwarded request, so two instances that each think the other owns the work do not ping-pong. */
    static final String FORWARDED = "Gantry-Forwarded-By";
    static final String SERVED_BY = "Gantry-Served-By";
    private static final Set<String> PASSED = Set.of("authorization", "content-type", "accept", "idempotency-key",
            "if-match", "if-none-match");
    private static final List<String> RETURNED = List.of("Location", "Retry-After", "WWW-Authenticate", "ETag");

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final OwnedWork work;
    private final Ownership ownership;

    public OwnerForwardingFilter(OwnedWork work) {
        this.work = work;
        this.ownership = work.ownership();
    }

    /** Whether the request was forwarded by another instance (it is answered here, never forwarded again). */
    public static boolean forwarded(HttpRequest<?> request) {
        return request.getHeaders().contains(FORWARDED);
    }

    /** Before authentication: the owner authenticates the forwarded request itself. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE + 100;
    }

    /** Null lets the request through (this instance owns the work, or is still starting and will). */
    @RequestFilter
    @ExecuteOn(TaskExecutors.BLOCKING)
    @Nullable
    public HttpResponse<?> forward(HttpRequest<?> request) {
        if (!work.forwardsToOwner() || ownership.role() != Ownership.Role.STANDBY) {
            return null;
        }
        String owner = ownership.ownerUrl().orElse(null);
        if (owner == null || request.getHeaders().contains(FORWARDED)) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "No owner",
                    "this instance is a standby and no instance owns the work right now (a failover is under way); "
                            + "retry shortly", List.of()).header("Retry-After", "2");
        }
        return forward(request, owner, ownership.advertisedUrl());
    }

    /**
     * Sends {@code request} as is (method, path and query, body, the headers that matter) to the instance at
     * {@code owner}, marked as forwarded by {@code self}, and answers with its answer ({@code Gantry-Served-By}
     * naming it); 503 problem+json with {@code Retry-After} when it does not answer.
     */
    public static MutableHttpResponse<?> forward(HttpRequest<?> request, String owner, String self) {
        try {
            return forward(request, owner, self, body(request));
        } catch (IOException e) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Unreadable request",
                    "the request could not be forwarded: " + e.getMessage(), List.of());
        }
    }

    /** {@link #forward(HttpRequest, String, String)} with the body the caller has read already. */
    public static MutableHttpResponse<?> forward(HttpRequest<?> request, String owner, String self, byte[] body) {
        try {
            java.net.http.HttpRequest.Builder out = java.net.http.HttpRequest.newBuilder(
                            URI.create(owner + request.getUri().toString()))
                    .timeout(Duration.ofSeconds(30))
                    .method(request.getMethodName(), body.length == 0 ? BodyPublishers.noBody()
                            : BodyPublishers.ofByteArray(body))
                    .header(FORWARDED, self.isEmpty() ? "standby" : self);
            request.getHeaders().forEach((name, values) -> {
                if (PASSED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                    values.forEach(v -> out.header(name, v));
                }
            });
            java.net.http.HttpResponse<byte[]> answer = HTTP.send(out.build(), BodyHandlers.ofByteArray());
            MutableHttpResponse<byte[]> response = HttpResponse.<byte[]>status(HttpStatus.valueOf(answer.statusCode()))
                    .header(SERVED_BY, owner);
            answer.headers().firstValue("Content-Type").ifPresent(ct -> response.contentType(MediaType.of(ct)));
            for (String h : RETURNED) {
                answer.headers().firstValue(h).ifPresent(v -> response.header(h, v));
            }
            return answer.body().length == 0 ? response : response.body(answer.body());
        } catch (IOException e) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Owner unreachable",
                    "the instance owning the work (" + owner + ") did not answer: " + e.getMessage()
                            + "; retry shortly", List.of()).header("Retry-After", "2");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Interrupted", "the forward was interrupted",
                    List.of());
        }
    }

    private static byte[] body(HttpRequest<?> request) throws IOException {
        if (!(request instanceof ServerHttpRequest<?> server)) {
            return new byte[0];
        }
        try (CloseableAvailableByteBody b = server.byteBody().split().buffer().get(30, TimeUnit.SECONDS)) {
            return b.toByteArray();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("the request body could not be read: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the request body", e);
        }
    }
}
