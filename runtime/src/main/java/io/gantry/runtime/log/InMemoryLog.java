package io.gantry.runtime.log;

import io.gantry.schemas.Topic;

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
 */
public final class InMemoryLog {
    /** One record of a topic. */
    public record Entry(String topic, long offset, long sequence, String key, Object value, Instant appendedAt,
                        Map<String, String> headers) {
    }

    private final Map<String, List<Entry>> topics = new HashMap<>();
    private long sequence;

    public synchronized <V> Entry append(Topic<V> topic, String key, V value, Instant at) {
        return append(topic.name(), key, value, at, Map.of());
    }

    synchronized Entry append(String topic, String key, Object value, Instant at, Map<String, String> headers) {
        Objects.requireNonNull(topic, "topic");
        List<Entry> records = topics.computeIfAbsent(topic, t -> new ArrayList<>());
        Entry e = new Entry(topic, records.size(), sequence++, key, value, at, Map.copyOf(headers));
        records.add(e);
        return e;
    }

    /** The records of {@code topic} from {@code offset} on. */
    public synchronized List<Entry> from(String topic, long offset) {
        List<Entry> records = topics.getOrDefault(topic, List.of());
        return offset >= records.size() ? List.of() : List.copyOf(records.subList((int) offset, records.size()));
    }

    /** The offset the next record of {@code topic} will get. */
    public synchronized long end(String topic) {
        return topics.getOrDefault(topic, List.of()).size();
    }

    /** Every value on {@code topic}, in order. */
    @SuppressWarnings("unchecked")
    public synchronized <V> List<V> values(Topic<V> topic) {
        return from(topic.name(), 0).stream().map(e -> (V) e.value()).toList();
    }

    public synchronized List<Entry> entries(String topic) {
        return from(topic, 0);
    }
}
