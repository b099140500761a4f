package io.gantry.admission.db;

import io.gantry.admission.core.Access;
import io.micronaut.transaction.TransactionOperations;
import jakarta.inject.Singleton;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Tenants and API tokens in PostgreSQL (only the SHA-256 of a token's secret). A change runs in
 * {@link #write}: the rows it reads are locked, and the caller publishes the change before the transaction commits,
 * so a change is published iff it is stored (a failed publish rolls it back), and changes of one tenant or token are
 * published in the order they commit.
 */
@Singleton
public class AccessStore {
    private static final String TOKEN_COLUMNS =
            "token_id, tenant, role, sha256, label, created_at, expires_at, revoked_at, replaced_by";

    private final TransactionOperations<Connection> tx;

    public AccessStore(TransactionOperations<Connection> tx) {
        this.tx = tx;
    }

    /** Work inside one transaction. */
    @FunctionalInterface
    public interface Work<R> {
        R run(Tx tx) throws SQLException;
    }

    public <R> R write(Work<R> work) {
        return tx.executeWrite(status -> work.run(new Tx(status.getConnection())));
    }

    public List<Access.Tenant> tenants() {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT name, display_name, state, created_at FROM tenants ORDER BY name")) {
                List<Access.Tenant> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(tenant(rs));
                    }
                }
                return out;
            }
        });
    }

    public Optional<Access.Tenant> tenant(String name) {
        return tx.executeRead(status -> new Tx(status.getConnection()).tenant(name, false));
    }

    /** The tenant's tokens, oldest first. */
    public List<Access.Token> tokens(String tenant) {
        return tx.executeRead(status -> {
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT " + TOKEN_COLUMNS + " FROM api_tokens WHERE tenant = ? ORDER BY created_at, token_id")) {
                ps.setString(1, tenant);
                List<Access.Token> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(token(rs));
                    }
                }
                return out;
            }
        });
    }

    /** The rows one transaction reads (locked for update) and writes. */
    public static final class Tx {
        private final Connection c;

        Tx(Connection c) {
            this.c = c;
        }

        public Optional<Access.Tenant> tenantForUpdate(String name) throws SQLException {
            return tenant(name, true);
        }

        Optional<Access.Tenant> tenant(String name, boolean lock) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("SELECT name, display_name, state, created_at FROM tenants "
                    + "WHERE name = ?" + (lock ? " FOR UPDATE" : ""))) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(AccessStore.tenant(rs)) : Optional.empty();
                }
            }
        }

        public Optional<Access.Token> tokenForUpdate(String tokenId) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT " + TOKEN_COLUMNS + " FROM api_tokens WHERE token_id = ? FOR UPDATE")) {
                ps.setString(1, tokenId);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(token(rs)) : Optional.empty();
                }
            }
        }

        /** False if a tenant of that name exists already (a concurrent create won). */
        public boolean insertTenant(Access.Tenant t, Instant now) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO tenants (name, display_name, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (name) DO NOTHING""")) {
                ps.setString(1, t.name());
                ps.setString(2, t.displayName());
                ps.setString(3, t.state().name());
                ps.setObject(4, time(t.createdAt()));
                ps.setObject(5, time(now));
                return ps.executeUpdate() == 1;
            }
        }

        public void updateTenant(Access.Tenant t, Instant now) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE tenants SET display_name = ?, state = ?, updated_at = ? WHERE name = ?")) {
                ps.setString(1, t.displayName());
                ps.setString(2, t.state().name());
                ps.setObject(3, time(now));
                ps.setString(4, t.name());
                ps.executeUpdate();
            }
        }

        public void insertToken(Access.Token t) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO api_tokens (" + TOKEN_COLUMNS
                    + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                ps.setString(1, t.tokenId());
                ps.setString(2, t.tenant());
                ps.setString(3, t.role().name());
                ps.setString(4, t.sha256());
                ps.setString(5, t.label());
                ps.setObject(6, time(t.createdAt()));
                ps.setObject(7, time(t.expiresAt()));
                ps.setObject(8, t.revokedAt() == null ? null : time(t.revokedAt()));
                ps.setString(9, t.replacedBy());
                ps.executeUpdate();
            }
        }

        /** Writes what may change of a token: expiry, revocation and successor. */
        public void updateToken(Access.Token t) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE api_tokens SET expires_at = ?, revoked_at = ?, replaced_by = ? WHERE token_id = ?")) {
                ps.setObject(1, time(t.expiresAt()));
                ps.setObject(2, t.revokedAt() == null ? null : time(t.revokedAt()));
                ps.setString(3, t.replacedBy());
                ps.setString(4, t.tokenId());
                ps.executeUpdate();
            }
        }
    }

    private static Access.Tenant tenant(ResultSet rs) throws SQLException {
        return new Access.Tenant(rs.getString(1), rs.getString(2), Access.TenantState.valueOf(rs.getString(3)),
                instant(rs, 4));
    }

    private static Access.Token token(ResultSet rs) throws SQLException {
        return new Access.Token(rs.getString(1), rs.getString(2), Access.Role.valueOf(rs.getString(3)),
                rs.getString(4), rs.getString(5), instant(rs, 6), instant(rs, 7), instant(rs, 8), rs.getString(9));
    }

    private static OffsetDateTime time(Instant i) {
        return OffsetDateTime.ofInstant(i, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
