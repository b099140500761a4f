/**
 * The contracts between Gantry services: the typed topic registry ({@link io.gantry.schemas.Topics}), the
 * services that own the topics, and the wire format ({@link io.gantry.schemas.AvroWire}). The Avro records
 * themselves are generated into {@code io.gantry.events} from {@code src/main/avro} at build time.
 */
package io.gantry.schemas;
