package io.gantry.billing.money;

import io.gantry.billing.core.CreditPolicy;
import io.micronaut.context.annotation.Value;
import jakarta.inject.Singleton;

import java.time.Duration;
import java.time.ZoneId;

/** The {@code gantry.billing.*} settings that rating and invoicing read. */
@Singleton
public class BillingSettings {
    private final ZoneId zone;
    private final CreditPolicy credits;
    private final Duration issueAfter;

    public BillingSettings(@Value("${gantry.billing.time-zone:UTC}") String zone,
                           @Value("${gantry.billing.credits.preemptions:false}") boolean creditPreemptions,
                           @Value("${gantry.billing.invoices.issue-after:6h}") Duration issueAfter) {
        this.zone = ZoneId.of(zone);
        this.credits = CreditPolicy.of(creditPreemptions);
        this.issueAfter = issueAfter;
    }

    /** Invoices cover calendar months in this zone. */
    public ZoneId zone() {
        return zone;
    }

    public CreditPolicy credits() {
        return credits;
    }

    /** How long after a month ends its invoices are issued automatically (late releases still arrive meanwhile). */
    public Duration issueAfter() {
        return issueAfter;
    }
}
