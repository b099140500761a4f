package io.gantry.testkit;

import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.embedded.Ports;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A PostgreSQL of a test's own that the test can stop and start again, for database outages: the same data
 * directory and port each time, so a service keeps its JDBC URL and finds its rows when the server is back. The
 * shared server ({@link EmbeddedPostgres#shared()}) must never be stopped: every test class of the JVM uses it.
 */
public final class StoppablePostgres implements AutoCloseable {
    private final Path dataDir;
    private final int port;
    private EmbeddedPostgres server;
    private Map<String, String> datasource;

    private StoppablePostgres(Path dataDir, int port) {
        this.dataDir = dataDir;
        this.port = port;
    }

    /** Starts a server of its own on a free port, with an empty database {@code database}. */
    public static StoppablePostgres start(String database) {
        try {
            StoppablePostgres pg = new StoppablePostgres(
                    Files.createTempDirectory("gantry-pg-outage-").resolve("data"),
                    Ports.belowEphemeral(1, new HashSet<>()));
            pg.startAgain();
            Map<String, String> props = new LinkedHashMap<>();
            props.put("datasources.default.url", pg.server.ensureDatabase(database));
            props.put("datasources.default.username", pg.server.user());
            props.put("datasources.default.password", pg.server.password());
            pg.datasource = Map.copyOf(props);
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Micronaut's {@code datasources.default.*} for the database; valid across stops and starts. */
    public Map<String, String> datasource() {
        return datasource;
    }

    /** Its port on 127.0.0.1, the same across stops and starts. */
    public int port() {
        return port;
    }

    /** Stops the server (a fast shutdown: open sessions are ended, new connections refused); the data stays. */
    public synchronized void stop() {
        if (server == null) {
            return;
        }
        try {
            server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            server = null;
        }
    }

    /** Starts the stopped server again on the same port and data directory. */
    public synchronized void startAgain() {
        if (server != null) {
            return;
        }
        try {
            server = EmbeddedPostgres.start(dataDir, port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        stop();
    }
}
