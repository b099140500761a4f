package io.gantry.placement.kafka;

import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.schemas.Topic;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The records of placement's restore topics that still make up a pool's state, for snapshots: like the runtime's
 * {@code SnapshotRecords}, slots of records, but written slot by slot in the order of their names (each slot's records
 * in the order kept). Placement's slots do not depend on each other's order (a node's registration and its health
 * commute, each job's records are in one slot), and some records reach every pool (node health, dispatches): in slot
 * order, a record every pool keeps is written once and two restores that kept the same records write the same
 * snapshot, whatever order the pools saw them in.
 */
final class KeptRecords {
    private record Kept(Topic<?> topic, String key, Object value) {
    }

    /** By slot name; sorted only when a snapshot is written (a restore touches a slot per record read). */
    private final java.util.HashMap<String, List<Kept>> slots = new java.util.HashMap<>();
    private long size;

    /** The slot holds this record alone from now on. */
    <V> void put(String slot, Topic<V> topic, String key, V value) {
        List<Kept> records = new ArrayList<>(1);
        records.add(new Kept(topic, key, value));
        List<Kept> old = slots.put(slot, records);
        size += 1 - (old == null ? 0 : old.size());
    }

    /** The record joins the slot's records, after them. */
    <V> void append(String slot, Topic<V> topic, String key, V value) {
        slots.computeIfAbsent(slot, s -> new ArrayList<>(2)).add(new Kept(topic, key, value));
        size++;
    }

    /** The slot's values, in the order kept (empty when there is no such slot). */
    List<Object> values(String slot) {
        List<Kept> records = slots.get(slot);
        return records == null ? List.of() : records.stream().map(Kept::value).toList();
    }

    /** Drops the slot's records whose value matches; the slot goes when none is left. */
    void removeIf(String slot, Predicate<Object> value) {
        List<Kept> records = slots.get(slot);
        if (records == null) {
            return;
        }
        int before = records.size();
        records.removeIf(k -> value.test(k.value()));
        size -= before - records.size();
        if (records.isEmpty()) {
            slots.remove(slot);
        }
    }

    void remove(String slot) {
        List<Kept> old = slots.remove(slot);
        size -= old == null ? 0 : old.size();
    }

    /** How many records are kept. */
    long size() {
        return size;
    }

    /** Every record kept, slot by slot, skipping those in {@code written} (and adding the others to it). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void writeTo(SnapshotWriter out, Set<Object> written) {
        for (List<Kept> records : new TreeMap<>(slots).values()) {
            for (Kept k : records) {
                if (written.add(new Identity(k.value()))) {
                    out.add((Topic) k.topic(), k.key(), k.value());
                }
            }
        }
    }

    /** A record by identity: the same record reaching several pools is written once. */
    record Identity(Object value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Identity other && other.value == value;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(value);
        }
    }
}
