package io.gantry.runtime.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Per-run tokens: 32 random bytes, hex, prefixed {@code gtr_} (so the API can tell one from a tenant's token). The
 * token goes to the run's tasks only (GANTRY_RUN_TOKEN); events carry its SHA-256, which is all a verifier needs.
 */
public final class RunTokens {
    public static final String PREFIX = "gtr_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private RunTokens() {
    }

    public static String newToken() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return PREFIX + HexFormat.of().formatHex(bytes);
    }

    /** Whether {@code token} is a run token (rather than a tenant's API token). */
    public static boolean isRunToken(String token) {
        return token != null && token.startsWith(PREFIX);
    }

    /** Whether {@code token} hashes to {@code expectedSha256}, compared in constant time. */
    public static boolean matches(String token, String expectedSha256) {
        return expectedSha256 != null && MessageDigest.isEqual(
                sha256(token).getBytes(StandardCharsets.US_ASCII), expectedSha256.getBytes(StandardCharsets.US_ASCII));
    }

    public static String sha256(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
