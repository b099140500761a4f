package io.gantry.admission.core;

/**
 * How many of a tenant's jobs may be open (submitted and not ended) at once: a runaway script cannot fill the queue,
 * the read model and the event log for everyone. Each new job is judged against the tenant's open count; a job
 * already accepted (a repeated request with its Idempotency-Key) is never refused by it.
 *
 * @param limit at most this many open jobs per tenant; 0: no cap
 */
public record OpenJobsCap(int limit) {
    public OpenJobsCap {
        if (limit < 0) {
            throw new IllegalArgumentException("gantry.admission.max-open-jobs must be >= 0 (0: no cap), was " + limit);
        }
    }

    /** Why a new job of a tenant with {@code open} open jobs is refused, or null when it may be submitted. */
    public String refusal(String tenant, long open) {
        if (limit == 0 || open < limit) {
            return null;
        }
        return "tenant " + tenant + " has " + open + " jobs that have not ended, the most a tenant may have open ("
                + limit + "); submit again once some have ended, or cancel some";
    }
}
