package io.gantry.admission.db;

/**
 * The outcome of claiming an Idempotency-Key.
 *
 * @param claimed     true if this request took the key; false if an earlier request holds it
 * @param requestHash the hash of the spec the key is bound to
 * @param jobId       the job the key is bound to
 */
public record KeyClaim(boolean claimed, String requestHash, String jobId) {
}
