package io.gantry.billing.money;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.Rating;
import io.gantry.billing.core.Reconciliation;
import io.gantry.billing.core.Usage;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.db.Ledger;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.runtime.kafka.KafkaSecurity;
import io.gantry.runtime.kafka.TopicReader;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Value;
import jakarta.inject.Singleton;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The reconciliation report: reads {@code placement.allocation-events} from its beginning, rates every release
 * again (not trusting the ledger), and lets the core compare that with the ledger and the issued documents.
 */
@Singleton
public class Reconciler {
    private final String bootstrap;
    private final KafkaSecurity security;
    private final Ledger ledger;
    private final BillingStore store;
    private final PriceBookService prices;
    private final BillingSettings settings;

    public Reconciler(@Value("${kafka.bootstrap.servers}") String bootstrap, Ledger ledger, BillingStore store,
                      PriceBookService prices, BillingSettings settings, KafkaSecurity security) {
        this.bootstrap = bootstrap;
        this.security = security;
        this.ledger = ledger;
        this.store = store;
        this.prices = prices;
        this.settings = settings;
    }

    public Reconciliation.Report reconcile(BillingMonth month) {
        List<LedgerEntry> fromEvents = new ArrayList<>();
        for (AllocationEvent e : TopicReader.readAll(bootstrap, security, Topics.PLACEMENT_ALLOCATION_EVENTS)) {
            if (e.getPayload() instanceof AllocationReleased r) {
                try {
                    fromEvents.addAll(Rating.rate(io.gantry.billing.kafka.BillingHandler.release(e.getJobId(), r)));
                } catch (IllegalArgumentException refused) {
                    // a release billing refuses (dead letter) is refused here too: both sides leave it out
                }
            }
        }
        List<LedgerEntry> rows = ledger.reaching(null, month.window()).stream()
                .filter(x -> Usage.touches(x, month.window())).toList();
        Map<String, List<Invoice>> docs = new TreeMap<>();
        for (Invoice d : store.documents(null, month.toString())) {
            docs.computeIfAbsent(d.tenant(), t -> new ArrayList<>()).add(d);
        }
        Set<String> jobs = new HashSet<>();
        fromEvents.forEach(x -> jobs.add(x.jobId()));
        rows.forEach(x -> jobs.add(x.jobId()));
        return Reconciliation.reconcile(month, fromEvents, rows, docs, prices.current(), store.terms(jobs),
                store.checkpoints(jobs), settings.credits());
    }
}
