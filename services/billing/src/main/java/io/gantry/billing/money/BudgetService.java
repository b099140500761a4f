package io.gantry.billing.money;

import io.gantry.billing.core.Money;
import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Budget;
import io.gantry.billing.core.BudgetAnnouncements;
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
 * per budget when an instance begins to announce them), so admission can gate new jobs without calling billing.
 * Also exported as metrics.
 *
 * <p>The spend is the rated ledger (every release of the month) plus the runs still going, rated up to now.
 *
 * <p>Budgets and the ledger are one database every instance reads, so what they say about the cluster comes from one
 * instance, the one that reports the cluster ({@link ClusterReporter}): it alone checks budgets, announces their
 * changes and exports the budget gauges and the alert counter. So each change is announced once, not once per
 * instance. An instance that begins to report (at its start, or taking over) does not know what was announced before
 * it, so it announces every budget once; consumers keep the newest status per budget, so that repeat is harmless.
 *
 * <p>An admin's {@link #replace} reaching another instance stores the set and answers with its statuses; the
 * reporting instance notices that the stored set is not the one it last checked within
 * {@code gantry.billing.budgets.notice-every} (seconds, not {@code check-every}) and announces what changed. The
 * replacing instance does not announce: the reporting one could not tell (it would need a record of announcements
 * shared in PostgreSQL, under a lock), and two announcing instances could put two statuses of one budget on the topic
 * in the wrong order. Left open: a budget removed on another instance in the moments before the reporting instance
 * stops is never announced as removed (its successor knows only the budgets that exist).
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
    /** What this instance announced, while it reports the cluster (nothing otherwise). */
    private final BudgetAnnouncements announcements = new BudgetAnnouncements();
    private final Map<String, AtomicReference<BigDecimal>[]> gauges = new ConcurrentHashMap<>();
    private final Map<Tags, Counter> alerts = new ConcurrentHashMap<>();
    /** The budgets this instance last checked while it reports the cluster (null before its first check). */
    private List<Budget> checked;

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

    /**
     * Replaces every budget (validated; no new budget or lowered limit below what is already spent) and answers with
     * their statuses. The instance that reports the cluster checks and announces them at once; another one leaves
     * that to it (it notices the new set within {@code gantry.billing.budgets.notice-every}).
     */
    public synchronized List<Budget.Status> replace(Object tree) {
        List<Budget> budgets = BudgetParser.parse(tree, store.budgets(), b -> spentThisMonth(b.tenant(), b.queue()),
                prices.current().minorDigits());
        store.replaceBudgets(budgets, clock.instant());
        // a failure after the budgets were stored is the caller's answer (503 when the database went away), not an
        // empty list: the budgets are in, and the reporting instance's next look announces them
        return followReporter() ? evaluateAndAnnounce() : statuses();
    }

    public List<Budget.Status> statuses() {
        return statuses(store.budgets());
    }

    private List<Budget.Status> statuses(List<Budget> budgets) {
        BillingMonth month = BillingMonth.containing(clock.instant(), settings.zone());
        List<Budget.Status> out = new ArrayList<>();
        for (Budget b : budgets) {
            out.add(b.evaluate(month, spentThisMonth(b.tenant(), b.queue())));
        }
        return out;
    }

    /**
     * On the instance that reports the cluster, checks at once when the stored budgets are not those it last
     * checked: another instance replaced them, or this one has not checked since it began to report.
     */
    @Scheduled(fixedDelay = "${gantry.billing.budgets.notice-every:2s}", initialDelay = "5s")
    synchronized void noticeChanges() {
        if (!followReporter()) {
            return;
        }
        try {
            if (checked != null && checked.equals(store.budgets())) {
                return;
            }
        } catch (RuntimeException e) {
            return; // the database is away: the next look, or the next check, tries again (and says so)
        }
        check();
    }

    /**
     * On the instance that reports the cluster, evaluates every budget and announces those whose state, threshold,
     * limit, action or month changed; elsewhere does nothing and answers nothing.
     */
    @Scheduled(fixedDelay = "${gantry.billing.budgets.check-every:1m}", initialDelay = "5s")
    public synchronized List<Budget.Status> check() {
        try {
            return evaluateAndAnnounce();
        } catch (RuntimeException e) {
            LOG.warn("budget check failed; the next one retries: {}", e.toString());
            return List.of();
        }
    }

    /** {@link #check}, failing when the budgets or the spend cannot be read. */
    private synchronized List<Budget.Status> evaluateAndAnnounce() {
        if (!followReporter()) {
            return List.of();
        }
        List<Budget> budgets = store.budgets();
        List<Budget.Status> all = statuses(budgets);
        checked = budgets;
        for (Budget.Status s : all) {
            gauge(s);
        }
        for (BudgetAnnouncements.Change c : announcements.next(all)) {
            Budget.Status s = c.status();
            announce(s);
            if (c.alert()) {
                alerts.computeIfAbsent(Tags.of("tenant", s.budget().tenant(), "queue",
                        Objects.requireNonNullElse(s.budget().queue(), ""), "state", s.state().name()),
                        t -> meters.add(Counter.builder("gantry.billing.budget.alerts").tags(t)
                                .register(meters.registry()))).increment();
                LOG.info("budget {} {} at {} of {} {}", s.budget().key(), s.state(), s.spent().toPlainString(),
                        Money.text(s.budget().limit(), minorDigits()), prices.current().currency());
            }
        }
        return all;
    }

    /**
     * Whether this instance reports the cluster now. One that stops removes its budget series (the reporting
     * instance's are the figures) and forgets what it announced: should it report again, it announces every budget
     * once, as the other instance may have announced changes meanwhile.
     */
    private boolean followReporter() {
        return meters.follow(reporter, () -> {
            gauges.clear();
            alerts.clear();
            announcements.forget();
            checked = null;
        });
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
