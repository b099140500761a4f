package io.gantry.embedded;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A kept cluster (the dev stack's) asks for a password of its own: initdb's trust would let any local user (or a
 * task of the local backend) in as superuser.
 */
class EmbeddedPostgresTest {
    @TempDir
    Path dir;

    @Test
    void aKeptClusterAsksForItsOwnPasswordAndKeepsItAcrossRestarts() throws Exception {
        Path data = dir.resolve("postgres");
        String url;
        String password;
        try (EmbeddedPostgres pg = EmbeddedPostgres.start(data, 0)) {
            password = pg.password();
            url = pg.jdbcUrl("postgres");
            assertThat(password).hasSize(48).isNotEqualTo("postgres");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("postgres.password"))))
                    .isEqualTo("rw-------");
            assertThat(Files.readString(data.resolve("pg_hba.conf")).lines().filter(l -> !l.startsWith("#")))
                    .noneMatch(l -> l.contains("trust"));
            try (Connection c = DriverManager.getConnection(url, "postgres", password)) {
                assertThat(c.isValid(5)).isTrue();
            }
            assertThatThrownBy(() -> DriverManager.getConnection(url, "postgres", "postgres").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("password authentication failed");
        }
        try (EmbeddedPostgres again = EmbeddedPostgres.start(data, 0)) {
            assertThat(again.password()).isEqualTo(password);
            assertThat(again.ensureDatabase("gantry_again")).endsWith("/gantry_again");
        }
    }
}
