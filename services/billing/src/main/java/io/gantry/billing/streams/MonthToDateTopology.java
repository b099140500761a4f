package io.gantry.billing.streams;

import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

import java.time.YearMonth;
import java.time.ZoneId;
import java.util.Map;

/**
 * Month-to-date GPU time per (tenant, month, GPU model) from {@code billing.usage-events}.
 *
 * <pre>
 *   billing.usage-events ──▶ billing-month-to-date ──▶ billing.dead-letter (undecodable or impossible records)
 *     (key tenant)             │ stores: billing-month-to-date-totals  (month, tenant, model) → GPU-µs, entries
 *                              │         billing-month-to-date-seen    (month ended, entryId)  → seen
 *                              └ both in memory, each with a compacted changelog topic
 *                                &lt;application.id&gt;-&lt;store&gt;-changelog that rebuilds it after a restart
 * </pre>
 *
 * <p>One processor with both stores, not a DSL {@code groupBy().aggregate()}: an entry is cut into calendar months
 * of the billing time zone (not fixed-size windows of record time), counted only if its id was not seen, and the
 * store key changes without a repartition topic, because the input is already keyed (partitioned) by tenant. Store
 * and topic names are fixed here, so an upgrade never renames a changelog.
 */
public final class MonthToDateTopology {
    public static final String SOURCE = "billing-usage-events";
    public static final String PROCESSOR = "billing-month-to-date";
    public static final String DEAD_LETTER = "billing-month-to-date-dead-letter";
    public static final String TOTALS_STORE = "billing-month-to-date-totals";
    public static final String SEEN_STORE = "billing-month-to-date-seen";

    /** What the aggregation tells its host (metrics), on the stream thread: keep it quick. */
    public interface Listener {
        Listener NONE = new Listener() {
        };

        /** An entry of this tenant was counted. */
        default void counted(String tenant) {
        }

        /** An entry ended in a month already closed: not counted (the ledger and invoices still have it). */
        default void closedMonth(String entryId, YearMonth month) {
        }
    }

    private MonthToDateTopology() {
    }

    /** The changelog topic of a store, as Kafka Streams names it. */
    public static String changelog(String applicationId, String store) {
        return applicationId + "-" + store + "-changelog";
    }

    /**
     * @param zone       the billing time zone: months are its calendar months
     * @param openMonths how many months before the newest one still count late entries and recognise duplicates
     */
    public static Topology build(ZoneId zone, int openMonths, Listener listener) {
        Topology topology = new Topology();
        topology.addSource(SOURCE, new StringDeserializer(), new ByteArrayDeserializer(),
                Topics.BILLING_USAGE_EVENTS.name());
        topology.addProcessor(PROCESSOR, () -> new MonthToDateProcessor(zone, openMonths, listener), SOURCE);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(TOTALS_STORE),
                Serdes.String(), new TotalsSerde()).withLoggingEnabled(Map.of()), PROCESSOR);
        topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(SEEN_STORE),
                Serdes.String(), Serdes.ByteArray()).withLoggingEnabled(Map.of()), PROCESSOR);
        topology.addSink(DEAD_LETTER, Topics.deadLetter(Service.BILLING).name(), new StringSerializer(),
                new ByteArraySerializer(), PROCESSOR);
        return topology;
    }
}
