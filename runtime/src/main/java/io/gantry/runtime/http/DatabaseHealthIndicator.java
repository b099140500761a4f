package io.gantry.runtime.http;

import io.micronaut.context.BeanContext;
import io.micronaut.context.BeanRegistration;
import io.micronaut.context.annotation.Replaces;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.async.publisher.AsyncSingleResultPublisher;
import io.micronaut.health.HealthStatus;
import io.micronaut.jdbc.DataSourceResolver;
import io.micronaut.management.endpoint.health.HealthEndpoint;
import io.micronaut.management.health.indicator.HealthIndicator;
import io.micronaut.management.health.indicator.HealthResult;
import io.micronaut.management.health.indicator.jdbc.JdbcIndicator;
import io.micronaut.scheduling.TaskExecutors;
import jakarta.inject.Named;
import jakarta.inject.Singleton;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * {@code jdbc} on {@code /health}: the check Micronaut's {@link JdbcIndicator} makes (a pooled connection, valid within
 * {@value #VALID_SECONDS} s) under the same name, without its logging. Micronaut's reports a failing check through
 * {@code HealthResult.Builder#exception}, which logs ERROR with the whole stack on every call to {@code /health}: with a
 * probe every few seconds an outage of minutes is thousands of lines, none of them news after the first. Here a data
 * source that becomes unavailable is one WARN line with the database's own words (no stack), and one INFO line
 * when it serves again; every call in between is answered DOWN silently. The details of a DOWN answer (for a caller
 * who may see them) name the data source and the error; {@link FailingChecksHealthAggregator} shows others only
 * {@code "jdbc": DOWN}.
 */
@Singleton
@Replaces(JdbcIndicator.class)
@Requires(beans = HealthEndpoint.class)
@Requires(classes = DataSourceResolver.class)
@Requires(beans = DataSource.class)
@Requires(property = "endpoints.health.jdbc.enabled", notEquals = "false")
public class DatabaseHealthIndicator implements HealthIndicator {
    static final String NAME = "jdbc";
    static final int VALID_SECONDS = 3;
    private static final Logger LOG = LoggerFactory.getLogger(DatabaseHealthIndicator.class);

    /** A data source by its bean name ("default" unless named otherwise). */
    record Source(String name, DataSource dataSource) {
    }

    private final ExecutorService executor;
    private final List<Source> sources;
    /** Whether each data source answered at its last check (absent: not checked yet, counted as serving). */
    private final Map<String, Boolean> serving = new ConcurrentHashMap<>();

    public DatabaseHealthIndicator(@Named(TaskExecutors.BLOCKING) ExecutorService executor, BeanContext beans,
                                   Optional<DataSourceResolver> resolver) {
        this(executor, beans.getBeanRegistrations(DataSource.class).stream()
                .map(r -> new Source(name(r), resolver.orElse(DataSourceResolver.DEFAULT).resolve(r.getBean())))
                .toList());
    }

    DatabaseHealthIndicator(ExecutorService executor, List<Source> sources) {
        this.executor = executor;
        this.sources = List.copyOf(sources);
    }

    private static String name(BeanRegistration<DataSource> r) {
        String name = r.getIdentifier().getName();
        return name == null || name.isBlank() ? "default" : name;
    }

    @Override
    public Publisher<HealthResult> getResult() {
        // the check blocks (a connection from the pool, a round trip): not on the event loop that asked
        return new AsyncSingleResultPublisher<>(executor, this::check);
    }

    /** Checks every data source now; DOWN when any is unavailable, with each one's status (and error) in the details. */
    HealthResult check() {
        Map<String, Object> details = new LinkedHashMap<>();
        boolean down = false;
        for (Source s : sources) {
            String error = error(s.dataSource());
            down |= error != null;
            details.put(s.name(), error == null ? Map.of("status", "UP") : Map.of("status", "DOWN", "error", error));
            noteChange(s.name(), error);
        }
        return HealthResult.builder(NAME, down ? HealthStatus.DOWN : HealthStatus.UP).details(details).build();
    }

    /** Null when the data source hands out a valid connection in time, else why not (the database's own words). */
    private static String error(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            return c.isValid(VALID_SECONDS) ? null : "the connection did not answer within " + VALID_SECONDS + " s";
        } catch (SQLException | RuntimeException e) {
            return DatabaseUnavailableHandler.cause(e);
        }
    }

    /** One line when a data source stops or starts serving; nothing while it stays as it was. */
    private void noteChange(String name, String error) {
        boolean now = error == null;
        Boolean before = serving.put(name, now);
        boolean was = before == null || before;
        if (was && !now) {
            LOG.warn("data source {} is unavailable, /health is DOWN until it serves again: {}", name, error);
        } else if (!was && now) {
            LOG.info("data source {} serves again, /health is UP", name);
        }
    }
}
