package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;

/** Where a handler writes its state for a snapshot: records of its restore topics, in the order to restore them. */
public interface SnapshotWriter {
    <V> void add(Topic<V> topic, String key, V value);
}
