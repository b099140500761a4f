package io.gantry.runtime.http;

import io.gantry.runtime.kafka.DatabaseFailures;
import io.micronaut.context.BeanProvider;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Produces;
import io.micronaut.http.server.RouteExecutor;
import io.micronaut.http.server.exceptions.ExceptionHandler;
import io.micronaut.http.server.exceptions.response.ErrorContext;
import io.micronaut.http.server.exceptions.response.ErrorResponseProcessor;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.function.BiFunction;

/**
 * A request that failed because the service's database cannot be reached is logged as one WARN line without a stack
 * (method, path and the database's own words), and answered as {@link ProblemErrorResponseProcessor} answers it: 503
 * problem+json with a Retry-After. Micronaut logs a failure that no handler takes as "Unexpected error occurred" at
 * ERROR with its whole stack: during an outage that is a hundred lines a request for something that is neither a bug
 * nor news after the first, and that {@code /health} already reports. One line a request, not a rate limit: the
 * outage takes {@code /health} DOWN, so a load balancer stops sending requests within a probe or two, and each line
 * left says which request was refused, as the 503 in an access log would. The stack is at DEBUG for whoever needs it.
 *
 * <p>Every other failure goes to Micronaut's own handling unchanged (ERROR with the stack, a 500). Micronaut picks the
 * handler closest to the failure's type, so its own handlers for narrower types still win; a failure may reach this
 * one as a {@link RuntimeException} (a wrapper such as Micronaut Data's) or as an undeclared {@link SQLException}
 * ({@link Undeclared}).
 */
@Singleton
@Produces
public class DatabaseUnavailableHandler implements ExceptionHandler<RuntimeException, HttpResponse<?>> {
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseUnavailableHandler.class);

    /** Micronaut's handling of a failure no handler takes: ERROR with the stack, 500. */
    private final BiFunction<HttpRequest<?>, Throwable, HttpResponse<?>> micronauts;
    private final ErrorResponseProcessor<?> errors;

    @Inject
    public DatabaseUnavailableHandler(BeanProvider<RouteExecutor> routes, ErrorResponseProcessor<?> errors) {
        this((request, failure) -> routes.get().createDefaultErrorResponse(request, failure), errors);
    }

    DatabaseUnavailableHandler(BiFunction<HttpRequest<?>, Throwable, HttpResponse<?>> micronauts,
                               ErrorResponseProcessor<?> errors) {
        this.micronauts = micronauts;
        this.errors = errors;
    }

    @Override
    public HttpResponse<?> handle(HttpRequest request, RuntimeException exception) {
        return answer(request, exception);
    }

    HttpResponse<?> answer(HttpRequest<?> request, Throwable failure) {
        if (!DatabaseFailures.isUnavailable(failure)) {
            return micronauts.apply(request, failure);
        }
        LOG.warn("{} {} answered 503, the database is unavailable: {}", request.getMethod(), request.getPath(),
                cause(failure));
        LOG.debug("the failure of {} {}", request.getMethod(), request.getPath(), failure);
        return errors.processResponse(ErrorContext.builder(request).cause(failure)
                .errorMessage("database unavailable").build(), HttpResponse.serverError());
    }

    /**
     * The database's own words: the first SQLException among the causes (with its SQLSTATE), and the last one when it
     * is another (a pool's timeout is caused by its last failure to connect: refused, a wrong password), else the
     * failure; on one line.
     */
    static String cause(Throwable failure) {
        SQLException first = null;
        SQLException last = null;
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < 32; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                first = first == null ? sql : first;
                last = sql;
            }
        }
        String line = first == null ? String.valueOf(failure)
                : first == last ? words(first) : words(first) + "; caused by " + words(last);
        return line.replaceAll("\\s*\\R\\s*", " ");
    }

    private static String words(SQLException sql) {
        String line = sql.getClass().getSimpleName() + ": " + sql.getMessage();
        return sql.getSQLState() == null ? line : line + " (SQLSTATE " + sql.getSQLState() + ")";
    }

    /** The same for a store's SQLException that reaches the route undeclared, unwrapped. */
    @Singleton
    @Produces
    public static class Undeclared implements ExceptionHandler<SQLException, HttpResponse<?>> {
        private final DatabaseUnavailableHandler handler;

        public Undeclared(DatabaseUnavailableHandler handler) {
            this.handler = handler;
        }

        @Override
        public HttpResponse<?> handle(HttpRequest request, SQLException exception) {
            return handler.answer(request, exception);
        }
    }
}
