package io.gantry.runtime.http;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * API tokens from a YAML file. Each entry names a tenant, optionally {@code role: admin}, and either the token's
 * SHA-256 ({@code sha256: <hex>}, for production) or the token itself ({@code token: ...}, for development).
 * Only hashes are kept in memory; tokens are never logged.
 *
 * <pre>
 * tokens:
 *   - tenant: vision
 *     sha256: 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8
 *   - tenant: ops
 *     role: admin
 *     token: dev-admin-token
 * </pre>
 */
public final class TokenStore {
    private record Entry(byte[] sha256, Caller caller) {
    }

    private final List<Entry> entries;

    private TokenStore(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    public static TokenStore load(Path file) throws IOException {
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    public static TokenStore parse(String yaml) {
        Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        if (!(root instanceof Map<?, ?> map) || !(map.get("tokens") instanceof List<?> list)) {
            throw new IllegalArgumentException("expected a top-level `tokens:` list");
        }
        List<Entry> entries = new ArrayList<>();
        int i = 0;
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException("tokens[" + i + "] must be a mapping");
            }
            Object tenant = m.get("tenant");
            if (!(tenant instanceof String t) || !t.matches("[a-z0-9][a-z0-9-]{0,62}")) {
                throw new IllegalArgumentException("tokens[" + i + "].tenant must be a lower-case name");
            }
            Object role = m.get("role") == null ? "tenant" : m.get("role");
            if (!"tenant".equals(role) && !"admin".equals(role)) {
                throw new IllegalArgumentException("tokens[" + i + "].role must be tenant or admin");
            }
            byte[] hash;
            if (m.get("sha256") instanceof String hex) {
                hash = HexFormat.of().parseHex(hex.trim().toLowerCase());
            } else if (m.get("token") instanceof String token && token.length() >= 8) {
                hash = sha256(token);
            } else {
                throw new IllegalArgumentException("tokens[" + i + "] needs sha256 or a token of at least 8 characters");
            }
            entries.add(new Entry(hash, new Caller(t, "admin".equals(role))));
            i++;
        }
        return new TokenStore(entries);
    }

    /** The tenants the file gives tokens to (the bootstrap's: an admin's, a development tenant). */
    public java.util.SortedSet<String> tenants() {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        entries.forEach(e -> out.add(e.caller().tenant()));
        return java.util.Collections.unmodifiableSortedSet(out);
    }

    public Optional<Caller> authenticate(String token) {
        if (token == null || token.isEmpty()) {
            return Optional.empty();
        }
        byte[] hash = sha256(token);
        Caller found = null;
        for (Entry e : entries) {
            // constant-time comparison over every entry, so timing does not tell which prefix matched
            if (MessageDigest.isEqual(e.sha256(), hash)) {
                found = e.caller();
            }
        }
        return Optional.ofNullable(found);
    }

    public static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
