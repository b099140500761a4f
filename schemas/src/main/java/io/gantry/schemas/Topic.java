package io.gantry.schemas;

import java.util.Objects;

/**
 * A Kafka topic with its one writer, what its record key is, and the type of its values.
 *
 * @param name      topic name, {@code <owner>.<entity>-events}
 * @param owner     the only service that writes it
 * @param key       what the record key holds (e.g. {@code jobId})
 * @param valueType the Avro envelope class of the values ({@code byte[]} for dead-letter topics)
 */
public record Topic<V>(String name, Service owner, String key, Class<V> valueType) {
    public Topic {
        Objects.requireNonNull(name);
        Objects.requireNonNull(owner);
        Objects.requireNonNull(key);
        Objects.requireNonNull(valueType);
        if (!name.startsWith(owner.id() + ".")) {
            throw new IllegalArgumentException("topic " + name + " must be named after its owner " + owner.id());
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
