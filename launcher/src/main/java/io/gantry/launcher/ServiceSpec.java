package io.gantry.launcher;

import java.util.Map;

/**
 * One Gantry service as the launcher runs it: a child JVM over the service's Maven-built jar.
 *
 * @param name       service name (admission, queue, placement, recovery, billing)
 * @param instance   which of the service's processes (0 for the first; its id in the consumer groups)
 * @param port       its HTTP port on 127.0.0.1
 * @param database   its own PostgreSQL database, or null when it keeps no tables
 * @param properties extra Micronaut properties, passed as -D system properties
 */
public record ServiceSpec(String name, int instance, int port, String database, Map<String, String> properties) {
}
