package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The records of a handler's restore topics that still make up its state, for its snapshots: a history compacted by
 * the handler's own rules. Each piece of state (a node, a live run, a job's checkpoints) is a slot holding the
 * records that rebuild it; the handler puts, appends and removes them as it restores, handles and publishes, and
 * {@link #writeTo} gives them back in the order they were kept, which is their order in the history.
 */
public final class SnapshotRecords {
    private record Kept(long seq, Topic<?> topic, String key, Object value) {
    }

    private final Map<String, List<Kept>> slots = new HashMap<>();
    private long seq;

    /** The slot holds this record alone from now on. */
    public <V> void put(String slot, Topic<V> topic, String key, V value) {
        List<Kept> records = new ArrayList<>(1);
        records.add(new Kept(seq++, topic, key, value));
        slots.put(slot, records);
    }

    /** The record joins the slot's records, after them. */
    public <V> void append(String slot, Topic<V> topic, String key, V value) {
        slots.computeIfAbsent(slot, s -> new ArrayList<>(2)).add(new Kept(seq++, topic, key, value));
    }

    public boolean has(String slot) {
        return slots.containsKey(slot);
    }

    /** The slot's values, in the order kept (empty when there is no such slot). */
    public List<Object> values(String slot) {
        List<Kept> records = slots.get(slot);
        return records == null ? List.of() : records.stream().map(Kept::value).toList();
    }

    /** Drops the slot's records whose value matches; the slot goes when none is left. */
    public void removeIf(String slot, Predicate<Object> value) {
        List<Kept> records = slots.get(slot);
        if (records != null && records.removeIf(k -> value.test(k.value())) && records.isEmpty()) {
            slots.remove(slot);
        }
    }

    public void remove(String slot) {
        slots.remove(slot);
    }

    /** How many records are kept. */
    public long size() {
        return slots.values().stream().mapToLong(List::size).sum();
    }

    /**
     * Every record kept, slot by slot in the order of their names (each slot's records in the order kept), skipping
     * records already in {@code written} by identity (and adding the others to it): for state whose slots commute,
     * held by several handlers that may each keep the same record (placement's pools), so two equal states write the
     * same snapshot whatever order their records came in, and a shared record is written once.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void writeBySlot(SnapshotWriter out, java.util.Set<Object> written) {
        for (List<Kept> records : new java.util.TreeMap<>(slots).values()) {
            for (Kept k : records) {
                if (written.add(new Identity(k.value()))) {
                    out.add((Topic) k.topic(), k.key(), k.value());
                }
            }
        }
    }

    /** A record by identity. */
    private record Identity(Object value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Identity other && other.value == value;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(value);
        }
    }

    /** Every record kept, in the order kept. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void writeTo(SnapshotWriter out) {
        List<Kept> all = new ArrayList<>();
        slots.values().forEach(all::addAll);
        all.sort(Comparator.comparingLong(Kept::seq));
        for (Kept k : all) {
            out.add((Topic) k.topic(), k.key(), k.value());
        }
    }
}
