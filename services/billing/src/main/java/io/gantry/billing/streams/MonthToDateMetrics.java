package io.gantry.billing.streams;

import io.gantry.billing.core.UsageRow;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;

import java.time.YearMonth;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * Month-to-date gauges per tenant, read from the Streams store at every scrape (so they are never older than the
 * aggregation): {@code gantry.billing.month.to.date.gpu.seconds} and {@code .entries}, for the month
 * {@link MonthToDateStreams#currentMonth()} names; NaN while the store cannot be read. A tenant's gauges appear
 * with its first counted entry (or, after a restart, once the restored application runs).
 */
@Context
@Requires(beans = MonthToDateStreams.class)
public class MonthToDateMetrics implements MonthToDateStreams.Watcher {
    private final MonthToDateStreams streams;
    private final MeterRegistry meters;
    private final Counter closedMonthEntries;
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();

    public MonthToDateMetrics(MonthToDateStreams streams, MeterRegistry meters) {
        this.streams = streams;
        this.meters = meters;
        this.closedMonthEntries = Counter.builder("gantry.billing.month.to.date.closed.entries")
                .description("Usage entries that ended in a closed month: in the ledger, not in the month-to-date"
                        + " figures")
                .register(meters);
        streams.watch(this);
    }

    @Override
    public void counted(String tenant) {
        if (tenants.add(tenant)) {
            Gauge.builder("gantry.billing.month.to.date.gpu.seconds", () -> sum(tenant, UsageRow::gpuMicros) / 1e6)
                    .tag("tenant", tenant)
                    .description("GPU-seconds of released allocations this month (Kafka Streams aggregation)")
                    .register(meters);
            Gauge.builder("gantry.billing.month.to.date.entries", () -> sum(tenant, UsageRow::entries))
                    .tag("tenant", tenant)
                    .description("Usage entries touching this month (Kafka Streams aggregation)")
                    .register(meters);
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
