package io.gantry.billing.streams;

import io.gantry.billing.core.UsageRow;
import io.gantry.runtime.http.ClusterMeters;
import io.gantry.runtime.http.ClusterReporter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import io.micronaut.scheduling.annotation.Scheduled;

import java.time.YearMonth;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * Month-to-date gauges per tenant, read from the Streams store at every scrape (so they are never older than the
 * aggregation): {@code gantry.billing.month.to.date.gpu.seconds} and {@code .entries}, for the month
 * {@link MonthToDateStreams#currentMonth()} names; NaN while the store cannot be read. A tenant's gauges appear
 * with its first counted entry (or, after a restart, once the restored application runs).
 *
 * <p>With two instances each queries its active and standby stores, which hold every partition: the gauges describe
 * the whole cluster, so only the instance that reports the cluster ({@link ClusterReporter}) exports them (checked
 * every {@code gantry.billing.month-to-date.reporter-check}, default 5 s). The closed-month counter counts the
 * entries this instance's active tasks handled: every instance exports its own.
 */
@Context
@Requires(beans = MonthToDateStreams.class)
public class MonthToDateMetrics implements MonthToDateStreams.Watcher {
    private final MonthToDateStreams streams;
    private final ClusterMeters meters;
    private final ClusterReporter reporter;
    private final Counter closedMonthEntries;
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();

    public MonthToDateMetrics(MonthToDateStreams streams, MeterRegistry meters, ClusterReporter reporter) {
        this.streams = streams;
        this.meters = new ClusterMeters(meters);
        this.reporter = reporter;
        this.closedMonthEntries = Counter.builder("gantry.billing.month.to.date.closed.entries")
                .description("Usage entries that ended in a closed month: in the ledger, not in the month-to-date"
                        + " figures")
                .register(meters);
        streams.watch(this);
    }

    @Override
    public synchronized void counted(String tenant) {
        if (meters.follow(reporter, tenants::clear) && tenants.add(tenant)) {
            meters.add(Gauge.builder("gantry.billing.month.to.date.gpu.seconds",
                            () -> sum(tenant, UsageRow::gpuMicros) / 1e6)
                    .tag("tenant", tenant)
                    .description("GPU-seconds of released allocations this month (Kafka Streams aggregation)")
                    .register(meters.registry()));
            meters.add(Gauge.builder("gantry.billing.month.to.date.entries", () -> sum(tenant, UsageRow::entries))
                    .tag("tenant", tenant)
                    .description("Usage entries touching this month (Kafka Streams aggregation)")
                    .register(meters.registry()));
        }
    }

    /** Exports the tenants' gauges while this instance reports the cluster, and removes them when it stops. */
    @Scheduled(fixedDelay = "${gantry.billing.month-to-date.reporter-check:5s}", initialDelay = "1s")
    synchronized void followReporter() {
        if (meters.follow(reporter, tenants::clear) && tenants.isEmpty() && streams.isRunning()) {
            running();
        }
    }

    @Override
    public void closedMonth(String entryId, YearMonth month) {
        closedMonthEntries.increment();
    }

    @Override
    public void running() {
        try {
            streams.tenants().forEach(this::counted);
        } catch (MonthToDateStreams.NotQueryable e) {
            // no longer running: the next RUNNING tries again
        }
    }

    private double sum(String tenant, ToLongFunction<UsageRow> figure) {
        try {
            return streams.rows(streams.currentMonth().month(), tenant).stream().mapToLong(figure).sum();
        } catch (MonthToDateStreams.NotQueryable e) {
            return Double.NaN;
        }
    }
}
