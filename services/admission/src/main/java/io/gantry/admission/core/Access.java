package io.gantry.admission.core;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Tenants and their API tokens as admins manage them: what a request may ask for, and what each change makes of the
 * current state. Every decision takes the current row (or none) and returns the new one, or a refusal; the adapter
 * stores the result and publishes it. Secrets never come here: a token is its public id and the SHA-256 of its
 * secret, both made by the adapter.
 */
public final class Access {
    /** Tenant names as the tokens file and the queue configuration write them. */
    public static final Pattern TENANT_NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");
    public static final Pattern TOKEN_ID = Pattern.compile("tok_[0-9a-f]{24}");
    public static final Duration DEFAULT_LIFETIME = Duration.ofDays(90);
    public static final Duration MAX_LIFETIME = Duration.ofDays(365);
    public static final Duration MAX_OVERLAP = Duration.ofDays(7);
    private static final Set<String> TENANT_FIELDS = Set.of("name", "displayName");
    private static final Set<String> ISSUE_FIELDS = Set.of("role", "label", "expiresIn", "expiresAt");

    private Access() {
    }

    public enum Role { TENANT, ADMIN }

    public enum TenantState { ACTIVE, DISABLED }

    public record Tenant(String name, String displayName, TenantState state, Instant createdAt) {
    }

    /**
     * A managed token. {@code revokedAt} null while not revoked; {@code replacedBy} the token a rotation issued in
     * its place.
     */
    public record Token(String tokenId, String tenant, Role role, String sha256, String label, Instant createdAt,
                        Instant expiresAt, Instant revokedAt, String replacedBy) {
        /** {@code active}, {@code revoked} or {@code expired} at {@code now}. */
        public String stateAt(Instant now) {
            if (revokedAt != null && !now.isBefore(revokedAt)) {
                return "revoked";
            }
            return now.isBefore(expiresAt) ? "active" : "expired";
        }
    }

    /** A create-tenant request. */
    public record NewTenant(String name, String displayName) {
    }

    /** An issue-token request with its defaults applied. */
    public record Issue(Role role, String label, Instant expiresAt) {
    }

    /** A request body turned into a value, or every bad field. */
    public record Parsed<T>(T value, List<FieldError> errors) {
        public boolean isValid() {
            return errors.isEmpty();
        }
    }

    /** Why a change is refused: the subject is missing, or the change contradicts its state. */
    public enum Refusal { NOT_FOUND, CONFLICT }

    /** A decision: the new state, or a refusal with the field it concerns and a sentence. */
    public record Outcome<T>(T value, Refusal refusal, String field, String message) {
        static <T> Outcome<T> ok(T value) {
            return new Outcome<>(value, null, null, null);
        }

        static <T> Outcome<T> refused(Refusal refusal, String field, String message) {
            return new Outcome<>(null, refusal, field, message);
        }

        public boolean isOk() {
            return refusal == null;
        }
    }

    /** What a rotation makes: the new token, and the old one revoked (or shortened to the overlap). */
    public record Rotation(Token issued, Token replaced) {
    }

    /** Why {@code name} cannot be a tenant name, or null. */
    public static String tenantNameProblem(String name) {
        return name != null && TENANT_NAME.matcher(name).matches() ? null
                : "must be 1..63 lower-case letters, digits or '-', starting with a letter or digit";
    }

    public static String tokenIdProblem(String id) {
        return id != null && TOKEN_ID.matcher(id).matches() ? null : "must be a token id (tok_ and 24 hex digits)";
    }

    public static Parsed<NewTenant> newTenant(Object tree) {
        List<FieldError> errors = new ArrayList<>();
        if (!(tree instanceof Map<?, ?> body)) {
            return new Parsed<>(null, List.of(new FieldError("body", "must be a JSON object")));
        }
        unknown(body, TENANT_FIELDS, errors);
        String name = null;
        if (body.get("name") == null) {
            errors.add(new FieldError("name", "is required"));
        } else if (!(body.get("name") instanceof String s) || tenantNameProblem(s) != null) {
            errors.add(new FieldError("name", tenantNameProblem(null)));
        } else {
            name = s;
        }
        String display = body.get("displayName") == null ? null
                : JobSpecValidator.name(body.get("displayName"), "displayName", errors);
        return errors.isEmpty() ? new Parsed<>(new NewTenant(name, display), List.of()) : new Parsed<>(null, errors);
    }

