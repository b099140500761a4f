package io.gantry.runtime.log;

import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Topics as append-only lists of records, each with its offset, its key, its value (an Avro object, or raw bytes on
 * a dead-letter topic), the time it was appended and a sequence number across all topics (the order records were
 * written in, which is the order a consumer of several topics sees them).
 *
 * <p>Records older than their topic's retention ({@link Topic#retentionMs}, e.g. an hour of heartbeats) are
 * dropped as the broker would drop them, measured against the newest append time; offsets keep counting, and a
 * reader behind the retained start reads from there.
 */
public final class InMemoryLog {
    /** One record of a topic. */
    public record Entry(String topic, long offset, long sequence, String key, Object value, Instant appendedAt,
                        Map<String, String> headers) {
    }

    private static final Map<String, Long> RETENTION = new HashMap<>();

    static {
        for (Topic<?> t : Topics.all()) {
            if (t.retentionMs() > 0) {
                RETENTION.put(t.name(), t.retentionMs());
            }
        }
    }

    /** One topic: the retained records and the offset of the first of them. */
    private static final class Records {
        final long retentionMs;
        final ArrayList<Entry> entries = new ArrayList<>();
        long base;
        /** How many of the first entries are known to be past retention (dropped in chunks). */
        int expired;

        Records(long retentionMs) {
            this.retentionMs = retentionMs;
        }

        long end() {
            return base + entries.size();
        }

        /** Drops what fell out of retention, in chunks (a prefix removal copies the rest). */
        void expire(Instant newest) {
            if (retentionMs <= 0) {
                return;
            }
            long cutoff = newest.toEpochMilli() - retentionMs;
            while (expired < entries.size() && entries.get(expired).appendedAt().toEpochMilli() < cutoff) {
                expired++;
            }
            if (expired > 0 && expired >= entries.size() / 2) {
                entries.subList(0, expired).clear();
                base += expired;
                expired = 0;
            }
        }
    }

    private final Map<String, Records> topics = new HashMap<>();
    private long sequence;

    public synchronized <V> Entry append(Topic<V> topic, String key, V value, Instant at) {
        return append(topic.name(), key, value, at, Map.of());
    }

    synchronized Entry append(String topic, String key, Object value, Instant at, Map<String, String> headers) {
        Objects.requireNonNull(topic, "topic");
        Records records = records(topic);
        Entry e = new Entry(topic, records.end(), sequence++, key, value, at, Map.copyOf(headers));
        records.entries.add(e);
        records.expire(at);
        return e;
    }

    private Records records(String topic) {
        return topics.computeIfAbsent(topic, t -> new Records(RETENTION.getOrDefault(t, 0L)));
    }

    /** The retained records of {@code topic} from {@code offset} on. */
    public synchronized List<Entry> from(String topic, long offset) {
        Records records = topics.get(topic);
        if (records == null || offset >= records.end()) {
            return List.of();
        }
        int from = (int) Math.max(0, offset - records.base);
        return List.copyOf(records.entries.subList(from, records.entries.size()));
    }

    /** The offset the next record of {@code topic} will get. */
    public synchronized long end(String topic) {
        Records records = topics.get(topic);
        return records == null ? 0 : records.end();
    }

    /** Every retained value on {@code topic}, in order. */
    @SuppressWarnings("unchecked")
    public synchronized <V> List<V> values(Topic<V> topic) {
        return from(topic.name(), 0).stream().map(e -> (V) e.value()).toList();
    }

    public synchronized List<Entry> entries(String topic) {
        return from(topic, 0);
    }
}
