package io.gantry.runtime.access;

import io.gantry.runtime.http.Caller;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tenants and API tokens admins manage, as {@code admission.access-events} states them, and the decision whether
 * a presented token authenticates. Plain state without Kafka: {@link AccessView} feeds it from the topic, tests feed
 * it directly. Safe for one writer and many readers (request threads).
 *
 * <p>Every record of the topic is its subject's whole current state, so applying one replaces what was known;
 * applying the same record twice changes nothing. Time is an argument: expiry and revocation are checked at request
 * time, so a token stops working at its expiry even if nothing is published then.
 */
public final class AccessDirectory {
    /** A managed token as the topic states it (never the secret: its SHA-256 in lower-case hex). */
    public record Grant(String tokenId, String tenant, boolean admin, String sha256, Instant expiresAt,
                        Instant revokedAt) {
        public Grant {
            Objects.requireNonNull(tokenId, "tokenId");
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(sha256, "sha256");
            Objects.requireNonNull(expiresAt, "expiresAt");
        }
    }

    /** What a request with a token gets. */
    public sealed interface Decision {
    }

    /** The token authenticates as {@code caller}. */
    public record Allowed(Caller caller) implements Decision {
    }

    /**
     * The token is refused: {@code status} 401 (unknown, revoked, expired: not a valid credential) or 403 (a valid
     * credential of a disabled tenant), with a sentence for the problem detail that never contains the token.
     */
    public record Refused(int status, String detail) implements Decision {
    }

    private final Map<String, Grant> byHash = new ConcurrentHashMap<>();
    private final Map<String, String> hashById = new ConcurrentHashMap<>();
    private final Map<String, Boolean> tenantActive = new ConcurrentHashMap<>();

    /** The tenant's current state (a TenantChanged). */
    public void tenant(String tenant, boolean active) {
        tenantActive.put(tenant, active);
    }

    /** The tenant was deleted from the topic (a tombstone): its managed tokens no longer authenticate. */
    public void forgetTenant(String tenant) {
        tenantActive.remove(tenant);
    }

    /** The token's current state (a TokenChanged). */
    public synchronized void token(Grant grant) {
        String hash = grant.sha256().toLowerCase(java.util.Locale.ROOT);
        String previous = hashById.put(grant.tokenId(), hash);
        if (previous != null && !previous.equals(hash)) {
            byHash.remove(previous);
        }
        byHash.put(hash, new Grant(grant.tokenId(), grant.tenant(), grant.admin(), hash, grant.expiresAt(),
                grant.revokedAt()));
    }

    /** The token was deleted from the topic (a tombstone): it no longer authenticates. */
    public synchronized void forgetToken(String tokenId) {
        String hash = hashById.remove(tokenId);
        if (hash != null) {
            byHash.remove(hash);
        }
    }

    /** Whether the topic says {@code tenant} is disabled (a tenant it does not know is not). */
    public boolean disabled(String tenant) {
        return Boolean.FALSE.equals(tenantActive.get(tenant));
    }

    public Optional<Grant> grant(String sha256Hex) {
        return Optional.ofNullable(byHash.get(sha256Hex));
    }

    /**
     * Whether a token authenticates at {@code now}. {@code fromFile} is what the bootstrap tokens file says about it
     * (empty if the file does not know it). A file token works unless its tenant is disabled; a managed token works
     * while it is neither revoked nor expired and its tenant is known and active. Anything else is refused: a managed
     * token whose tenant the view has not seen (yet) fails closed.
     */
    public Decision decide(String sha256Hex, Optional<Caller> fromFile, Instant now) {
        if (fromFile.isPresent()) {
            Caller c = fromFile.get();
            return disabled(c.tenant()) ? disabledTenant(c.tenant()) : new Allowed(c);
        }
        Grant g = byHash.get(sha256Hex);
        if (g == null) {
            return new Refused(401, "unknown API token");
        }
        if (g.revokedAt() != null && !now.isBefore(g.revokedAt())) {
            return new Refused(401, "API token " + g.tokenId() + " was revoked");
        }
        if (!now.isBefore(g.expiresAt())) {
            return new Refused(401, "API token " + g.tokenId() + " expired at " + g.expiresAt());
        }
        Boolean active = tenantActive.get(g.tenant());
        if (active == null) {
            return new Refused(401, "unknown API token");
        }
        if (!active) {
            return disabledTenant(g.tenant());
        }
        return new Allowed(new Caller(g.tenant(), g.admin()));
    }

    private static Refused disabledTenant(String tenant) {
        return new Refused(403, "tenant " + tenant + " is disabled; an admin can enable it again");
    }
}
