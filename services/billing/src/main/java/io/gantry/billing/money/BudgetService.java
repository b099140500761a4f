package io.gantry.billing.money;

import io.gantry.billing.core.Money;
import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Budget;
import io.gantry.billing.core.BudgetParser;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.events.BudgetAction;
import io.gantry.events.BudgetEvent;
import io.gantry.events.BudgetState;
import io.gantry.events.BudgetStatusChanged;
import io.gantry.schemas.Topics;
import io.gantry.runtime.http.ClusterMeters;
import io.gantry.runtime.http.ClusterReporter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Money budgets: stored by the admin API, checked against the month-to-date spend on a timer and after every
 * change, and announced on {@code billing.budget-events} whenever a budget's state or threshold changes (and once
 * per budget after a start), so admission can gate new jobs without calling billing. Also exported as metrics.
 *
 * <p>The spend is the rated ledger: allocations count once released, so a long run enters the spend when it ends.
 *
 * <p>The budget gauges and the alert counter describe the whole cluster (the ledger is one database every instance
 * reads): only the instance that reports the cluster ({@link ClusterReporter}) exports them.
 */
@Singleton
public class BudgetService {
    private static final Logger LOG = LoggerFactory.getLogger(BudgetService.class);

    private final BillingStore store;
    private final InvoiceService invoices;
    private final PriceBookService prices;
    private final BillingSettings settings;
    private final BillingProcessor processor;
    private final ClusterMeters meters;
    private final ClusterReporter reporter;
    private final Clock clock;
    private final Map<String, Budget.Status> announced = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<BigDecimal>[]> gauges = new ConcurrentHashMap<>();
    private final Map<Tags, Counter> alerts = new ConcurrentHashMap<>();
    /** Whether this instance exports the budget series now (changed under this object's lock). */
    private boolean reporting;

    public BudgetService(BillingStore store, InvoiceService invoices, PriceBookService prices,
                         BillingSettings settings, BillingProcessor processor, MeterRegistry meters,
                         ClusterReporter reporter, Clock clock) {
        this.store = store;
        this.invoices = invoices;
        this.prices = prices;
        this.settings = settings;
        this.processor = processor;
        this.meters = new ClusterMeters(meters);
        this.reporter = reporter;
        this.clock = clock;
    }

    /**
     * This month's spend of the budget's tenant (and queue): every release recorded in the month, also one stamped
     * after billing's own now (placement's clock may run ahead: skewed, or sped up in a simulated cluster), and the
     * runs still going up to now.
     */
    public BigDecimal spentThisMonth(String tenant, String queue) {
        BillingMonth month = BillingMonth.containing(clock.instant(), settings.zone());
        return invoices.spent(tenant, queue, new UsageWindow(month.from(), month.to()));
    }

    /** Replaces every budget (validated; none below what is already spent), then checks and announces them. */
    public synchronized List<Budget.Status> replace(Object tree) {
        List<Budget> budgets = BudgetParser.parse(tree, b -> spentThisMonth(b.tenant(), b.queue()),
                prices.current().minorDigits());
        store.replaceBudgets(budgets, clock.instant());
        return check();
    }

    public List<Budget.Status> statuses() {
        BillingMonth month = BillingMonth.containing(clock.instant(), settings.zone());
        List<Budget.Status> out = new ArrayList<>();
        for (Budget b : store.budgets()) {
            out.add(b.evaluate(month, spentThisMonth(b.tenant(), b.queue())));
        }
        return out;
    }

