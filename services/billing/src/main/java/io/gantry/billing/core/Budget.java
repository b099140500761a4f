package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;

/**
 * A money budget for every calendar month: the tenant's whole spend, or (with a queue) only its jobs in that queue.
 *
 * @param limit   the monthly limit, in the price book's currency
 * @param action  what admission does with a new job once the budget is exhausted (running jobs are never stopped)
 * @param warnAt  percentages of the limit at which a warning is raised, ascending (100 = exhausted is implicit)
 */
public record Budget(String tenant, String queue, BigDecimal limit, Action action, List<Integer> warnAt) {
    public enum Action {
        WARN,
        HOLD,
        REJECT
    }

    public enum State {
        OK,
        WARNING,
        EXHAUSTED
    }

    /** Where a month's spend stands against the budget. */
    public record Status(Budget budget, BillingMonth month, BigDecimal spent, State state, int thresholdPercent) {
    }

    public Budget {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(limit, "limit");
        Objects.requireNonNull(action, "action");
        limit = Money.canonical(limit);
        warnAt = List.copyOf(warnAt);
    }

    /** {@code tenant} or {@code tenant/queue}: one budget per key. */
    public String key() {
        return queue == null ? tenant : tenant + "/" + queue;
    }

    /**
     * The status for a month's spend: EXHAUSTED once spent reaches the limit, WARNING once it reaches a warning
     * threshold, OK below; {@code thresholdPercent} is the highest threshold reached (100 when exhausted).
     */
    public Status evaluate(BillingMonth month, BigDecimal spent) {
        if (spent.compareTo(limit) >= 0) {
            return new Status(this, month, spent, State.EXHAUSTED, 100);
        }
        int reached = 0;
        for (int p : warnAt) {
            BigDecimal threshold = limit.multiply(BigDecimal.valueOf(p)).divide(BigDecimal.valueOf(100));
            if (spent.compareTo(threshold) >= 0) {
                reached = Math.max(reached, p);
            }
        }
        return new Status(this, month, spent, reached > 0 ? State.WARNING : State.OK, reached);
    }
}
