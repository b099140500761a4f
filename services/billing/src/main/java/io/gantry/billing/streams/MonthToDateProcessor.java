package io.gantry.billing.streams;

import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.MonthToDate;
import io.gantry.events.UsageEvent;
import io.gantry.events.UsageRecorded;
import io.gantry.runtime.http.Ids;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.YearMonth;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Adds each new {@code UsageRecorded} to its months' totals (the arithmetic is {@link MonthToDate}'s). A record is
 * decoded and checked before any store is touched; one that fails goes to {@code billing.dead-letter} with the
 * headers billing's event loop uses. Under exactly-once the store changes, their changelog records, the dead
 * letters and the input offset commit together, so a crash never counts a record twice; the set of seen entry ids
 * covers the other way a record comes twice: published twice by billing (its loop is at-least-once).
 */
final class MonthToDateProcessor implements Processor<String, byte[], String, byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(MonthToDateProcessor.class);
    private static final byte[] SEEN = new byte[0];

    private final ZoneId zone;
    private final int openMonths;
    private final MonthToDateTopology.Listener listener;
    private ProcessorContext<String, byte[]> context;
    private KeyValueStore<String, MonthToDate.Totals> totals;
    private KeyValueStore<String, byte[]> seen;
    /** The newest month an entry of this task ended in; with the store, after its restore (init runs then). */
    private YearMonth newest;

    MonthToDateProcessor(ZoneId zone, int openMonths, MonthToDateTopology.Listener listener) {
        this.zone = zone;
        this.openMonths = openMonths;
        this.listener = listener;
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.context = context;
        this.totals = context.getStateStore(MonthToDateTopology.TOTALS_STORE);
        this.seen = context.getStateStore(MonthToDateTopology.SEEN_STORE);
        try (KeyValueIterator<String, byte[]> last = seen.reverseAll()) {
            newest = last.hasNext() ? StoreKeys.month(last.next().key) : null;
        }
    }

    @Override
    public void process(Record<String, byte[]> record) {
        LedgerEntry entry;
        try {
            entry = decode(record);
        } catch (RuntimeException e) {
            deadLetter(record, e);
            return;
        }
        YearMonth month = MonthToDate.dedupMonth(entry, zone);
        if (newest != null && month.isBefore(MonthToDate.firstOpenMonth(newest, openMonths))) {
            listener.closedMonth(entry.entryId(), month);
            return;
        }
        String seenKey = StoreKeys.seen(month, entry.entryId());
        if (seen.get(seenKey) != null) {
            return;
        }
        for (MonthToDate.Part part : MonthToDate.split(entry, zone)) {
            String key = StoreKeys.totals(part.month().month(), entry.tenant(), entry.gpuModel());
            MonthToDate.Totals before = totals.get(key);
            totals.put(key, (before == null ? MonthToDate.Totals.NONE : before).plus(part));
        }
        seen.put(seenKey, SEEN);
        if (newest == null || month.isAfter(newest)) {
            newest = month;
            forgetClosedMonths(MonthToDate.firstOpenMonth(newest, openMonths));
        }
        listener.counted(entry.tenant());
    }

    private LedgerEntry decode(Record<String, byte[]> record) {
        if (record.value() == null) {
            throw new IllegalArgumentException("value: missing");
        }
        UsageEvent event = AvroWire.decode(Topics.BILLING_USAGE_EVENTS, record.value());
        if (!(event.getPayload() instanceof UsageRecorded u)) {
            throw new IllegalArgumentException("payload: not UsageRecorded");
        }
        if (!Ids.plausible(u.getTenant())) {
            throw new IllegalArgumentException("tenant: must be " + Ids.RULE);
        }
        if (!u.getTenant().equals(record.key())) {
            // the key decides the partition, and so the task whose seen set recognises a duplicate
            throw new IllegalArgumentException("key: must be the tenant " + u.getTenant());
        }
        return MonthToDate.announced(u.getEntryId(), u.getTenant(), u.getJobId(), u.getAttempt(), u.getAllocationId(),
                u.getNodeId(), u.getGpuModel(), u.getGpuCount(), u.getStartedAt(), u.getEndedAt(),
                u.getDurationMillis(), u.getGpuMillis());
    }

    /** Closed months' seen ids go (their totals stay readable): the set is a few months of entries at most. */
    private void forgetClosedMonths(YearMonth firstOpen) {
        String end = StoreKeys.monthPrefix(firstOpen);
        List<String> closed = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = seen.all()) {
            while (it.hasNext()) {
                String key = it.next().key;
                if (key.compareTo(end) >= 0) {
                    break;
                }
                closed.add(key);
            }
        }
        closed.forEach(seen::delete);
        if (!closed.isEmpty()) {
            LOG.info("month-to-date: months before {} closed; forgot {} seen entries", firstOpen, closed.size());
        }
    }

    private void deadLetter(Record<String, byte[]> record, RuntimeException e) {
        LOG.warn("month-to-date: record to {}: {}", Topics.deadLetter(io.gantry.schemas.Service.BILLING), e.toString());
        Headers headers = new RecordHeaders(record.headers().toArray());
        Optional<RecordMetadata> source = context.recordMetadata();
        source.ifPresent(m -> {
            headers.add("gantry.source.topic", bytes(m.topic()));
            headers.add("gantry.source.partition", bytes(Integer.toString(m.partition())));
            headers.add("gantry.source.offset", bytes(Long.toString(m.offset())));
        });
        headers.add("gantry.error", bytes(e.toString()));
        context.forward(new Record<>(record.key(), record.value(), record.timestamp(), headers),
                MonthToDateTopology.DEAD_LETTER);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
