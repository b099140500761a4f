package io.gantry.launcher;

import io.gantry.launcher.load.ProcSampler;
import io.gantry.launcher.load.Stack;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A fresh Gantry for one load run: {@link DevCluster} in a new temporary data directory on free ports (so it never
 * meets a running {@code gantry dev}), a simulated cluster big enough that jobs never wait for GPUs at the target
 * rate, a GPU quota per tenant as large as the cluster, and several tenants (their tokens are written before the
 * cluster starts; DevCluster keeps a token file it finds).
 */
final class EmbeddedStack implements Stack {
    private static final Pattern NODE = Pattern.compile("\"nodeId\"\\s*:");

    private final Path dataDir;
    private final int nodes;
    private final List<String> tokens = new ArrayList<>();
    private final String adminToken;
    private final boolean keepData;
    private final String description;
    private DevCluster cluster;
    private boolean failed;

    EmbeddedStack(Path repo, int tenants, int nodes, int gpusPerNode, String serviceHeap, String heartbeatTimeout,
                  boolean keepData) throws Exception {
        this.nodes = nodes;
        this.keepData = keepData;
        this.dataDir = Files.createTempDirectory("gantry-loadtest-");
        StringBuilder tokenFile = new StringBuilder("# load test tenants (generated)\ntokens:\n");
        for (int i = 0; i < tenants; i++) {
            String token = "lt-%02d-%s".formatted(i, randomHex());
            tokens.add(token);
            tokenFile.append("  - tenant: lt-%02d\n    token: %s\n".formatted(i, token));
        }
        adminToken = "lt-admin-" + randomHex();
        tokenFile.append("  - tenant: ops\n    role: admin\n    token: ").append(adminToken).append('\n');
        Files.writeString(dataDir.resolve("tokens.yml"), tokenFile, StandardCharsets.UTF_8);
        Path clusterFile = dataDir.resolve("cluster.yml");
        Files.writeString(clusterFile, clusterYaml(nodes, gpusPerNode), StandardCharsets.UTF_8);

        Map<String, Map<String, String>> props = new LinkedHashMap<>();
        props.put("placement", Map.of("gantry.placement.backend", "simulated",
                "gantry.placement.simulated.speedup", "1",
                "gantry.placement.simulated.cluster-file", clusterFile.toString()));
        props.put("recovery", Map.of("gantry.recovery.heartbeat-timeout", heartbeatTimeout));
        props.put("queue", Map.of("gantry.queue.default-gpu-quota", Integer.toString(nodes * gpusPerNode)));
        // the load test measures throughput: no cap on a tenant's submission rate or open jobs (at saturation the read model that
        // counts them lags by tens of thousands of records, so finished jobs would still count as open)
        props.put("admission", Map.of("gantry.admission.max-open-jobs", "0", "gantry.admission.submit-rate", "0"));
        cluster = new DevCluster(new DevCluster.Config(dataDir, repo, freePort(), freePort(), freePortRange(5), props,
                serviceHeap));
        description = ("embedded (DevCluster, data %s): KRaft broker in the harness JVM, PostgreSQL (embedded binaries), "
                + "the five services as child JVMs (-Xmx%s, SerialGC, %s); simulated backend, %d nodes x %d H100 "
                + "in racks of 8, speedup 1; default GPU quota %d per tenant, no cap on submissions or open jobs; recovery heartbeat timeout %s")
                .formatted(dataDir, serviceHeap, ServiceProcess.FULL_JIT.equals(System.getProperty(
                        ServiceProcess.JIT_PROPERTY)) ? "C1 and C2" : "C1 only", nodes, gpusPerNode,
                        nodes * gpusPerNode, heartbeatTimeout);
    }

    /** The simulated cluster: racks of 8 nodes, 4 racks a spine, 2 sockets a node, one NVLink domain a node. */
    static String clusterYaml(int nodes, int gpusPerNode) {
        StringBuilder y = new StringBuilder("# load test cluster (generated)\nnodes:\n");
        for (int rack = 0, left = nodes; left > 0; rack++, left -= 8) {
            y.append("""
                      - id: r%d
                        count: %d
                        rack: rack-%d
                        spine: spine-%d
                        sockets: 2
                        gpus: {count: %d, model: H100, memoryMiB: 81920}
                        cpuMillis: 96000
                        memoryMiB: 1048576
                    """.formatted(rack, Math.min(8, left), rack, rack / 4, gpusPerNode));
        }
        return y.toString();
    }

    void start() throws Exception {
        try {
            cluster.start();
        } catch (Exception e) {
            failed = true;
            throw e;
        }
    }

    @Override
    public void awaitReady() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        Instant deadline = Instant.now().plusSeconds(120);
        int seen = 0;
        while (Instant.now().isBefore(deadline)) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(cluster.url("placement") + "/v1/nodes"))
                        .header("Authorization", "Bearer " + adminToken).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    Matcher m = NODE.matcher(r.body());
                    seen = 0;
                    while (m.find()) {
                        seen++;
                    }
                    if (seen >= nodes) {
                        return;
                    }
                }
            } catch (IOException e) {
                // placement is still restoring
            }
            TimeUnit.MILLISECONDS.sleep(500);
        }
        failed = true;
        throw new IllegalStateException("placement registered " + seen + " of " + nodes + " nodes within 120 s");
    }

    @Override
    public String api() {
        return cluster.url("admission");
    }

    @Override
    public List<String> tokens() {
        return tokens;
    }

    @Override
    public java.util.Map<String, String> kafkaClientSettings() {
        return cluster.kafkaClientSettings();
    }

    @Override
    public String bootstrap() {
        return cluster.bootstrapServers();
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public void register(ProcSampler sampler) {
        for (String name : DevCluster.SERVICES) {
            ServiceProcess p = cluster.service(name);
            sampler.pid(name, p::pid);
        }
        long self = ProcessHandle.current().pid();
        sampler.pid("harness JVM (Kafka broker + load generator)", () -> self);
        sampler.tree("postgresql (all processes)", "postgres", dataDir.resolve("postgres").toString());
    }

    void markFailed() {
        failed = true;
    }

    Path dataDir() {
        return dataDir;
    }

    @Override
    public void close() {
        if (cluster != null) {
            cluster.beginShutdown();
            cluster.close();
            cluster = null;
        }
        if (failed || keepData) {
            System.out.println("[loadtest] stack data and service logs kept in " + dataDir);
            return;
        }
        try (Stream<Path> walk = Files.walk(dataDir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    private static String randomHex() {
        byte[] b = new byte[12];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The first of n consecutive free ports below the ephemeral range ({@link io.gantry.embedded.Ports}). */
    static int freePortRange(int n) throws IOException {
        return io.gantry.embedded.Ports.belowEphemeral(n, new java.util.HashSet<>());
    }
}
