package io.gantry.queue.core;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The money budgets billing announced, as the queue needs them: which scopes (a tenant, or one queue of a tenant) hold
 * their jobs now, and the sentence saying why. The newest announcement of a scope stands (a later month replaces an
 * earlier one; one about an older month than the one known is ignored). A hold applies only inside its month, so a new
 * month releases it even before billing says so. Not facts of the queue: rebuilt from {@code billing.budget-events}.
 */
final class BudgetHolds {
    private final Map<String, Input.BudgetChanged> byScope = new HashMap<>();
    /** How many announcements in {@link #byScope} hold: zero is the common case, answered without a lookup. */
    private int holding;

    /** Records {@code b} if it is not older than what is known of its scope; returns whether it was recorded. */
    boolean record(Input.BudgetChanged b) {
        String key = key(b.tenant(), b.queue());
        Input.BudgetChanged known = byScope.get(key);
        if (known != null && b.periodFrom().isBefore(known.periodFrom())) {
            return false;
        }
        if (known != null && known.holds()) {
            holding--;
        }
        byScope.put(key, b);
        if (b.holds()) {
            holding++;
        }
        return true;
    }

    /**
     * Why a job of {@code tenant} in queue {@code queue} (null: it has none) is held at {@code now}, or null when it
     * is not: the tenant's budget first, then its queue's.
     */
    String holdOf(String tenant, String queue, Instant now) {
        if (holding == 0) {
            return null;
        }
        Input.BudgetChanged b = byScope.get(key(tenant, null));
        if (applies(b, now)) {
            return sentence(b);
        }
        b = queue == null ? null : byScope.get(key(tenant, queue));
        return applies(b, now) ? sentence(b) : null;
    }

    /** Whether any budget holds now or later in its month. */
    boolean holdsAny() {
        return holding > 0;
    }

    /** The earliest end of a month whose budget holds, or null: the core reviews its holds then. */
    Instant nextEnd() {
        if (holding == 0) {
            return null;
        }
        Instant first = null;
        for (Input.BudgetChanged b : byScope.values()) {
            if (b.holds() && (first == null || b.periodTo().isBefore(first))) {
                first = b.periodTo();
            }
        }
        return first;
    }

    /** Forgets the holds whose month ended by {@code now}; returns their tenants, in order. */
    List<String> expire(Instant now) {
        TreeSet<String> tenants = new TreeSet<>();
        byScope.values().removeIf(b -> {
            if (b.holds() && !now.isBefore(b.periodTo())) {
                tenants.add(b.tenant());
                holding--;
                return true;
            }
            return false;
        });
        return List.copyOf(tenants);
    }

    private static boolean applies(Input.BudgetChanged b, Instant now) {
        return b != null && b.holds() && !now.isBefore(b.periodFrom()) && now.isBefore(b.periodTo());
    }

    /**
     * {@code held: the monthly budget of tenant vision is exhausted (1,204.50 EUR of 1,200.00 EUR); held until
     * 2026-12-01 or the budget is raised}. The first day of the next month is the month as billing names it (its
     * invoice time zone), so the date is the one the tenant's invoices use.
     */
    static String sentence(Input.BudgetChanged b) {
        int scale = Math.max(0, Math.max(b.spent().scale(), b.limit().scale()));
        String scope = b.queue() == null ? "tenant " + b.tenant() : "queue " + b.queue() + " of tenant " + b.tenant();
        return "held: the monthly budget of " + scope + " is exhausted (" + amount(b.spent(), scale) + " "
                + b.currency() + " of " + amount(b.limit(), scale) + " " + b.currency() + "); held until "
                + b.month().plusMonths(1).atDay(1) + " or the budget is raised";
    }

    private static String amount(BigDecimal value, int scale) {
        return String.format(Locale.ROOT, "%,." + scale + "f", value.setScale(scale, RoundingMode.HALF_EVEN));
    }

    private static String key(String tenant, String queue) {
        return tenant + "\u0000" + (queue == null ? "" : queue);
    }
}
