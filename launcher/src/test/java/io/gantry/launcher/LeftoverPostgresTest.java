package io.gantry.launcher;

import io.gantry.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;

import static org.assertj.core.api.Assertions.assertThat;

/** A PostgreSQL a killed launcher left running on the data directory is stopped before the next start. */
class LeftoverPostgresTest {
    @Test
    void theServerALauncherLeftRunningIsStoppedAndTheClusterStartsAgain(@TempDir Path data) throws Exception {
        Path dir = data.resolve("postgres");
        EmbeddedPostgres left = EmbeddedPostgres.start(dir, 0);
        long pid = Long.parseLong(Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim());
        assertThat(ProcessHandle.of(pid)).as("the postmaster runs").isPresent();

        DevCluster.stopLeftoverPostgres(dir);

        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        try {
            left.close(); // its server is gone: the handle (this JVM's lock on the directory) only lets go
        } catch (Exception e) {
            // expected: nothing to stop
        }
        try (EmbeddedPostgres again = EmbeddedPostgres.start(dir, 0);
             Connection c = DriverManager.getConnection(again.jdbcUrl("postgres"), again.user(), again.password())) {
            assertThat(c.isValid(5)).isTrue();
        }
    }

    @Test
    void noServerOrADeadOneIsLeftAlone(@TempDir Path data) throws Exception {
        Path dir = data.resolve("postgres");
        DevCluster.stopLeftoverPostgres(dir); // no directory
        Files.createDirectories(dir);
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Files.writeString(dir.resolve("postmaster.pid"), gone.pid() + "\n" + dir + "\n");
        DevCluster.stopLeftoverPostgres(dir);
        Process other = new ProcessBuilder("sleep", "30").start();
        try {
            // a live process that is not PostgreSQL (a reused pid) is not touched
            Files.writeString(dir.resolve("postmaster.pid"), other.pid() + "\n" + dir + "\n");
            DevCluster.stopLeftoverPostgres(dir);
            assertThat(other.isAlive()).isTrue();
        } finally {
            other.destroyForcibly();
        }
    }
}
