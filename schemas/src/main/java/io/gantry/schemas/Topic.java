package io.gantry.schemas;

import java.util.Objects;

/**
 * A Kafka topic with its one writer, what its record key is, and the type of its values.
 *
 * @param name      topic name, {@code <owner>.<entity>-events}
 * @param owner     the only service that writes it
 * @param key       what the record key holds (e.g. {@code jobId})
 * @param valueType the Avro envelope class of the values ({@code byte[]} for dead-letter topics)
 * @param retentionMs how long the broker keeps records: -1 (forever) for topics that are a system of record
 * @param compacted   whether the broker keeps only the newest record per key ({@code cleanup.policy=compact}): for
 *                    topics whose every record is its key's whole current state
 */
public record Topic<V>(String name, Service owner, String key, Class<V> valueType, long retentionMs,
                       boolean compacted) {
    /** Unlimited retention: topics services rebuild their state from. */
    public static final long FOREVER = -1;

    public Topic(String name, Service owner, String key, Class<V> valueType) {
        this(name, owner, key, valueType, FOREVER);
    }

    public Topic(String name, Service owner, String key, Class<V> valueType, long retentionMs) {
        this(name, owner, key, valueType, retentionMs, false);
    }

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
