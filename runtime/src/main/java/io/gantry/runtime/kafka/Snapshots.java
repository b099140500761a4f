package io.gantry.runtime.kafka;

import io.gantry.events.SnapshotEntry;
import io.gantry.events.StateSnapshot;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Snapshots of a service's state on its {@code <service>.snapshots} topic (see {@link EventHandler#snapshot}): the
 * parts a snapshot is written as, and finding the newest whole snapshot of a format at a start.
 *
 * <p>A snapshot's parts are written in one transaction, in order, so only a whole snapshot is ever visible to a
 * read-committed reader; the last part carries the positions. (The units of a split service each write their own
 * snapshots, keyed and formatted by unit, to the same partition, so their parts may interleave.) The topic is
 * compacted by part key: a later snapshot replaces an earlier one's parts.
 */
final class Snapshots {
    /** Entries per part up to about this many bytes (the broker's default record limit is 1 MiB). */
    static final int PART_BYTES = 512 * 1024;
    /** The newest snapshot is searched for in the last records of the topic, in windows growing from this. */
    private static final int FIRST_WINDOW = 16;

    private Snapshots() {
    }

    /** A snapshot read back: its records to restore and where each restore topic partition continues. */
    record Found(String snapshotId, Instant takenAt, List<SnapshotEntry> entries, Map<TopicPartition, Long> positions) {
    }

    /** Collects a handler's records (only of the given restore topics) into the parts of one snapshot. */
    static final class Collector implements SnapshotWriter {
        private final Set<String> restoreTopics;
        private final Topic<?> memory;
        private final List<List<SnapshotEntry>> parts = new ArrayList<>(List.of(new ArrayList<>()));
        private int partBytes;
        private long records;

        /**
         * Records of {@code restoreTopics}, and of the service's {@code memory} binding when it has one
         * ({@link io.gantry.schemas.Topics#snapshotMemory}: state no restore topic holds).
         */
        Collector(Set<String> restoreTopics, Topic<?> memory) {
            this.restoreTopics = restoreTopics;
            this.memory = memory;
        }

        @Override
        public <V> void add(Topic<V> topic, String key, V value) {
            if (!restoreTopics.contains(topic.name()) && !topic.equals(memory)) {
                throw new IllegalArgumentException("a snapshot holds records of the restore topics only, not " + topic);
            }
            byte[] bytes = AvroWire.encode(topic, value);
            int size = bytes.length + key.length() + topic.name().length() + 16;
            if (partBytes > 0 && partBytes + size > PART_BYTES) {
                parts.add(new ArrayList<>());
                partBytes = 0;
            }
            parts.get(parts.size() - 1).add(new SnapshotEntry(topic.name(), key, ByteBuffer.wrap(bytes)));
            partBytes += size;
            records++;
        }

        long records() {
            return records;
        }

        /** The parts to write, in order; the last carries the positions. */
        List<StateSnapshot> parts(String format, Instant takenAt, Map<TopicPartition, Long> positions) {
            String id = UUID.randomUUID().toString();
            Map<String, Long> named = new HashMap<>();
            positions.forEach((tp, offset) -> named.put(name(tp), offset));
            List<StateSnapshot> out = new ArrayList<>(parts.size());
            for (int i = 0; i < parts.size(); i++) {
                boolean last = i == parts.size() - 1;
                out.add(StateSnapshot.newBuilder().setSnapshotId(id).setFormat(format).setPart(i)
                        .setParts(parts.size()).setTakenAt(takenAt).setPositions(last ? named : Map.of())
                        .setEntries(parts.get(i)).build());
            }
            return out;
        }
    }

    static String name(TopicPartition tp) {
        return tp.topic() + ":" + tp.partition();
    }

    /** A part's key: one per part number, prefixed by the unit's name in a service split into units. */
    static String key(String unit, StateSnapshot part) {
        return (unit == null ? "" : unit + "/") + "part-" + part.getPart();
    }

    /**
     * The newest whole snapshot of {@code format} on the topic (partition 0), or null when there is none (or its
     * parts are not all there any more): then the caller replays the whole history.
     */
    static Found readNewest(KafkaConsumer<String, byte[]> reader, Topic<StateSnapshot> topic, String format) {
        TopicPartition tp = new TopicPartition(topic.name(), 0);
        reader.assign(List.of(tp));
        long begin = reader.beginningOffsets(List.of(tp)).get(tp);
        long end = reader.endOffsets(List.of(tp)).get(tp);
        long to = end;
        long window = FIRST_WINDOW;
        while (to > begin) {
            long from = Math.max(begin, to - window);
            ConsumerRecord<String, byte[]> last = null;
            StateSnapshot lastValue = null;
            for (ConsumerRecord<String, byte[]> r : read(reader, tp, from, to)) {
                StateSnapshot s = decode(topic, r);
                if (s != null && s.getPart() == s.getParts() - 1 && format.equals(s.getFormat())) {
                    last = r;
                    lastValue = s;
                }
            }
            if (last != null) {
                return whole(reader, topic, tp, last.offset(), lastValue);
            }
            to = from;
            window *= 4;
        }
        return null;
    }

    private static Found whole(KafkaConsumer<String, byte[]> reader, Topic<StateSnapshot> topic, TopicPartition tp,
                               long lastOffset, StateSnapshot last) {
        // the parts are consecutive among this writer's records; the units of a split service write to the same
        // partition, so another unit's records may sit between them: read back until every part is found
        long begin = reader.beginningOffsets(List.of(tp)).get(tp);
        StateSnapshot[] parts = new StateSnapshot[last.getParts()];
        long window = Math.max(FIRST_WINDOW, 2L * last.getParts());
        long to = lastOffset + 1;
        int found = 0;
        while (found < parts.length && to > begin) {
            long from = Math.max(begin, to - window);
            for (ConsumerRecord<String, byte[]> r : read(reader, tp, from, to)) {
                StateSnapshot s = decode(topic, r);
                if (s != null && s.getSnapshotId().equals(last.getSnapshotId()) && s.getPart() < parts.length
                        && parts[s.getPart()] == null) {
                    parts[s.getPart()] = s;
                    found++;
                }
            }
            to = from;
            window *= 4;
        }
        if (found != parts.length) {
            return null;
        }
        List<SnapshotEntry> entries = new ArrayList<>();
        for (StateSnapshot part : parts) {
            entries.addAll(part.getEntries());
        }
        Map<TopicPartition, Long> positions = new HashMap<>();
        last.getPositions().forEach((name, offset) -> {
            int colon = name.lastIndexOf(':');
            positions.put(new TopicPartition(name.substring(0, colon), Integer.parseInt(name.substring(colon + 1))),
                    offset);
        });
        return new Found(last.getSnapshotId(), last.getTakenAt(), entries, positions);
    }

    /** The committed records of {@code tp} at offsets from {@code from} up to (not including) {@code to}. */
    private static List<ConsumerRecord<String, byte[]>> read(KafkaConsumer<String, byte[]> reader, TopicPartition tp,
                                                             long from, long to) {
        reader.seek(tp, from);
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (reader.position(tp) < to) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("could not read " + tp + " from " + from + " to " + to + " in 60 s");
            }
            for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200)).records(tp)) {
                if (r.offset() < to) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    private static StateSnapshot decode(Topic<StateSnapshot> topic, ConsumerRecord<String, byte[]> r) {
        try {
            return AvroWire.decode(topic, r.value());
        } catch (RuntimeException e) {
            return null; // not ours to read (another build's format): not a snapshot for this reader
        }
    }
}
