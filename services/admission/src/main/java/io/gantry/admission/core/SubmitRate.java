package io.gantry.admission.core;

import java.util.HashMap;
import java.util.Map;

/**
 * How fast one tenant may submit (a token bucket per tenant, per admission instance): {@code burst} submissions at
 * once, then {@code perSecond} a second. A script in a tight loop is told to slow down (429 with the seconds until
 * its next submission is let in) before it costs everyone else the API, the read model and the event log. Time is
 * given by the caller (nanoseconds of a monotonic clock), so the rule is tested without sleeping.
 *
 * @param perSecond submissions a second a tenant earns back; 0: no limit
 * @param burst     submissions a tenant may make at once (the bucket's size), at least 1 when limited
 */
public final class SubmitRate {
    private final double perSecond;
    private final int burst;
    private final Map<String, double[]> buckets = new HashMap<>();

    public SubmitRate(double perSecond, int burst) {
        if (perSecond < 0 || Double.isNaN(perSecond) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("gantry.admission.submit-rate must be >= 0 jobs a second (0: no limit), "
                    + "was " + perSecond);
        }
        if (perSecond > 0 && burst < 1) {
            throw new IllegalArgumentException("gantry.admission.submit-burst must be >= 1, was " + burst);
        }
        this.perSecond = perSecond;
        this.burst = burst;
    }

    /** Let in, or refused with the whole seconds (at least 1) until the tenant's next submission would be. */
    public record Decision(boolean allowed, long retryAfterSeconds, String refusal) {
    }

    private static final Decision ALLOWED = new Decision(true, 0, null);

    public boolean limited() {
        return perSecond > 0;
    }

    /** Takes one submission of {@code tenant} at {@code nowNanos}, if the tenant has one left. */
    public synchronized Decision take(String tenant, long nowNanos) {
        if (perSecond == 0) {
            return ALLOWED;
        }
        // [tokens, when last filled]
        double[] b = buckets.computeIfAbsent(tenant, t -> new double[] {burst, nowNanos});
        double elapsed = Math.max(0, nowNanos - b[1]) / 1e9;
        b[0] = Math.min(burst, b[0] + elapsed * perSecond);
        b[1] = nowNanos;
        if (b[0] >= 1) {
            b[0] -= 1;
            return ALLOWED;
        }
        long wait = Math.max(1, (long) Math.ceil((1 - b[0]) / perSecond));
        return new Decision(false, wait, "tenant " + tenant + " submits faster than " + rate() + " jobs a second "
                + "(bursts of " + burst + "); retry in " + wait + " s");
    }

    private String rate() {
        return perSecond == Math.rint(perSecond) ? Long.toString((long) perSecond) : Double.toString(perSecond);
    }
}
