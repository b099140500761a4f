package io.gantry.testkit;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The settings of one instance of a service among several in a test (a split service's units spread over them): its
 * broker, HTTP port, tokens, static instance id, a short session timeout (a stopped instance's work moves on within
 * seconds) and a snapshot after every record (a takeover restores from one).
 */
public final class InstanceProperties {
    private InstanceProperties() {
    }

    /** A free loopback port for each instance id, into {@code ports} (each was bound and let go: nothing listens yet). */
    public static void freePorts(Map<String, Integer> ports, String... ids) {
        for (String id : ids) {
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                ports.put(id, s.getLocalPort());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /** A mutable map: the test adds the service's own settings. */
    public static Map<String, Object> of(String bootstrap, int port, Path tokens, String id) {
        Map<String, Object> props = new HashMap<>();
        props.put("kafka.bootstrap.servers", bootstrap);
        props.put("micronaut.server.port", String.valueOf(port));
        props.put("gantry.auth.tokens-file", tokens.toString());
        props.put("gantry.instance.id", id);
        props.put("gantry.kafka.session-timeout", "6s");
        props.put("gantry.kafka.snapshot-every", "1");
        return props;
    }
}
