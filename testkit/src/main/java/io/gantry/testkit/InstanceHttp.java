package io.gantry.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The instances of a service in one test, each on a free loopback port of its own (see
 * {@link InstanceProperties#freePorts}): GET requests to one of them, and its Prometheus page.
 */
public final class InstanceHttp {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, Integer> ports = new HashMap<>();

    /** A port for each instance id. */
    public InstanceHttp(String... ids) {
        InstanceProperties.freePorts(ports, ids);
    }

    public int port(String id) {
        Integer port = ports.get(id);
        if (port == null) {
            throw new IllegalArgumentException("no instance " + id + " (known: " + ports.keySet() + ")");
        }
        return port;
    }

    /** {@code http://127.0.0.1:<port>} of the instance. */
    public String url(String id) {
        return "http://127.0.0.1:" + port(id);
    }

    /** GET {@code path} of the instance, with the bearer {@code token} when not null. */
    public HttpResponse<String> get(String id, String path, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(id) + path)).timeout(Duration.ofSeconds(30))
                .GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The instance's {@code /prometheus} page, parsed; fails unless it answers 200. */
    public PrometheusText scrape(String id) throws IOException, InterruptedException {
        HttpResponse<String> r = get(id, "/prometheus", null);
        if (r.statusCode() != 200) {
            throw new IllegalStateException("instance " + id + " answered /prometheus with " + r.statusCode() + ": "
                    + r.body());
        }
        return PrometheusText.parse(r.body());
    }
}
