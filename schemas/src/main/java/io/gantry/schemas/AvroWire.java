package io.gantry.schemas;

import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.SchemaStore;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.avro.util.ClassSecurityValidator;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The wire format of every Gantry topic: Avro single-object encoding.
 *
 * <p>A value is {@code C3 01}, then the 8-byte little-endian CRC-64-AVRO fingerprint of the writer's schema
 * (Avro's parsing-canonical-form fingerprint), then the Avro binary body. Any consumer can decode it with the
 * published {@code .avsc} files alone: look the fingerprint up among the schemas it knows and read the body.
 * No schema registry is involved. Keys are plain UTF-8 strings.
 */
public final class AvroWire {
    /** Where the frozen releases are on the classpath: {@code released/v<N>/{common,events,topics}/*.avsc}. */
    static final String RELEASED = "released/";
    /**
     * Lists every frozen file, relative to {@link #RELEASED}, in the order its version is parsed in (a type before the
     * files that use it). Generated from the frozen directories; the schemas tests fail while it is out of date.
     */
    static final String RELEASED_INDEX = RELEASED + "index.txt";

    /**
     * Writer schemas this process can decode: the envelopes of every frozen release (registered when this class
     * loads) and the current ones (as their serdes are made). A record written with an older envelope is resolved
     * against the current generated class, fields added since taking their defaults.
     */
    public static final SchemaStore.Cache SCHEMAS = new SchemaStore.Cache();

    private static final Map<Class<?>, Serde<?>> SERDES = new ConcurrentHashMap<>();

    static {
        // Avro 1.12.1+ refuses to instantiate generated classes from packages it has not been told to trust.
        ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(ClassSecurityValidator.getGlobal(),
                new ClassSecurityValidator.ClassSecurityPredicate() {
                    @Override
                    public boolean isTrusted(Class<?> c) {
                        return c.getName().startsWith("io.gantry.events.");
                    }
                }));
        releasedEnvelopes().forEach(SCHEMAS::addSchema);
    }

    private AvroWire() {
    }

    /**
     * Makes sure Avro trusts the generated classes (done once, when this class loads): copying an event with its
     * generated builder ({@code TaskSpec.newBuilder(other)}) needs it as much as decoding does. {@link Topics} calls
     * it, so any code that names a topic has it, with or without the {@code SERIALIZABLE_PACKAGES} property.
     */
    public static void trustGeneratedClasses() {
        // the static initializer above did it
    }

    /**
     * The value schemas of the frozen releases, as their writers had them. Each version is parsed with its own named
     * types (a name means there what it meant in that release), file by file in the order the index lists them; the
     * envelopes are the files under {@code topics/}. About a hundred small files per release, read once from the jar,
     * no directory listing. A missing or broken file stops the class from loading: a service that could not read its
     * topics' older records would dead-letter its own history.
     */
    static List<Schema> releasedEnvelopes() {
        Map<String, Schema.Parser> parsers = new HashMap<>();
        List<Schema> envelopes = new ArrayList<>();
        for (String line : read(RELEASED_INDEX).split("\n")) {
            String file = line.strip();
            if (file.isEmpty() || file.startsWith("#")) {
                continue;
            }
            String[] parts = file.split("/");
            if (parts.length != 3 || !parts[2].endsWith(".avsc")) {
                throw new IllegalStateException(RELEASED_INDEX + ": " + file + " is not v<N>/<dir>/<Name>.avsc");
            }
            String text = read(RELEASED + file);
            Schema schema;
            try {
                schema = parsers.computeIfAbsent(parts[0], version -> new Schema.Parser()).parse(text);
            } catch (AvroRuntimeException e) {
                throw new IllegalStateException("cannot parse the frozen schema " + RELEASED + file
                        + " (listed before a file it uses?)", e);
            }
            if (parts[1].equals("topics")) {
                envelopes.add(schema);
            }
        }
        return envelopes;
    }

    private static String read(String resource) {
        try (InputStream in = AvroWire.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the classpath: the schemas jar ships it");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + resource, e);
        }
    }

    /** The Kafka serde for a topic's values. */
    @SuppressWarnings("unchecked")
    public static <V> Serde<V> serde(Topic<V> topic) {
        if (topic.valueType() == byte[].class) {
            return (Serde<V>) Serdes.ByteArray();
        }
        return (Serde<V>) SERDES.computeIfAbsent(topic.valueType(), c -> specificSerde((Class) c));
    }

    private static <T extends SpecificRecord> Serde<T> specificSerde(Class<T> type) {
        SpecificData model = SpecificData.getForClass(type);
        Schema schema = model.getSchema(type);
        SCHEMAS.addSchema(schema);
        BinaryMessageEncoder<T> encoder = new BinaryMessageEncoder<>(model, schema);
        BinaryMessageDecoder<T> decoder = new BinaryMessageDecoder<>(model, schema, SCHEMAS);
        Serializer<T> serializer = (topic, value) -> {
            if (value == null) {
                return null;
            }
            try {
                ByteBuffer buffer = encoder.encode(value);
                byte[] out = new byte[buffer.remaining()];
                buffer.get(out);
                return out;
            } catch (IOException e) {
                throw new SerializationException("cannot encode " + type.getSimpleName(), e);
            }
        };
        Deserializer<T> deserializer = (topic, bytes) -> {
            if (bytes == null) {
                return null;
            }
            try {
                return decoder.decode(bytes);
            } catch (IOException | RuntimeException e) {
                throw new SerializationException("cannot decode " + type.getSimpleName() + " from " + topic, e);
            }
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }

    public static <V> byte[] encode(Topic<V> topic, V value) {
        return serde(topic).serializer().serialize(topic.name(), value);
    }

    public static <V> V decode(Topic<V> topic, byte[] bytes) {
        return serde(topic).deserializer().deserialize(topic.name(), bytes);
    }
}
