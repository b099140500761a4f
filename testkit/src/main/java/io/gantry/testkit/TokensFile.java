package io.gantry.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A tokens file as the services read it ({@code gantry.auth.tokens-file}): one API token per tenant, and the admin's
 * (tenant {@code ops}, role {@code admin}) when one is given. Written to a new temporary file, deleted on exit.
 */
public final class TokensFile {
    private TokensFile() {
    }

    /** Each tenant's token in the map's order, then the admin's ({@code adminToken} null: no admin). */
    public static Path write(Map<String, String> tokenByTenant, String adminToken) {
        try {
            Path file = Files.createTempFile("gantry-tokens-", ".yaml");
            file.toFile().deleteOnExit();
            return write(file, tokenByTenant, adminToken);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@link #write(Map, String)} into {@code file}. */
    public static Path write(Path file, Map<String, String> tokenByTenant, String adminToken) {
        StringBuilder yaml = new StringBuilder("tokens:\n");
        tokenByTenant.forEach((tenant, token) -> yaml.append("  - tenant: ").append(tenant).append("\n    token: ")
                .append(token).append('\n'));
        if (adminToken != null) {
            yaml.append("  - tenant: ops\n    role: admin\n    token: ").append(adminToken).append('\n');
        }
        try {
            Files.writeString(file, yaml, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** Tenants and their tokens in the order given: tenant, token, tenant, token... */
    public static Map<String, String> tenants(String... tenantThenToken) {
        if (tenantThenToken.length % 2 != 0) {
            throw new IllegalArgumentException("tenants and tokens come in pairs");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < tenantThenToken.length; i += 2) {
            out.put(tenantThenToken[i], tenantThenToken[i + 1]);
        }
        return out;
    }
}
