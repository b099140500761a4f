/**
 * The services' event loops without Kafka: an in-memory log of topics and a driver that runs the same
 * {@link io.gantry.runtime.kafka.EventHandler}s production runs, in virtual time.
 *
 * <p>It keeps the promises the handlers rely on in production: state is rebuilt from the restore topics at every
 * (re)start, a batch's outputs and its input offsets commit together (a crash before the commit leaves no trace),
 * a record whose handling throws goes to the service's dead-letter topic and the loop goes on, and the handler
 * hears once per start when it has caught up with its inputs. Records are Avro objects passed as they are, or, on
 * request, encoded and decoded as on the wire.
 *
 * <p>It is for the simulator, for fast scenario tests and for what-if replays; it is not a Kafka emulation (one
 * partition per topic, no consumer groups, no retention).
 */
package io.gantry.runtime.log;
