package io.gantry.billing.streams;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.MonthToDate;
import io.gantry.billing.core.UsageRow;
import io.gantry.runtime.kafka.KafkaSecurity;
import io.gantry.runtime.kafka.KafkaTopics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import io.micronaut.core.annotation.Nullable;
import jakarta.annotation.PreDestroy;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Billing's Kafka Streams application ({@link MonthToDateTopology}): started with the service, closed with it, and
 * read through interactive queries on its totals store. Off with {@code gantry.billing.streams.enabled=false}.
 *
 * <p>A stream thread failure is logged and shuts the client down (state {@code ERROR}), which the health
 * indicator reports as DOWN; the ledger, invoices and budgets do not depend on it and go on.
 */
@Context
@Requires(property = "gantry.billing.streams.enabled", notEquals = "false")
public class MonthToDateStreams implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MonthToDateStreams.class);
    private static final long NEWEST_MONTH_TTL_NANOS = Duration.ofSeconds(1).toNanos();

    /** The month-to-date figures cannot be read now (starting, rebalancing, restoring, failed or closed). */
    public static final class NotQueryable extends RuntimeException {
        NotQueryable(String message) {
            super(message);
        }
    }

    /** Hears of counted entries, closed-month entries and each time the application (again) runs. */
    public interface Watcher extends MonthToDateTopology.Listener {
        default void running() {
        }
    }

    private record Newest(long atNanos, YearMonth month) {
    }

    private final MonthToDateSettings settings;
    private final KafkaSecurity security;
    private final Clock clock;
    private final KafkaStreams streams;
    private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
    private final Object lifecycle = new Object();
    private boolean closed;
    private volatile Throwable failure;
    private volatile Newest newest;

    public MonthToDateStreams(MonthToDateSettings settings, Clock clock) {
        this(settings, clock, KafkaSecurity.NONE);
    }

    @jakarta.inject.Inject
    public MonthToDateStreams(MonthToDateSettings settings, Clock clock, KafkaSecurity security) {
        this.settings = settings;
        this.security = security;
        this.clock = clock;
        this.streams = new KafkaStreams(MonthToDateTopology.build(settings.zone(), settings.openMonths(),
                new MonthToDateTopology.Listener() {
                    @Override
                    public void counted(String tenant) {
                        watchers.forEach(w -> w.counted(tenant));
                    }

                    @Override
                    public void closedMonth(String entryId, YearMonth month) {
                        watchers.forEach(w -> w.closedMonth(entryId, month));
                    }
                }), security.on(settings.streamsProperties()));
        streams.setUncaughtExceptionHandler(e -> {
            failure = e;
            LOG.error("month-to-date: Kafka Streams failed and stops (state ERROR, /health DOWN); the ledger, invoices"
                    + " and budgets are not affected", e);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            LOG.info("month-to-date: Kafka Streams {} -> {}", before, now);
            if (now == KafkaStreams.State.RUNNING) {
                watchers.forEach(Watcher::running);
            }
        });
        // creating the topics may wait for the broker: not on the thread that starts the service
        Thread starter = new Thread(this::start, "gantry-billing-streams-start");
        starter.setDaemon(true);
        starter.start();
    }

    private void start() {
        try {
            KafkaTopics.ensureAll(settings.bootstrap(), settings.partitions(), security);
            synchronized (lifecycle) {
                if (!closed) {
                    streams.start();
                    LOG.info("month-to-date: Kafka Streams application {} started (state in {})",
                            settings.applicationId(), settings.stateDir());
                }
            }
        } catch (RuntimeException e) {
            failure = e;
            LOG.error("month-to-date: Kafka Streams did not start", e);
        }
    }

    public void watch(Watcher watcher) {
        watchers.add(watcher);
        if (isRunning()) {
            watcher.running();
        }
    }

    public KafkaStreams.State state() {
        return streams.state();
    }

    public boolean isRunning() {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    /** What stopped the application, if anything did. */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    public MonthToDateSettings settings() {
        return settings;
    }

    /**
     * A month's totals, one row per (tenant, GPU model) ordered by tenant then model (CPU-only first); only
     * {@code tenant}'s when given.
     *
     * @throws NotQueryable when the application is not running
     */
    public List<UsageRow> rows(YearMonth month, @Nullable String tenant) {
        String prefix = tenant == null ? StoreKeys.monthPrefix(month) : StoreKeys.tenantPrefix(month, tenant);
        // keys sort by tenant, then model with CPU-only ("") first; a key met in two partitions' stores adds up
        Map<String, MonthToDate.Totals> merged = new TreeMap<>();
        try (KeyValueIterator<String, MonthToDate.Totals> it = totals().prefixScan(prefix, new StringSerializer())) {
            while (it.hasNext()) {
                KeyValue<String, MonthToDate.Totals> kv = it.next();
                merged.merge(kv.key, kv.value, MonthToDate.Totals::plus);
            }
        } catch (InvalidStateStoreException e) {
            throw new NotQueryable(e.getMessage());
        }
        List<UsageRow> rows = new ArrayList<>();
        merged.forEach((key, t) -> {
            String[] tenantAndModel = StoreKeys.tenantAndModel(key);
            rows.add(new UsageRow(tenantAndModel[0], tenantAndModel[1], t.gpuMillis(), t.entries(), t.gpuMicros()));
        });
        return rows;
    }

    /** The month "to date" means now ({@link MonthToDate#current}). */
    public BillingMonth currentMonth() {
        return MonthToDate.current(clock.instant(), settings.zone(), newestMonth());
    }

    /** Every tenant with totals in any month. */
    public Set<String> tenants() {
        Set<String> tenants = new TreeSet<>();
        scanKeys(key -> tenants.add(StoreKeys.tenantAndModel(key)[0]));
        return tenants;
    }

    /** The newest month with usage; looked up at most once a second (every gauge of a scrape asks). */
    private YearMonth newestMonth() {
        Newest cached = newest;
        long now = System.nanoTime();
        if (cached != null && now - cached.atNanos() < NEWEST_MONTH_TTL_NANOS) {
            return cached.month();
        }
        YearMonth[] max = {null};
        scanKeys(key -> {
            YearMonth m = StoreKeys.month(key);
            if (max[0] == null || m.isAfter(max[0])) {
                max[0] = m;
            }
        });
        newest = new Newest(now, max[0]);
        return max[0];
    }

    private void scanKeys(java.util.function.Consumer<String> onKey) {
        // one store per partition: their keys are not merged in order, so every key is looked at (a few per tenant
        // and month)
        try (KeyValueIterator<String, MonthToDate.Totals> it = totals().all()) {
            while (it.hasNext()) {
                onKey.accept(it.next().key);
            }
        } catch (InvalidStateStoreException e) {
            throw new NotQueryable(e.getMessage());
        }
    }

    private ReadOnlyKeyValueStore<String, MonthToDate.Totals> totals() {
        KafkaStreams.State state = streams.state();
        if (state != KafkaStreams.State.RUNNING) {
            throw new NotQueryable("the month-to-date aggregation is " + state);
        }
        try {
            // the active stores and the standby copies on this instance: every partition's, with two instances
            return streams.store(StoreQueryParameters.fromNameAndType(MonthToDateTopology.TOTALS_STORE,
                    QueryableStoreTypes.<String, MonthToDate.Totals>keyValueStore()).enableStaleStores());
        } catch (InvalidStateStoreException e) {
            throw new NotQueryable(e.getMessage());
        }
    }

    @PreDestroy
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
        }
        // the consumer leaves the group as it closes (see MonthToDateSettings), so the next instance takes over at once
        if (!streams.close(Duration.ofSeconds(30))) {
            LOG.warn("month-to-date: Kafka Streams did not close within 30 s");
        }
    }
}