    /**
     * An issue request: {@code role} {@code tenant} (default) or {@code admin}; {@code label}; the expiry as
     * {@code expiresIn} (an ISO-8601 duration such as {@code P30D}) or {@code expiresAt} (an instant), not both,
     * default {@link #DEFAULT_LIFETIME}, at most {@link #MAX_LIFETIME} from now. An absent body means all defaults.
     */
    public static Parsed<Issue> issue(Object tree, Instant now) {
        List<FieldError> errors = new ArrayList<>();
        Map<?, ?> body;
        if (tree == null) {
            body = Map.of();
        } else if (tree instanceof Map<?, ?> m) {
            body = m;
        } else {
            return new Parsed<>(null, List.of(new FieldError("body", "must be a JSON object")));
        }
        unknown(body, ISSUE_FIELDS, errors);
        Role role = Role.TENANT;
        Object r = body.get("role");
        if (r != null) {
            if (r instanceof String s && (s.equals("tenant") || s.equals("admin"))) {
                role = s.equals("admin") ? Role.ADMIN : Role.TENANT;
            } else {
                errors.add(new FieldError("role", "must be tenant or admin"));
            }
        }
        String label = body.get("label") == null ? null : JobSpecValidator.name(body.get("label"), "label", errors);
        Instant expiresAt = null;
        if (body.get("expiresIn") != null && body.get("expiresAt") != null) {
            errors.add(new FieldError("expiresAt", "give expiresIn or expiresAt, not both"));
        } else if (body.get("expiresIn") != null) {
            Duration d = duration(body.get("expiresIn"), "expiresIn", errors);
            if (d != null) {
                if (d.isNegative() || d.isZero() || d.compareTo(MAX_LIFETIME) > 0) {
                    errors.add(new FieldError("expiresIn", "must be more than zero and at most "
                            + MAX_LIFETIME.toDays() + " days (P" + MAX_LIFETIME.toDays() + "D)"));
                } else {
                    expiresAt = now.plus(d);
                }
            }
        } else if (body.get("expiresAt") != null) {
            if (body.get("expiresAt") instanceof String s) {
                try {
                    Instant at = Instant.parse(s);
                    if (!at.isAfter(now) || at.isAfter(now.plus(MAX_LIFETIME))) {
                        errors.add(new FieldError("expiresAt", "must be in the future and at most "
                                + MAX_LIFETIME.toDays() + " days from now"));
                    } else {
                        expiresAt = at;
                    }
                } catch (DateTimeParseException e) {
                    errors.add(new FieldError("expiresAt", "must be an instant such as 2026-12-31T00:00:00Z"));
                }
            } else {
                errors.add(new FieldError("expiresAt", "must be an instant such as 2026-12-31T00:00:00Z"));
            }
        } else {
            expiresAt = now.plus(DEFAULT_LIFETIME);
        }
        return errors.isEmpty() ? new Parsed<>(new Issue(role, label, expiresAt), List.of())
                : new Parsed<>(null, errors);
    }

    /** A rotation's overlap (query {@code overlap}): an ISO-8601 duration from zero to {@link #MAX_OVERLAP}. */
    public static Parsed<Duration> overlap(String text) {
        if (text == null || text.isEmpty()) {
            return new Parsed<>(Duration.ZERO, List.of());
        }
        List<FieldError> errors = new ArrayList<>();
        Duration d = duration(text, "overlap", errors);
        if (d != null && (d.isNegative() || d.compareTo(MAX_OVERLAP) > 0)) {
            errors.add(new FieldError("overlap", "must be from PT0S to P" + MAX_OVERLAP.toDays() + "D"));
        }
        return errors.isEmpty() ? new Parsed<>(d, List.of()) : new Parsed<>(null, errors);
    }

    public static Outcome<Tenant> create(Optional<Tenant> existing, NewTenant request, Instant now) {
        return create(existing, request, false, now);
    }

    /**
     * Creates a tenant; one that exists already, also only in the tokens file a service started with
     * ({@code inTokensFile}), is a conflict.
     */
    public static Outcome<Tenant> create(Optional<Tenant> existing, NewTenant request, boolean inTokensFile,
                                         Instant now) {
        if (existing.isPresent()) {
            return Outcome.refused(Refusal.CONFLICT, "name", "tenant " + request.name() + " already exists");
        }
        if (inTokensFile) {
            return Outcome.refused(Refusal.CONFLICT, "name", "tenant " + request.name() + " already exists (in the "
                    + "tokens file; disable, enable and issue tokens work on it as on any tenant)");
        }
        return Outcome.ok(new Tenant(request.name(), request.displayName(), TenantState.ACTIVE, now));
    }

    /**
     * Disables or enables a tenant; the same state again is no change (and answers the tenant as it is). An admin
     * may not disable its own tenant: its own token would stop working, and nobody might be left to undo it.
     */
    public static Outcome<Tenant> setState(Optional<Tenant> existing, String name, TenantState to, String callerTenant) {
        return setState(existing, name, to, callerTenant, false, null);
    }

    /**
     * {@link #setState(Optional, String, TenantState, String)} for a tenant that may exist only in the tokens file
     * ({@code inTokensFile}): such a tenant gets its record now, named as it is, created {@code now}, so that
     * disabling it refuses its file tokens too.
     */
    public static Outcome<Tenant> setState(Optional<Tenant> existing, String name, TenantState to, String callerTenant,
                                           boolean inTokensFile, Instant now) {
        if (to == TenantState.DISABLED && name.equals(callerTenant)) {
            return Outcome.refused(Refusal.CONFLICT, "name", "an admin cannot disable its own tenant " + name
                    + " (ask another admin)");
        }
        if (existing.isEmpty() && inTokensFile) {
            return Outcome.ok(new Tenant(name, name, to, now));
        }
        if (existing.isEmpty()) {
            return Outcome.refused(Refusal.NOT_FOUND, "name", "no tenant " + name);
        }
        Tenant t = existing.get();
        return Outcome.ok(new Tenant(t.name(), t.displayName(), to, t.createdAt()));
    }