    /** Evaluates every budget and announces those whose state, threshold, limit, action or month changed. */
    @Scheduled(fixedDelay = "${gantry.billing.budgets.check-every:1m}", initialDelay = "5s")
    public synchronized List<Budget.Status> check() {
        List<Budget.Status> all;
        try {
            all = statuses();
        } catch (RuntimeException e) {
            LOG.warn("budget check failed; the next one retries: {}", e.toString());
            return List.of();
        }
        java.util.Set<String> current = new java.util.HashSet<>();
        all.forEach(s -> current.add(s.budget().key()));
        for (String gone : new ArrayList<>(announced.keySet())) {
            if (!current.contains(gone)) {
                // a removed budget no longer limits anything: say so once, so admission stops gating on it
                Budget.Status last = announced.remove(gone);
                announce(new Budget.Status(new Budget(last.budget().tenant(), last.budget().queue(),
                        last.budget().limit(), Budget.Action.WARN, List.of()), last.month(), last.spent(),
                        Budget.State.OK, 0));
            }
        }
        boolean reports = reporter.reportsCluster();
        if (reporting && !reports) {
            // another instance reports the cluster now: its gauges are the figures
            meters.removeAll();
            gauges.clear();
            alerts.clear();
        }
        reporting = reports;
        for (Budget.Status s : all) {
            if (reporting) {
                gauge(s);
            }
            Budget.Status before = announced.get(s.budget().key());
            if (before == null || before.state() != s.state() || before.thresholdPercent() != s.thresholdPercent()
                    || !before.month().equals(s.month()) || !before.budget().equals(s.budget())) {
                announce(s);
                if (s.state() != Budget.State.OK && (before == null || before.state() != s.state()
                        || before.thresholdPercent() != s.thresholdPercent())) {
                    if (reporting) {
                        alerts.computeIfAbsent(Tags.of("tenant", s.budget().tenant(), "queue",
                                Objects.requireNonNullElse(s.budget().queue(), ""), "state", s.state().name()),
                                t -> meters.add(Counter.builder("gantry.billing.budget.alerts").tags(t)
                                        .register(meters.registry()))).increment();
                    }
                    LOG.info("budget {} {} at {} of {} {}", s.budget().key(), s.state(), s.spent().toPlainString(),
                            Money.text(s.budget().limit(), minorDigits()), prices.current().currency());
                }
                announced.put(s.budget().key(), s);
            }
        }
        return all;
    }

    /** The minor digits of the current price book's currency: amounts are shown with at least these. */
    public int minorDigits() {
        return prices.current().minorDigits();
    }

    private void announce(Budget.Status s) {
        BudgetEvent event = BudgetEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString())
                .setTenant(s.budget().tenant())
                .setOccurredAt(Instant.ofEpochMilli(clock.millis()))
                .setPayload(BudgetStatusChanged.newBuilder()
                        .setTenant(s.budget().tenant())
                        .setQueue(s.budget().queue())
                        .setMonth(s.month().toString())
                        .setPeriodFrom(s.month().from())
                        .setPeriodTo(s.month().to())
                        .setCurrency(prices.current().currency())
                        .setLimit(Money.text(s.budget().limit(), minorDigits()))
                        .setSpent(s.spent().toPlainString())
                        .setThresholdPercent(s.thresholdPercent())
                        .setState(BudgetState.valueOf(s.state().name()))
                        .setAction(BudgetAction.valueOf(s.budget().action().name()))
                        .build())
                .build();
        processor.submit(out -> {
            out.send(Topics.BILLING_BUDGET_EVENTS, event.getTenant(), event);
            return null;
        });
    }

    @SuppressWarnings("unchecked")
    private void gauge(Budget.Status s) {
        AtomicReference<BigDecimal>[] g = gauges.computeIfAbsent(s.budget().key(), k -> {
            AtomicReference<BigDecimal>[] refs = new AtomicReference[]{new AtomicReference<>(BigDecimal.ZERO),
                    new AtomicReference<>(BigDecimal.ZERO)};
            Tags tags = Tags.of("tenant", s.budget().tenant(), "queue",
                    Objects.requireNonNullElse(s.budget().queue(), ""));
            // metrics are for dashboards; the exact figures are in the API and the events
            meters.add(Gauge.builder("gantry.billing.budget.spent", refs[0], r -> r.get().doubleValue()).tags(tags)
                    .register(meters.registry()));
            meters.add(Gauge.builder("gantry.billing.budget.limit", refs[1], r -> r.get().doubleValue()).tags(tags)
                    .register(meters.registry()));
            return refs;
        });
        g[0].set(s.spent());
        g[1].set(s.budget().limit());
    }
}
