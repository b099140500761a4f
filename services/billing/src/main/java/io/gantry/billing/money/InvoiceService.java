package io.gantry.billing.money;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.Invoicing;
import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.Pricing;
import io.gantry.billing.core.RatedLine;
import io.gantry.billing.core.Usage;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.db.Ledger;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Rates windows and issues documents: it loads the ledger, terms and checkpoints a window needs and hands them to the
 * core ({@link Pricing}, {@link Invoicing}). Issuing is serialised (one month at a time in this process) and each
 * document is one insert-only transaction, so a document is issued once whatever is retried or restarted.
 *
 * <p>Several instances may issue the same month at once; {@code synchronized} does not reach across them. The
 * documents are read before the ledger, and a document's sequence number is the count of those read, unique per
 * tenant and month in PostgreSQL: whatever another instance issued after this one's read makes this one's document
 * collide and be dropped, so no note is computed against documents newer than the ledger it was compared with.
 */
@Singleton
public class InvoiceService {
    private static final Logger LOG = LoggerFactory.getLogger(InvoiceService.class);

    private final Ledger ledger;
    private final BillingStore store;
    private final PriceBookService prices;
    private final BillingSettings settings;
    private final Clock clock;
    private final boolean autoIssue;

    public InvoiceService(Ledger ledger, BillingStore store, PriceBookService prices, BillingSettings settings,
                          Clock clock, @Value("${gantry.billing.invoices.auto-issue:true}") boolean autoIssue) {
        this.autoIssue = autoIssue;
        this.ledger = ledger;
        this.store = store;
        this.prices = prices;
        this.settings = settings;
        this.clock = clock;
    }

    /** Rated lines of a window, of one tenant or (null) everyone. */
    public List<RatedLine> rate(String tenant, UsageWindow window) {
        List<LedgerEntry> entries = ledger.reaching(tenant, window).stream().filter(e -> Usage.touches(e, window))
                .toList();
        return rateEntries(entries, window);
    }

    /**
     * What {@code tenant} spent in the window (credits deducted), at the prices in force: of every job, or (with a
     * queue) of its jobs submitted to that queue, including what still-running allocations have held until now.
     * Each line rounded once, as on an invoice.
     */
    public java.math.BigDecimal spent(String tenant, String queue, UsageWindow window) {
        List<LedgerEntry> entries = new ArrayList<>(ledger.reaching(tenant, window).stream()
                .filter(e -> Usage.touches(e, window)).toList());
        // running allocations count up to now: a budget stops new work before a long run is released
        entries.addAll(store.openUntil(tenant, clock.instant()));
        Set<String> jobs = new HashSet<>();
        entries.forEach(e -> jobs.add(e.jobId()));
        var terms = store.terms(jobs);
        if (queue != null) {
            entries = entries.stream().filter(e -> terms.containsKey(e.jobId())
                    && queue.equals(terms.get(e.jobId()).queue())).toList();
        }
        List<RatedLine> lines = Pricing.rate(entries, window, prices.current(), terms, store.checkpoints(jobs),
                settings.credits());
        return Invoicing.freshTotal(lines, prices.current().minorDigits());
    }

    public List<RatedLine> rateEntries(List<LedgerEntry> entries, UsageWindow window) {
        Set<String> jobs = new HashSet<>();
        entries.forEach(e -> jobs.add(e.jobId()));
        return Pricing.rate(entries, window, prices.current(), store.terms(jobs), store.checkpoints(jobs),
                settings.credits());
    }

