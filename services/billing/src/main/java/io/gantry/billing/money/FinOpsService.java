package io.gantry.billing.money;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.FinOps;
import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.Usage;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.db.Ledger;
import io.gantry.billing.kafka.KnownModels;
import io.gantry.runtime.http.ClusterMeters;
import io.gantry.runtime.http.ClusterReporter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * FinOps figures over HTTP (any window) and as month-to-date gauges per tenant, refreshed on a timer. The gauges
 * describe the whole cluster (the ledger is one database every instance reads): only the instance that reports the
 * cluster ({@link ClusterReporter}) exports them, so a sum over the instances is the tenant's figure.
 */
@Singleton
public class FinOpsService {
    private static final Logger LOG = LoggerFactory.getLogger(FinOpsService.class);

    private final Ledger ledger;
    private final InvoiceService invoices;
    private final PriceBookService prices;
    private final KnownModels nodes;
    private final BillingSettings settings;
    private final ClusterMeters meters;
    private final ClusterReporter reporter;
    private final Clock clock;
    private final Map<String, AtomicReference<FinOps.TenantView>> gauges = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<long[]>> utilisationGauges = new ConcurrentHashMap<>();
    private final io.gantry.billing.db.BillingStore store;

    public FinOpsService(Ledger ledger, InvoiceService invoices, PriceBookService prices, KnownModels nodes,
                         BillingSettings settings, MeterRegistry meters, ClusterReporter reporter, Clock clock,
                         io.gantry.billing.db.BillingStore store) {
        this.store = store;
        this.ledger = ledger;
        this.invoices = invoices;
        this.prices = prices;
        this.nodes = nodes;
        this.settings = settings;
        this.meters = new ClusterMeters(meters);
        this.reporter = reporter;
        this.clock = clock;
    }

    public List<FinOps.TenantView> summarize(String tenant, UsageWindow window) {
        List<LedgerEntry> entries = ledger.reaching(tenant, window).stream().filter(e -> Usage.touches(e, window))
                .toList();
        return FinOps.summarize(entries, invoices.rateEntries(entries, window), window, nodes.clusterGpuMilli(),
                prices.current().minorDigits());
    }

    /** GPU time held vs used per tenant in {@code window}, from the utilisation windows placement reported. */
    public List<io.gantry.billing.core.Utilisation.TenantUtilisation> utilisation(String tenant, UsageWindow window) {
        return io.gantry.billing.core.Utilisation.heldVsUsed(store.utilisation(tenant, window.from(), window.to()),
                window);
    }

    /** Allocations still held whose GPUs have been idle for at least {@code minIdle}, longest idle first. */
    public List<io.gantry.billing.core.Utilisation.IdleAllocation> idle(String tenant, java.time.Duration minIdle) {
        return io.gantry.billing.core.Utilisation.idle(store.latestOpenUtilisation(tenant), clock.instant(), minIdle);
    }

    @Scheduled(fixedDelay = "${gantry.billing.finops.check-every:1m}", initialDelay = "10s")
    synchronized void refreshGauges() {
        // once another instance reports the cluster, its gauges are the figures
        if (!meters.follow(reporter, () -> {
            gauges.clear();
            utilisationGauges.clear();
        })) {
            return;
        }
        try {
            Instant now = clock.instant();
            BillingMonth month = BillingMonth.containing(now, settings.zone());
            Instant to = Instant.ofEpochMilli(now.toEpochMilli() + 1);
            for (FinOps.TenantView v : summarize(null, new UsageWindow(month.from(), to))) {
                gauges.computeIfAbsent(v.tenant(), t -> {
                    AtomicReference<FinOps.TenantView> ref = new AtomicReference<>(v);
                    Tags tags = Tags.of("tenant", t);
                    // dashboards only: the exact figures are in GET /v1/finops
                    gauge("gantry.billing.month.cost", tags, ref, r -> r.get().cost().doubleValue());
                    gauge("gantry.billing.month.gpu.seconds", tags, ref, r -> r.get().gpuMicros() / 1e6);
                    gauge("gantry.billing.month.cost.per.successful.job", tags, ref,
                            r -> r.get().costPerSuccessfulJob() == null ? Double.NaN
                                    : r.get().costPerSuccessfulJob().doubleValue());
                    gauge("gantry.billing.month.allocation.share", tags, ref,
                            r -> r.get().allocationShare() == null ? Double.NaN
                                    : r.get().allocationShare().doubleValue());
                    return ref;
                }).set(v);
            }
            Map<String, long[]> idleCount = new java.util.TreeMap<>();
            for (var i : idle(null, java.time.Duration.ZERO)) {
                idleCount.computeIfAbsent(i.tenant(), t -> new long[1])[0]++;
            }
            for (var u : utilisation(null, new UsageWindow(month.from(), to))) {
                long[] figures = {u.heldGpuMicros(), u.usedGpuMicros(), idleCount.getOrDefault(u.tenant(), new long[1])[0]};
                utilisationGauges.computeIfAbsent(u.tenant(), t -> {
                    AtomicReference<long[]> ref = new AtomicReference<>(figures);
                    Tags tags = Tags.of("tenant", t);
                    // GPU time the backends reported on, and how much of it was busy; the idle runs now
                    gauge("gantry.billing.month.gpu.sampled.seconds", tags, ref, r -> r.get()[0] / 1e6);
                    gauge("gantry.billing.month.gpu.used.seconds", tags, ref, r -> r.get()[1] / 1e6);
                    gauge("gantry.billing.idle.allocations", tags, ref, r -> r.get()[2]);
                    return ref;
                }).set(figures);
            }
        } catch (RuntimeException e) {
            LOG.warn("FinOps gauges not refreshed; the next run retries: {}", e.toString());
        }
    }

    private <T> void gauge(String name, Tags tags, T ref, java.util.function.ToDoubleFunction<T> value) {
        meters.add(Gauge.builder(name, ref, value).tags(tags).register(meters.registry()));
    }
}
