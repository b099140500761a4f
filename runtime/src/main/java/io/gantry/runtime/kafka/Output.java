package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;

/** Where a handler puts the records it produces; they are sent in the same transaction as the input offsets. */
public interface Output {
    <V> void send(Topic<V> topic, String key, V value);
}
