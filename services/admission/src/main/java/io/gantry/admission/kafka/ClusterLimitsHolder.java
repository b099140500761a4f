package io.gantry.admission.kafka;

import io.gantry.admission.core.BudgetGate;
import io.gantry.admission.core.ClusterLimits;
import io.gantry.admission.core.CostEstimate;
import io.gantry.admission.core.SchedulingCatalog;
import jakarta.inject.Singleton;

/**
 * What the HTTP threads validate against: the cluster limits and the scheduling catalog (queues, priority classes,
 * GPU tiers). Written only by the read-model processor's thread; the limits are null until the node topic has been
 * read to its end once, so that no spec is judged against a half-known cluster.
 */
@Singleton
public class ClusterLimitsHolder {
    private volatile ClusterLimits limits;
    private volatile SchedulingCatalog catalog = SchedulingCatalog.unknown();
    private volatile BudgetGate budgets = BudgetGate.none();
    private volatile CostEstimate.PriceList prices;

    /** The current limits, or null while the node topic is still being restored. */
    public ClusterLimits current() {
        return limits;
    }

    /** The queues, classes and tiers known so far ({@link SchedulingCatalog#unknown()} before any). */
    public SchedulingCatalog catalog() {
        return catalog;
    }

    /** Billing's money budgets as last announced (none until billing has announced any). */
    public BudgetGate budgets() {
        return budgets;
    }

    /** Billing's newest price book, or null before billing announced one. */
    public CostEstimate.PriceList prices() {
        return prices;
    }

    void publish(CostEstimate.PriceList next) {
        this.prices = next;
    }

    void publish(BudgetGate next) {
        this.budgets = next;
    }

    void publish(ClusterLimits next) {
        this.limits = next;
    }

    void publish(SchedulingCatalog next) {
        this.catalog = next;
    }
}
