package io.gantry.admission.core;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Idempotency-Key semantics: a tenant's key names one job, forever. The job id and the JobSubmitted event id are
 * derived from (tenant, key), so a repeated publish of the same submission is the same event downstream; what a
 * repeated request gets depends only on what the first one left behind.
 */
public final class Idempotency {
    public static final int MAX_KEY_LENGTH = 255;

    /** What to do with a request that carries a key. */
    public enum Outcome {
        /** The key is new: publish the job. */
        PUBLISH,
        /** The key was used for a different spec: 422. */
        CONFLICT,
        /** The same spec, and the job is known: answer its current state, publish nothing. */
        ANSWER_CURRENT_STATE,
        /**
         * The same spec, but the job is not in the read model: the first request may have died before publishing,
         * so publish again under the same event id (harmless if it had published).
         */
        PUBLISH_AGAIN
    }

    /** The job and event ids a (tenant, key) names. */
    public record Ids(String jobId, String eventId) {
    }

    private Idempotency() {
    }

    public static Ids ids(String tenant, String key) {
        // NUL cannot occur in a tenant name or a key, so (tenant, key) splits are unambiguous
        String jobId = UUID.nameUUIDFromBytes((tenant + "\u0000" + key).getBytes(StandardCharsets.UTF_8)).toString();
        String eventId = UUID.nameUUIDFromBytes(("JobSubmitted\u0000" + jobId).getBytes(StandardCharsets.UTF_8))
                .toString();
        return new Ids(jobId, eventId);
    }

    /**
     * @param claimedNow     whether this request just claimed the key
     * @param storedHash     the hash of the spec the key was first claimed with
     * @param requestHash    the hash of this request's (normalized) spec
     * @param jobKnown       whether the job is in the read model
     */
    public static Outcome decide(boolean claimedNow, String storedHash, String requestHash, boolean jobKnown) {
        if (claimedNow) {
            return Outcome.PUBLISH;
        }
        if (!storedHash.equals(requestHash)) {
            return Outcome.CONFLICT;
        }
        return jobKnown ? Outcome.ANSWER_CURRENT_STATE : Outcome.PUBLISH_AGAIN;
    }

    /** Why {@code key} is not usable, or null: 1..255 characters, not blank, no control characters. */
    public static String keyProblem(String key) {
        if (key.isBlank() || key.length() > MAX_KEY_LENGTH || key.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            return "must be 1.." + MAX_KEY_LENGTH + " non-blank characters, no control characters";
        }
        return null;
    }
}
