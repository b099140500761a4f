package io.gantry.testkit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import org.awaitility.core.ConditionTimeoutException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A service's own PostgreSQL, reached through a {@link BlackholeProxy}, for the tests of a service that loses its
 * database: stopped ({@link #stopDatabase()}: its connections are ended, new ones fail at once) or cut off by a
 * network partition ({@link #partition()}: nothing answers, nothing is refused). It sends the test's requests (each
 * bounded by {@link #PROMPT}, so an answer that hangs fails the test instead of stalling it) and checks what a client
 * must get meanwhile. Closing it stops the service first: the service's loops must not outlive the database they
 * write to. The PostgreSQL is the test's own: a stop would break every other test class on the shared one.
 */
public final class DatabaseOutage implements AutoCloseable {
    /**
     * How long a query may wait for an answer from the database in these tests, in seconds (PgJDBC's
     * {@code socketTimeout}, the services' {@code gantry.database.socket-timeout-seconds}): a query cut off by a
     * partition fails after this long. Far above any query of these tests, well below {@link #PROMPT}.
     */
    public static final int SOCKET_TIMEOUT_SECONDS = 2;
    /**
     * Well above the longest an answer may take during an outage (the pool's 2 s wait for a connection, a query's
     * {@link #SOCKET_TIMEOUT_SECONDS}), well below the services' 15 s idle close.
     */
    public static final Duration PROMPT = Duration.ofSeconds(6);

    private final StoppablePostgres postgres;
    private final BlackholeProxy proxy;
    private final HttpClient http = HttpClient.newHttpClient();
    private AutoCloseable service;
    private String base;

    private DatabaseOutage(StoppablePostgres postgres, BlackholeProxy proxy) {
        this.postgres = postgres;
        this.proxy = proxy;
    }

    /** Starts a PostgreSQL of its own with an empty database {@code database}, and the proxy in front of it. */
    public static DatabaseOutage start(String database) {
        StoppablePostgres postgres = StoppablePostgres.start(database);
        return new DatabaseOutage(postgres, BlackholeProxy.start(postgres.port()));
    }

    /**
     * The service's settings for its database: {@code datasources.default.*} through the proxy, and a socket timeout
     * of {@link #SOCKET_TIMEOUT_SECONDS}.
     */
    public Map<String, String> settings() {
        Map<String, String> settings = new LinkedHashMap<>(postgres.datasource());
        settings.put("datasources.default.url", settings.get("datasources.default.url")
                .replace("127.0.0.1:" + postgres.port() + "/", "127.0.0.1:" + proxy.port() + "/"));
        settings.put("gantry.database.socket-timeout-seconds", String.valueOf(SOCKET_TIMEOUT_SECONDS));
        return settings;
    }

    /** The service that uses the database, at {@code base} (its URL): closed first. */
    public void serving(String base, AutoCloseable service) {
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.service = service;
    }

    /** Stops PostgreSQL (a fast shutdown: open sessions are ended, new connections refused); the data stays. */
    public void stopDatabase() {
        postgres.stop();
    }

    /** Starts the stopped PostgreSQL again, with its data. */
    public void startDatabase() {
        postgres.startAgain();
    }

    /** Cuts the service off from PostgreSQL, as a network partition does: nothing passes, nothing is refused. */
    public void partition() {
        proxy.blackhole();
    }

    /** Ends the partition: what was held back passes, and so does everything new. */
    public void heal() {
        proxy.heal();
    }

    /** Ends whatever outage a test left (a test that failed half-way): the database runs and is reachable. */
    public void end() {
        heal();
        startDatabase();
    }

    /**
     * Locks {@code table} against every reader from a connection of its own that bypasses the proxy, so that a query
     * the service sends on it waits in PostgreSQL (in flight, as a query is when a partition strikes) until the
     * returned lock is closed.
     */
    public HeldTable hold(String table) {
        Connection c;
        try {
            c = direct();
        } catch (SQLException e) {
            throw new IllegalStateException("could not connect to lock " + table, e);
        }
        try {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.execute("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
            }
            return new HeldTable(c);
        } catch (SQLException e) {
            try {
                c.close();
            } catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw new IllegalStateException("could not lock " + table, e);
        }
    }

    /** A table {@link #hold(String) held} against readers; closing it lets them through. */
    public final class HeldTable implements AutoCloseable {
        private final Connection connection;

        private HeldTable(Connection connection) {
            this.connection = connection;
        }

        /**
         * Waits until a query whose text is {@code LIKE} {@code pattern} waits for this lock; fails naming the
         * sessions' queries when none does within 30 s.
         */
        public void awaitWaiting(String pattern) {
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> !queries(pattern, true).isEmpty());
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("no query LIKE '" + pattern + "' waits for the lock; the sessions run "
                        + queries("%", false), e);
            }
        }

        /** The other sessions' queries {@code LIKE} {@code pattern}, those waiting for a lock only or all. */
        private List<String> queries(String pattern, boolean waitingOnly) {
            try (PreparedStatement ps = connection.prepareStatement("""
                    SELECT coalesce(wait_event_type, '-') || ': ' || query FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                      AND (NOT ? OR wait_event_type = 'Lock') AND query LIKE ?""")) {
                ps.setBoolean(1, waitingOnly);
                ps.setString(2, pattern);
                List<String> queries = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        queries.add(rs.getString(1));
                    }
                }
                return queries;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            try (connection) {
                connection.rollback();
            } catch (SQLException e) {
                throw new IllegalStateException("could not release the lock", e);
            }
        }
    }

    private Connection direct() throws SQLException {
        Map<String, String> ds = postgres.datasource();
        return DriverManager.getConnection(ds.get("datasources.default.url"), ds.get("datasources.default.username"),
                ds.get("datasources.default.password"));
    }

    public HttpResponse<String> get(String path, String token) {
        return send("GET", path, token, null);
    }

    public HttpResponse<String> send(String method, String path, String token, String json) {
        return send(method, path, token, json, Map.of());
    }

    /**
     * Sends a request with {@code json} as its body (or none) and {@code headers}, and fails (HttpTimeoutException)
     * rather than wait past {@link #PROMPT} for the answer.
     */
    public HttpResponse<String> send(String method, String path, String token, String json,
                                     Map<String, String> headers) {
        try {
            HttpRequest.Builder b = request(method, path, token, json, PROMPT);
            headers.forEach(b::header);
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(method + " " + path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Sends a GET without waiting for its answer, for a request that is to be in flight when the database goes; it
     * gives up after a minute, so a request that hangs ends with the test.
     */
    public CompletableFuture<HttpResponse<String>> getLater(String path, String token) {
        return http.sendAsync(request("GET", path, token, null, Duration.ofMinutes(1)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A GET of {@code path} whose query is in flight when the partition strikes: {@code table} is held so that the
     * query (matching {@code query}, a LIKE pattern of its text) waits in PostgreSQL, the partition begins, and the
     * table is let go, so PostgreSQL answers into the partition. The answer the request gets after all that.
     */
    public CompletableFuture<HttpResponse<String>> getCutOffInFlight(String table, String path, String token,
                                                                     String query) {
        CompletableFuture<HttpResponse<String>> inFlight;
        try (HeldTable held = hold(table)) {
            inFlight = getLater(path, token);
            held.awaitWaiting(query);
            partition();
        }
        return inFlight;
    }

    private HttpRequest.Builder request(String method, String path, String token, String json, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    /**
     * {@code r} is what a request that needs the database must get while it is unavailable: 503 problem+json with a
     * Retry-After, naming the database as the cause, never where it is or how to log in to it.
     */
    public void assertUnavailable(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));
        assertThat(r.headers().firstValue("Retry-After")).isPresent();
        assertThat(r.body()).contains("\"status\":503").containsIgnoringCase("database")
                .doesNotContain("jdbc:").doesNotContain("password")
                .doesNotContain(postgres.datasource().get("datasources.default.password"));
    }

    /** {@code /health} is 503 DOWN and names the database check that failed, not where the database is. */
    public void assertHealthDown() {
        // asked as a probe asks, again and again: each answer is DOWN, and the outage is logged once (see below)
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> health = get("/health", null);
            assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
            assertThat(health.body()).contains("\"status\":\"DOWN\"").contains("\"jdbc\"").doesNotContain("jdbc:")
                    .doesNotContain("127.0.0.1");
        }
    }

    /**
     * While the database was unavailable no request's failure was logged at ERROR or with a stack, as Micronaut's
     * "Unexpected error occurred" logs each failure no handler takes: each request the service answered 503 for it is
     * one WARN line without a stack, naming the request, among them one for each of {@code paths}; and the
     * {@code /health} check said so once (one WARN line), not with an ERROR and a stack on each call.
     */
    public static void assertLoggedQuietly(LogCapture log, String... paths) {
        List<ILoggingEvent> events = log.events();
        assertThat(events).filteredOn(e -> e.getLoggerName().equals("io.micronaut.http.server.RouteExecutor"))
                .extracting(e -> e.getLevel() + " " + e.getFormattedMessage())
                .as("Micronaut's \"Unexpected error occurred\" (ERROR, with the stack)").isEmpty();
        assertThat(events).filteredOn(e -> e.getLoggerName().startsWith("io.micronaut.management.health"))
                .extracting(e -> e.getLevel() + " " + e.getFormattedMessage())
                .as("Micronaut's \"Health indicator ... reported exception\" (ERROR, with the stack, each /health)")
                .isEmpty();
        List<ILoggingEvent> health = events.stream()
                .filter(e -> e.getLoggerName().equals("io.gantry.runtime.http.DatabaseHealthIndicator")).toList();
        assertThat(health).as("the outage on /health: one line, however often it was asked").singleElement()
                .satisfies(e -> {
                    assertThat(e.getLevel()).isEqualTo(Level.WARN);
                    assertThat(e.getThrowableProxy()).as("a stack").isNull();
                    assertThat(e.getFormattedMessage()).contains("is unavailable").doesNotContain("\n");
                });
        List<ILoggingEvent> refused = events.stream()
                .filter(e -> e.getLoggerName().equals("io.gantry.runtime.http.DatabaseUnavailableHandler")).toList();
        assertThat(refused).as("the requests answered 503").isNotEmpty().allSatisfy(e -> {
            assertThat(e.getLevel()).as(e.getFormattedMessage()).isEqualTo(Level.WARN);
            assertThat(e.getThrowableProxy()).as("a stack: " + e.getFormattedMessage()).isNull();
            assertThat(e.getFormattedMessage()).doesNotContain("\n").contains("answered 503");
        });
        for (String path : paths) {
            assertThat(refused).as("a line for %s", path)
                    .anySatisfy(e -> assertThat(e.getFormattedMessage()).contains(" " + path + " "));
        }
    }

    /**
     * The service's sessions tell PostgreSQL to end them once their client goes silent (the services' default
     * {@code gantry.database.server-options}): TCP keepalive probes after 30 s idle, every 10 s, 3 unanswered, and an
     * answer unacknowledged for 60 s (tcp_user_timeout). A partition cannot be played on loopback for this (the
     * kernel acknowledges for whatever proxy stands between), so the settings of a session of {@code service} (the
     * service's own pool, unwrapped) are read back: that the server does the rest is PostgreSQL's and Linux's.
     */
    public static void assertSilentClientsAreDropped(javax.sql.DataSource service) throws SQLException {
        Map<String, String> settings = new LinkedHashMap<>();
        try (Connection c = service.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT name, setting FROM pg_settings WHERE name IN "
                     + "('tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout')");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                settings.put(rs.getString(1), rs.getString(2));
            }
        }
        assertThat(settings).containsEntry("tcp_keepalives_idle", "30").containsEntry("tcp_keepalives_interval", "10")
                .containsEntry("tcp_keepalives_count", "3").containsEntry("tcp_user_timeout", "60000");
    }

    /** Waits (a minute at most) until {@code /health} is UP again. */
    public void awaitHealthUp() {
        await().atMost(Duration.ofSeconds(60)).until(() -> get("/health", null).statusCode() == 200);
    }

    @Override
    public void close() throws Exception {
        try {
            if (service != null) {
                service.close();
            }
        } finally {
            proxy.close();
            postgres.close();
        }
    }
}
