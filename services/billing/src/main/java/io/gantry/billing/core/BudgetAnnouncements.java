package io.gantry.billing.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a budget check must announce, given what was announced before: a budget whose state, threshold, limit, action
 * or month changed (or that was never announced), and a removed one once more as OK with action WARN, so that
 * whoever gated on it stops. An alert is due when a budget enters a state other than OK or a higher threshold.
 */
public final class BudgetAnnouncements {
    /** One status to announce, and whether it is an alert. */
    public record Change(Budget.Status status, boolean alert) {
    }

    private final Map<String, Budget.Status> announced = new LinkedHashMap<>();

    /** The changes of {@code current} (every budget's status now), remembered as announced. */
    public synchronized List<Change> next(List<Budget.Status> current) {
        List<Change> out = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        current.forEach(s -> keys.add(s.budget().key()));
        for (String gone : new ArrayList<>(announced.keySet())) {
            if (!keys.contains(gone)) {
                // a removed budget no longer limits anything: say so once, so admission stops gating on it
                Budget.Status last = announced.remove(gone);
                out.add(new Change(new Budget.Status(new Budget(last.budget().tenant(), last.budget().queue(),
                        last.budget().limit(), Budget.Action.WARN, List.of()), last.month(), last.spent(),
                        Budget.State.OK, 0), false));
            }
        }
        for (Budget.Status s : current) {
            Budget.Status before = announced.get(s.budget().key());
            boolean moved = before == null || before.state() != s.state()
                    || before.thresholdPercent() != s.thresholdPercent();
            if (moved || !before.month().equals(s.month()) || !before.budget().equals(s.budget())) {
                out.add(new Change(s, moved && s.state() != Budget.State.OK));
                announced.put(s.budget().key(), s);
            }
        }
        return out;
    }

    /** Forgets what was announced: the next check announces every budget (another instance announced meanwhile). */
    public synchronized void forget() {
        announced.clear();
    }
}
