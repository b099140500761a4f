package io.gantry.admission.http;

import io.gantry.runtime.http.RunTokens;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * New API tokens: a public id ({@code tok_} and 24 hex digits, safe to show and log) and a secret ({@code gtn_} and
 * 32 random bytes, URL-safe base64), of which only the SHA-256 is kept anywhere. The prefixes let a reader (and a
 * secret scanner) recognise a Gantry token, and tell it from a run's token ({@code gtr_}).
 */
final class TokenSecrets {
    static final String SECRET_PREFIX = "gtn_";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A new token: id, secret and the secret's SHA-256 in hex. */
    record NewToken(String tokenId, String secret, String sha256) {
        @Override
        public String toString() {
            // a record's default toString would print the secret into any log line that shows the record
            return "NewToken[" + tokenId + "]";
        }
    }

    private TokenSecrets() {
    }

    static NewToken next() {
        byte[] id = new byte[12];
        byte[] secret = new byte[32];
        RANDOM.nextBytes(id);
        RANDOM.nextBytes(secret);
        String token = SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        return new NewToken("tok_" + HexFormat.of().formatHex(id), token, RunTokens.sha256(token));
    }
}
