package io.gantry.runtime.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Per-run tokens: {@code gtr_<attempt>.<job tag>.<32 random bytes, hex>} (the prefix tells one from a tenant's token).
 * The token goes to the run's tasks only (GANTRY_RUN_TOKEN); events carry its SHA-256, which is all a verifier needs
 * to accept it. The attempt and the job tag (the first 12 hex digits of the job id's SHA-256) are claims, never
 * proof: they only let the API tell a newer run it has not heard of yet (ask it to retry) from a token of another job
 * or of no run at all (refuse it).
 */
public final class RunTokens {
    public static final String PREFIX = "gtr_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private RunTokens() {
    }

    public static String newToken(String jobId, int attempt) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return PREFIX + attempt + "." + jobTag(jobId) + "." + HexFormat.of().formatHex(bytes);
    }

    /** What a run token says of itself: the job (its tag) and the attempt it was issued for. */
    public record Claim(int attempt, String jobTag) {
        /** Whether it claims to be of {@code jobId}. */
        public boolean isOf(String jobId) {
            return jobTag.equals(RunTokens.jobTag(jobId));
        }
    }

    /** The claim of a token in the format {@link #newToken} writes; empty for any other text. */
    public static java.util.Optional<Claim> claim(String token) {
        if (!isRunToken(token)) {
            return java.util.Optional.empty();
        }
        String[] parts = token.substring(PREFIX.length()).split("\\.", -1);
        if (parts.length != 3 || parts[1].length() != 12 || !parts[0].matches("[1-9][0-9]{0,8}")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(new Claim(Integer.parseInt(parts[0]), parts[1]));
    }

    static String jobTag(String jobId) {
        return sha256(jobId).substring(0, 12);
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
