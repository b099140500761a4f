package io.gantry.launcher.load;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * What the broker spends its time on, when it runs in this JVM (the embedded stack): requests per second and
 * request-handler milliseconds per second by Kafka API, and each client's share of the broker's network and I/O
 * threads, from the broker's own metrics.
 *
 * <p>The broker keeps per-client request time only while some client quota is set, so {@link #start()} sets a
 * default client quota far beyond anything a client can use (10^9 % of a thread, 10^15 bytes/s): nothing is ever
 * throttled; it only switches the accounting on. That is done only for a broker in this JVM, never for an external
 * cluster ({@code --bootstrap}), whose configuration is not ours to change.
 */
public final class BrokerSampler {
    /** Sample keys: {@code broker_req <api>} requests/s, {@code broker_ms <api>} handler ms/s, {@code broker_client <id>} %. */
    public static final String REQUESTS = "broker_req ";
    public static final String HANDLER_MS = "broker_ms ";
    public static final String CLIENT = "broker_client ";
    /** Inter-broker and controller requests (transaction markers among them) carry no client quota. */
    static final String EXEMPT = "(broker and controller requests, e.g. transaction markers)";
    /** Fetch requests again, split by who sent them: counted once, as Fetch. */
    private static final Set<String> SUBSETS = Set.of("FetchConsumer", "FetchFollower");
    private static final Pattern UUID = Pattern.compile("-?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    private final String bootstrap;
    private final Map<String, String> security;
    private final MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
    private final Map<String, Double> last = new HashMap<>();
    private long lastNanos = -1;
    private boolean inProcess;

    public BrokerSampler(String bootstrap, Map<String, String> security) {
        this.bootstrap = bootstrap;
        this.security = Map.copyOf(security);
    }

    /** Whether the broker runs in this JVM; if so, switches its per-client accounting on. */
    public boolean start() {
        inProcess = !names("kafka.network:type=RequestMetrics,name=RequestsPerSec,*").isEmpty();
        if (!inProcess) {
            return false;
        }
        Map<String, String> everyClient = new HashMap<>();
        everyClient.put(ClientQuotaEntity.CLIENT_ID, null); // the default entity: every client id
        Map<String, Object> p = new HashMap<>(security);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(new ClientQuotaEntity(everyClient), List.of(
                    new ClientQuotaAlteration.Op("request_percentage", 1e9),
                    new ClientQuotaAlteration.Op("producer_byte_rate", 1e15),
                    new ClientQuotaAlteration.Op("consumer_byte_rate", 1e15))))).all().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            // per-API figures still come; per-client ones stay empty
        }
        return true;
    }

    /** Rates since the previous sample (nothing the first time, or when the broker is not in this JVM). */
    public Map<String, Double> sample() {
        Map<String, Double> out = new LinkedHashMap<>();
        if (!inProcess) {
            return out;
        }
        long now = System.nanoTime();
        Map<String, Double> totals = new TreeMap<>();
        for (ObjectName n : names("kafka.network:type=RequestMetrics,name=RequestsPerSec,*")) {
            if (SUBSETS.contains(n.getKeyProperty("request"))) {
                continue;
            }
            totals.merge(REQUESTS + n.getKeyProperty("request"), number(n, "Count"), Double::sum);
        }
        for (ObjectName n : names("kafka.network:type=RequestMetrics,name=LocalTimeMs,*")) {
            if (SUBSETS.contains(n.getKeyProperty("request"))) {
                continue;
            }
            totals.merge(HANDLER_MS + n.getKeyProperty("request"), number(n, "Count") * number(n, "Mean"), Double::sum);
        }
        double seconds = (now - lastNanos) / 1e9;
        if (lastNanos > 0 && seconds > 0) {
            totals.forEach((k, v) -> {
                double rate = (v - last.getOrDefault(k, 0.0)) / seconds;
                if (rate > 0) {
                    out.put(k, rate);
                }
            });
        }
        last.putAll(totals);
        lastNanos = now;
        // a windowed rate kept by the broker (quota windows of 1 s), read as it stands
        for (ObjectName n : names("kafka.server:type=Request,*")) {
            String client = n.getKeyProperty("client-id");
            double requestTime = number(n, "request-time");
            double exempt = number(n, "exempt-request-time");
            if (!Double.isNaN(requestTime) && requestTime > 0) {
                out.merge(CLIENT + clientName(client), requestTime, Double::sum);
            }
            if (!Double.isNaN(exempt) && exempt > 0) {
                out.merge(CLIENT + EXEMPT, exempt, Double::sum);
            }
        }
        return out;
    }

    /** Client ids with the per-run UUID of a Kafka Streams application taken out, so runs compare. */
    static String clientName(String clientId) {
        return clientId == null ? "(none)" : UUID.matcher(clientId).replaceAll("");
    }

    private List<ObjectName> names(String pattern) {
        try {
            return List.copyOf(mbeans.queryNames(new ObjectName(pattern), null));
        } catch (Exception e) {
            return List.of();
        }
    }

    private double number(ObjectName n, String attribute) {
        try {
            Object v = mbeans.getAttribute(n, attribute);
            return v instanceof Number x ? x.doubleValue() : Double.NaN;
        } catch (Exception e) {
            return Double.NaN;
        }
    }
}