    /**
     * Issues what a closed month needs: each tenant's invoice the first time, a credit or debit note when a
     * recomputation differs from what was issued. Answers the documents issued by this call.
     *
     * @throws io.gantry.billing.core.InvalidInput naming {@code month} when the month has not ended yet
     */
    public synchronized List<Invoice> issue(BillingMonth month) {
        Instant now = clock.instant();
        if (now.isBefore(month.to())) {
            throw io.gantry.billing.core.InvalidInput.of("month", month + " has not ended yet (it ends "
                    + month.to() + "); an invoice covers a whole month");
        }
        if (prices.current().version() == 0) {
            // an invoice of unpriced lines would be a wrong document that only notes could repair
            throw io.gantry.billing.core.InvalidInput.of("month", "no price book has been applied yet, so "
                    + month + " cannot be invoiced; PUT /v1/price-book first");
        }
        // what was issued is read before the ledger: a note another instance issues in between then takes the
        // sequence number this one's document would take, and the insert drops this one (see insertDocument); read
        // the other way round, a note issued in between would count against a ledger read without its release
        Map<String, List<Invoice>> issued = new TreeMap<>();
        for (Invoice d : store.documents(null, month.toString())) {
            issued.computeIfAbsent(d.tenant(), t -> new ArrayList<>()).add(d);
        }
        UsageWindow window = month.window();
        Map<String, List<RatedLine>> byTenant = new TreeMap<>();
        for (RatedLine l : rate((String) null, window)) {
            byTenant.computeIfAbsent(l.tenant(), t -> new ArrayList<>()).add(l);
        }
        TreeSet<String> tenants = new TreeSet<>(byTenant.keySet());
        tenants.addAll(issued.keySet());
        List<Invoice> out = new ArrayList<>();
        Instant at = Instant.ofEpochMilli(now.toEpochMilli());
        for (String tenant : tenants) {
            Invoicing.next(tenant, month, byTenant.getOrDefault(tenant, List.of()),
                            issued.getOrDefault(tenant, List.of()), prices.current(), at)
                    .filter(store::insertDocument)
                    .ifPresent(d -> {
                        LOG.info("issued {} ({} {}, {} lines)", d.documentId(), d.total().toPlainString(),
                                d.currency(), d.lines().size());
                        out.add(d);
                    });
        }
        return out;
    }

    private volatile boolean toldNoPriceBook;

    /**
     * How long before its commit an input may carry its recorded time: billing stamps a poll's records when it
     * handles them and commits them at the end of the poll, and instances' clocks differ a little. A look counts
     * inputs recorded this long before the previous look began, so none committed meanwhile is missed; at worst a
     * month is rated once more for nothing.
     */
    static final Duration COMMIT_LAG = Duration.ofMinutes(10);

    /**
     * Issues the previous month once it has been over for {@code gantry.billing.invoices.issue-after}, and the notes
     * of every earlier month whose amount an input recorded since the previous look may have changed.
     *
     * <p>A release can land months late (a run granted in June and released in August: time limits reach a year),
     * so the timer cannot stop at the previous month. Rating every closed month at every look would cost seconds per
     * month on a large ledger, so it rates only the months reached by ledger rows recorded since the previous look
     * (any instance's: the watermark is in PostgreSQL), or by rows of jobs whose terms or checkpoints were: those are
     * every input that changes a closed month's amount, as the rows are insert-only and a price book never changes
     * what was already in force. The watermark moves only after every month looked at was issued, so a failed look is
     * repeated whole.
     */
    @Scheduled(fixedDelay = "${gantry.billing.invoices.check-every:10m}", initialDelay = "1m")
    void issueClosedMonth() {
        if (!autoIssue) {
            return;
        }
        Instant lookStarted = clock.instant();
        BillingMonth previous = BillingMonth.containing(lookStarted, settings.zone()).previous();
        if (lookStarted.isBefore(previous.to().plus(settings.issueAfter()))) {
            return;
        }
        if (prices.current().version() == 0) {
            // nothing to invoice in money yet: say so once, not a warning every check
            if (!toldNoPriceBook) {
                LOG.info("no price book applied yet: no invoices are issued until one is (PUT /v1/price-book)");
                toldNoPriceBook = true;
            }
            return;
        }
        boolean complete = issueOrSayWhy(previous);
        try {
            Set<BillingMonth> earlier = new TreeSet<>(Comparator.comparing(BillingMonth::month));
            Optional<Instant> since = store.invoiceWatermark();
            if (since.isPresent()) {
                for (BillingStore.Span span : store.spansChangedSince(since.get().minus(COMMIT_LAG), previous.from())) {
                    BillingMonth.reached(span.from(), span.to(), settings.zone()).stream()
                            .filter(m -> m.month().isBefore(previous.month())).forEach(earlier::add);
                }
            }
            for (BillingMonth month : earlier) {
                complete &= issueOrSayWhy(month);
            }
            if (complete) {
                store.advanceInvoiceWatermark(lookStarted);
            }
        } catch (RuntimeException e) {
            LOG.warn("looking for months older than {} to issue again failed; next check retries: {}", previous,
                    e.toString());
        }
    }

    private boolean issueOrSayWhy(BillingMonth month) {
        try {
            issue(month);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("issuing the invoices of {} failed; next check retries: {}", month, e.toString());
            return false;
        }
    }
}
