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
