package io.gantry.billing.streams;

import io.gantry.billing.core.MonthToDate;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

import java.nio.ByteBuffer;

/**
 * The totals store's values, as they go to its changelog: a format byte (1), then GPU-microseconds and entries as
 * two big-endian longs. Internal to billing (only its own Streams app reads the changelog), so not an Avro contract.
 */
final class TotalsSerde implements Serde<MonthToDate.Totals> {
    private static final byte FORMAT = 1;
    private static final int SIZE = 1 + 2 * Long.BYTES;

    @Override
    public Serializer<MonthToDate.Totals> serializer() {
        return (topic, t) -> t == null ? null
                : ByteBuffer.allocate(SIZE).put(FORMAT).putLong(t.gpuMicros()).putLong(t.entries()).array();
    }

    @Override
    public Deserializer<MonthToDate.Totals> deserializer() {
        return (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            if (bytes.length != SIZE || bytes[0] != FORMAT) {
                throw new SerializationException("not month-to-date totals (format " + FORMAT + ") in " + topic);
            }
            ByteBuffer b = ByteBuffer.wrap(bytes, 1, SIZE - 1);
            return new MonthToDate.Totals(b.getLong(), b.getLong());
        };
    }
}