    /** What issuing a token makes: the token, and the tenant's record when it needed one first (else null). */
    public record Issued(Token token, Tenant newTenant) {
    }

    /**
     * Issues a token to an active tenant. A tenant that exists only in the tokens file a service started with
     * ({@code inTokensFile}) gets its record with its first API token, active, named as it is, created {@code now}
     * (as when it is disabled: {@link #setState(Optional, String, TenantState, String, boolean, Instant)}).
     */
    public static Outcome<Issued> issue(Optional<Tenant> tenant, String name, boolean inTokensFile, Issue request,
                                        String tokenId, String sha256, Instant now) {
        Tenant created = null;
        if (tenant.isEmpty() && inTokensFile) {
            created = new Tenant(name, name, TenantState.ACTIVE, now);
            tenant = Optional.of(created);
        }
        if (tenant.isEmpty()) {
            return Outcome.refused(Refusal.NOT_FOUND, "tenant", "no tenant " + name + " (create it first)");
        }
        if (tenant.get().state() == TenantState.DISABLED) {
            return Outcome.refused(Refusal.CONFLICT, "tenant", "tenant " + name + " is disabled; enable it first");
        }
        return Outcome.ok(new Issued(new Token(tokenId, name, request.role(), sha256, request.label(), now,
                request.expiresAt(), null, null), created));
    }

    /** Revokes a token; revoking a revoked token is no change (its first revocation time stays). */
    public static Outcome<Token> revoke(Optional<Token> existing, String tokenId, Instant now) {
        if (existing.isEmpty()) {
            return Outcome.refused(Refusal.NOT_FOUND, "id", "no token " + tokenId);
        }
        Token t = existing.get();
        if (t.revokedAt() != null && !t.revokedAt().isAfter(now)) {
            return Outcome.ok(t);
        }
        return Outcome.ok(new Token(t.tokenId(), t.tenant(), t.role(), t.sha256(), t.label(), t.createdAt(),
                t.expiresAt(), now, t.replacedBy()));
    }

    /**
     * Issues a token with the same tenant, role and label, living as long as the old one was issued for (at most
     * {@link #MAX_LIFETIME}), and retires the old one: revoked now without an overlap, else its expiry moves to the
     * end of the overlap (never later than it was). Only a token that still works, of an active tenant, and not
     * rotated before, can be rotated.
     */
    public static Outcome<Rotation> rotate(Optional<Token> existing, Optional<Tenant> tenant, String tokenId,
                                           Duration overlap, String newId, String newSha256, Instant now) {
        if (existing.isEmpty()) {
            return Outcome.refused(Refusal.NOT_FOUND, "id", "no token " + tokenId);
        }
        Token old = existing.get();
        if (old.replacedBy() != null) {
            return Outcome.refused(Refusal.CONFLICT, "id", "token " + tokenId + " was already rotated to "
                    + old.replacedBy());
        }
        if (!old.stateAt(now).equals("active")) {
            return Outcome.refused(Refusal.CONFLICT, "id", "token " + tokenId + " is " + old.stateAt(now)
                    + "; issue a new one instead");
        }
        if (tenant.isEmpty() || tenant.get().state() == TenantState.DISABLED) {
            return Outcome.refused(Refusal.CONFLICT, "id", "tenant " + old.tenant() + " is disabled; enable it first");
        }
        Duration lifetime = Duration.between(old.createdAt(), old.expiresAt());
        if (lifetime.compareTo(MAX_LIFETIME) > 0 || lifetime.isNegative() || lifetime.isZero()) {
            lifetime = DEFAULT_LIFETIME;
        }
        Token issued = new Token(newId, old.tenant(), old.role(), newSha256, old.label(), now, now.plus(lifetime),
                null, null);
        Token replaced = overlap.isZero()
                ? new Token(old.tokenId(), old.tenant(), old.role(), old.sha256(), old.label(), old.createdAt(),
                old.expiresAt(), now, newId)
                : new Token(old.tokenId(), old.tenant(), old.role(), old.sha256(), old.label(), old.createdAt(),
                min(old.expiresAt(), now.plus(overlap)), null, newId);
        return Outcome.ok(new Rotation(issued, replaced));
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    private static Duration duration(Object value, String field, List<FieldError> errors) {
        if (value instanceof String s) {
            try {
                return Duration.parse(s.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                // fall through
            }
        }
        errors.add(new FieldError(field, "must be an ISO-8601 duration such as P30D or PT1H"));
        return null;
    }

    private static void unknown(Map<?, ?> body, Set<String> known, List<FieldError> errors) {
        for (Object key : body.keySet()) {
            if (!known.contains(String.valueOf(key))) {
                errors.add(new FieldError(String.valueOf(key), "unknown field"));
            }
        }
    }
}
