package io.gantry.admission.core;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What billing's money budgets mean for a new job. Billing announces each budget's state per tenant (optionally per
 * queue) and month; the newest announcement per (tenant, queue, month) stands. A job is gated by the tenant's
 * budget and by the budget of the queue it goes to, for the month that contains the submit time: once a budget is
 * exhausted its action applies (the strictest of the two: REJECT over HOLD over WARN); a budget past a warning
 * threshold only warns. HOLD accepts the job: the queue, which reads the same announcements, holds it (wait reason
 * BUDGET) until the budget allows. Running jobs are not affected: this is a gate for new work only.
 */
public final class BudgetGate {
    public enum Verdict {
        ALLOW,
        WARN,
        HOLD,
        REJECT
    }

    /** One announced budget state (billing's BudgetStatusChanged, as admission needs it). */
    public record Status(String tenant, String queue, Instant periodFrom, Instant periodTo, String state,
                         String action, String limit, String spent, String currency, int thresholdPercent) {
        public Status {
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(periodFrom, "periodFrom");
            Objects.requireNonNull(periodTo, "periodTo");
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(action, "action");
        }

        String key() {
            return tenant + "\u0000" + (queue == null ? "" : queue) + "\u0000" + periodFrom;
        }

        String scope() {
            return queue == null ? "tenant " + tenant : "queue " + queue + " of tenant " + tenant;
        }
    }

    /**
     * @param field   the request field the verdict is about ({@code tenant} or {@code queue})
     * @param retryAt for HOLD: when the budget's month ends (the queue releases the hold then at the latest)
     */
    public record Decision(Verdict verdict, String field, String message, Instant retryAt) {
        static final Decision ALLOW = new Decision(Verdict.ALLOW, null, null, null);
    }

    private final Map<String, Status> statuses;

    private BudgetGate(Map<String, Status> statuses) {
        this.statuses = statuses;
    }

    public static BudgetGate none() {
        return new BudgetGate(Map.of());
    }

    /** This gate with {@code s} as the newest state of its budget and month. */
    public BudgetGate with(Status s) {
        Map<String, Status> next = new HashMap<>(statuses);
        next.put(s.key(), s);
        // months that ended long ago can no longer gate anything
        next.values().removeIf(x -> x.periodTo().isBefore(s.periodFrom().minusSeconds(40L * 86_400)));
        return new BudgetGate(Map.copyOf(next));
    }

    public Decision decide(String tenant, String queue, Instant now) {
        Decision best = Decision.ALLOW;
        for (Status s : statuses.values()) {
            if (!s.tenant().equals(tenant) || (s.queue() != null && !s.queue().equals(queue))
                    || now.isBefore(s.periodFrom()) || !now.isBefore(s.periodTo())) {
                continue;
            }
            Decision d = decide(s);
            if (d.verdict().compareTo(best.verdict()) > 0) {
                best = d;
            }
        }
        return best;
    }

    private static Decision decide(Status s) {
        String field = s.queue() == null ? "tenant" : "queue";
        String amounts = "spent " + s.spent() + " of " + s.limit() + " " + s.currency();
        switch (s.state()) {
            case "EXHAUSTED":
                return switch (s.action()) {
                    case "REJECT" -> new Decision(Verdict.REJECT, field, "the monthly budget of the " + s.scope()
                            + " is exhausted (" + amounts + "): new jobs are refused until it is raised", null);
                    case "HOLD" -> new Decision(Verdict.HOLD, field, "the monthly budget of the " + s.scope()
                            + " is exhausted (" + amounts + "): the job is accepted and held in its queue (wait "
                            + "reason BUDGET) until the budget is raised or the month ends at " + s.periodTo(),
                            s.periodTo());
                    default -> new Decision(Verdict.WARN, field, "the monthly budget of the " + s.scope()
                            + " is exhausted (" + amounts + ")", null);
                };
            case "WARNING":
                return new Decision(Verdict.WARN, field, "the monthly budget of the " + s.scope() + " is at "
                        + s.thresholdPercent() + "% (" + amounts + ")", null);
            default:
                return Decision.ALLOW;
        }
    }

    public List<Status> statuses() {
        return List.copyOf(statuses.values());
    }
}
