package io.gantry.embedded;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * A Kafka cluster of several KRaft nodes in this JVM, each one broker and controller at once, for tests that stop
 * and restart a broker under load (and for {@code gantry dev --kafka-brokers 3}).
 *
 * <p>Every node is a voter of one static quorum ({@code controller.quorum.voters}), so stopping any one node of
 * three leaves a quorum of two and the cluster keeps both its data and its metadata; a dedicated controller would
 * be a single point of failure no test exercises, and three controllers beside three brokers would double the
 * threads on a small machine. Static voters, not 3.9's new dynamic quorum: the long-proven path.
 *
 * <p>Three nodes or more: replication factor 3 and {@code min.insync.replicas} 2 for new topics and for the
 * consumer offsets and transaction state logs, so one broker may be down without stopping a write or a
 * transaction. Fewer nodes replicate on all of them with a minimum of one.
 *
 * <p>{@link #stop(int)} takes a broker down without controlled shutdown: its partitions stay led by it until the
 * controller misses its heartbeats ({@value #SESSION_TIMEOUT_MS} ms) and fences it, as when a broker's machine
 * dies, and clients find out the hard way. (Its log is still closed cleanly, so a restart needs no recovery.)
 * The same keeps {@link #close()} bounded: no broker waits for a controller that is going away too (it still takes
 * about 5 s, the wait of the last controller's Raft client for a successor). Node {@code i} has {@code node.id} i,
 * so {@link #stop(int)} takes what {@link #leaderOf} and {@link #activeController()} return.
 */
public final class EmbeddedKafkaCluster implements AutoCloseable {
    /** How long the controller waits for a silent broker before fencing it (Kafka's default is 9 s). */
    static final int SESSION_TIMEOUT_MS = 6000;
    /** The bound on starting the cluster, starting or stopping one node, and closing. */
    static final long START_SECONDS = 90;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(START_SECONDS);

    private final List<Node> nodes;
    private final Path root;
    private final boolean deleteOnClose;
    private final int replicationFactor;
    private final int minInsyncReplicas;

    private static final class Node {
        final int id;
        final int clientPort;
        final Path logDir;
        final Properties config;
        volatile KafkaRaftServer server;

        Node(int id, int clientPort, Path logDir, Properties config) {
            this.id = id;
            this.clientPort = clientPort;
            this.logDir = logDir;
            this.config = config;
        }
    }

    private EmbeddedKafkaCluster(List<Node> nodes, Path root, boolean deleteOnClose, int replicationFactor,
                                 int minInsyncReplicas) {
        this.nodes = nodes;
        this.root = root;
        this.deleteOnClose = deleteOnClose;
        this.replicationFactor = replicationFactor;
        this.minInsyncReplicas = minInsyncReplicas;
    }

    /** {@code brokers} nodes in a temporary directory deleted on close, on free ports. */
    public static EmbeddedKafkaCluster start(int brokers) throws Exception {
        return start(brokers, null, 0, Map.of());
    }

    /**
     * Starts the nodes together (each waits for a quorum, so one at a time would never finish) and returns once
     * every broker is registered and serving, or fails within {@value #START_SECONDS} s.
     *
     * @param dataDir   where node {@code i} keeps its log ({@code dataDir/node-i}); {@code null} for a temporary
     *                  directory deleted on close. Formatted directories are reused, so a restart keeps every topic.
     * @param firstPort the client port of node 0 on 127.0.0.1, or 0 for a free one; the other ports are free ones
     */
    public static EmbeddedKafkaCluster start(int brokers, Path dataDir, int firstPort, Map<String, String> overrides)
            throws Exception {
        if (brokers < 1) {
            throw new IllegalArgumentException("a cluster needs at least one broker, not " + brokers);
        }
        boolean temporary = dataDir == null;
        Path root = temporary ? Files.createTempDirectory("gantry-kafka-cluster-") : dataDir;
        int replication = replicationFactorFor(brokers);
        int minIsr = minInsyncReplicasFor(brokers);
        // every port is chosen before anything binds (the voters list names all controllers), so they must differ
        Set<Integer> taken = new HashSet<>();
        if (firstPort != 0) {
            taken.add(firstPort);
        }
        int[] clientPorts = new int[brokers];
        int[] controllerPorts = new int[brokers];
        for (int i = 0; i < brokers; i++) {
            clientPorts[i] = i == 0 && firstPort != 0 ? firstPort : freePort(taken);
            controllerPorts[i] = freePort(taken);
        }
        String voters = java.util.stream.IntStream.range(0, brokers)
                .mapToObj(i -> i + "@127.0.0.1:" + controllerPorts[i]).collect(Collectors.joining(","));
        String clusterId = existingClusterId(root, brokers);
        if (clusterId == null) {
            clusterId = Uuid.randomUuid().toString();
        }
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < brokers; i++) {
            Path logDir = root.resolve("node-" + i);
            Files.createDirectories(logDir);
            Properties p = EmbeddedKafka.nodeProperties(i, voters, clientPorts[i], controllerPorts[i], logDir,
                    replication, minIsr);
            // a stopped broker is found out by its silence (see the class comment), and sooner than by default
            p.put("controlled.shutdown.enable", "false");
            p.put("broker.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS));
            p.put("broker.heartbeat.interval.ms", "1000");
            // three brokers share this JVM's cores: fewer threads each
            p.put("num.network.threads", "2");
            p.put("num.io.threads", "2");
            p.put("background.threads", "2");
            p.putAll(overrides);
            KafkaConfig.fromProps(p, false); // a bad override fails here, before anything starts
            EmbeddedKafka.formatIfNew(i, clusterId, logDir);
            nodes.add(new Node(i, clientPorts[i], logDir, p));
        }
        EmbeddedKafkaCluster cluster = new EmbeddedKafkaCluster(nodes, root, temporary, replication, minIsr);
        try {
            cluster.runOnEach(nodes, cluster::startNode, START_TIMEOUT);
            cluster.awaitBrokers(brokers, START_TIMEOUT);
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The replication factor a cluster of {@code brokers} gives its topics: 3, or all of them when fewer. */
    public static int replicationFactorFor(int brokers) {
        return Math.min(3, brokers);
    }

    /** {@code min.insync.replicas} on {@code brokers}: one less than the replication factor, at least 1. */
    public static int minInsyncReplicasFor(int brokers) {
        return Math.max(1, replicationFactorFor(brokers) - 1);
    }

    /** All the brokers' client addresses, the stopped ones included (clients skip those they cannot reach). */
    public String bootstrapServers() {
        return nodes.stream().map(n -> "127.0.0.1:" + n.clientPort).collect(Collectors.joining(","));
    }

    public int size() {
        return nodes.size();
    }

    public int replicationFactor() {
        return replicationFactor;
    }

    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    public boolean isRunning(int i) {
        return node(i).server != null;
    }

    /** Node {@code i}'s log directory, kept across {@link #stop(int)} and {@link #restart(int)}. */
    public Path logDir(int i) {
        return node(i).logDir;
    }

    /** Stops broker and controller of node {@code i}, keeping its log; the others carry on. */
    public synchronized void stop(int i) throws Exception {
        Node n = node(i);
        KafkaRaftServer server = n.server;
        if (server == null) {
            throw new IllegalStateException("node " + i + " is not running");
        }
        n.server = null;
        runOnEach(List.of(n), x -> {
            server.shutdown();
            server.awaitShutdown();
        }, START_TIMEOUT);
    }

    /**
     * Starts node {@code i} again on its log and its ports and returns once it is registered with the controller
     * (it then catches up with the leaders as a follower: see {@link #awaitFullyReplicated(Duration)}).
     */
    public synchronized void restart(int i) throws Exception {
        Node n = node(i);
        if (n.server != null) {
            throw new IllegalStateException("node " + i + " is running");
        }
        runOnEach(List.of(n), this::startNode, START_TIMEOUT);
        awaitBrokers(runningCount(), START_TIMEOUT);
    }

    /** The node that is the active controller now, or -1 if the quorum has no leader. */
    public int activeController() throws Exception {
        try (Admin admin = admin()) {
            return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).leaderId();
        }
    }

    /** The broker leading partition {@code partition} of {@code topic} (e.g. {@code __transaction_state}), or -1. */
    public int leaderOf(String topic, int partition) throws Exception {
        try (Admin admin = admin()) {
            TopicPartitionInfo p = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS)
                    .get(topic).partitions().get(partition);
            return p.leader() == null ? -1 : p.leader().id();
        }
    }

    /**
     * Waits until every partition of every topic has all its replicas in sync again (after a restart), and returns
     * how long that took.
     */
    public Duration awaitFullyReplicated(Duration timeout) throws Exception {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        String lagging = "?";
        try (Admin admin = admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    Set<String> names = admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions()
                            .listInternal(true)).names().get(10, TimeUnit.SECONDS);
                    Map<String, TopicDescription> topics = admin.describeTopics(names).allTopicNames()
                            .get(10, TimeUnit.SECONDS);
                    lagging = underReplicated(topics);
                    if (lagging.isEmpty()) {
                        return Duration.ofNanos(System.nanoTime() - start);
                    }
                } catch (ExecutionException | TimeoutException e) {
                    lagging = e.toString();
                }
                TimeUnit.MILLISECONDS.sleep(200);
            }
        }
        throw new IllegalStateException("still under-replicated after " + timeout + ": " + lagging);
    }

    private static String underReplicated(Map<String, TopicDescription> topics) {
        List<String> out = new ArrayList<>();
        topics.values().forEach(t -> t.partitions().forEach(p -> {
            if (p.isr().size() < p.replicas().size()) {
                out.add(t.name() + "-" + p.partition() + " isr " + p.isr().size() + "/" + p.replicas().size());
            }
        }));
        return String.join(", ", out);
    }

    /** Creates the topics that do not exist yet with the cluster's replication factor; existing ones stay. */
    public void createTopics(Collection<String> names, int partitions) {
        try (Admin admin = admin()) {
            EmbeddedKafka.createTopics(admin, names, partitions, replicationFactor);
        }
    }

    /** An admin client of this cluster; the caller closes it. */
    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /** Stops every running node at once and deletes a temporary directory. */
    @Override
    public void close() throws IOException {
        List<Node> running = nodes.stream().filter(n -> n.server != null).toList();
        try {
            runOnEach(running, n -> {
                KafkaRaftServer s = n.server;
                n.server = null;
                s.shutdown();
                s.awaitShutdown();
            }, START_TIMEOUT);
        } catch (Exception e) {
            throw new IOException("the Kafka nodes did not all stop", e);
        } finally {
            if (deleteOnClose) {
                Utils.delete(root.toFile());
            }
        }
    }

    private void startNode(Node n) {
        // a fresh configuration each time: a server initialises the dynamic part of the one it is given
        KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(n.config, false), Time.SYSTEM);
        n.server = server; // a node that fails half-way is still shut down by close()
        server.startup();
    }

    private int runningCount() {
        return (int) nodes.stream().filter(n -> n.server != null).count();
    }

    private Node node(int i) {
        if (i < 0 || i >= nodes.size()) {
            throw new IllegalArgumentException("no node " + i + " in a cluster of " + nodes.size());
        }
        return nodes.get(i);
    }

    private interface NodeAction {
        void run(Node n) throws Exception;
    }

    /** Runs the action on every node in parallel and waits at most {@code timeout} for all of them. */
    private void runOnEach(List<Node> targets, NodeAction action, Duration timeout) throws Exception {
        if (targets.isEmpty()) {
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(targets.size(), r -> {
            Thread t = new Thread(r, "embedded-kafka-cluster");
            t.setDaemon(true);
            return t;
        });
        try {
            Map<Integer, Future<?>> futures = new LinkedHashMap<>();
            for (Node n : targets) {
                futures.put(n.id, pool.submit(() -> {
                    action.run(n);
                    return null;
                }));
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            for (Map.Entry<Integer, Future<?>> f : futures.entrySet()) {
                try {
                    f.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    throw new IllegalStateException("Kafka node " + f.getKey() + " did not finish within " + timeout, e);
                } catch (ExecutionException e) {
                    throw new IllegalStateException("Kafka node " + f.getKey() + " failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits until {@code count} brokers are registered and unfenced (describeCluster lists only those). */
    private void awaitBrokers(int count, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        int seen = 0;
        try (Admin admin = admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    seen = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS).size();
                    if (seen >= count) {
                        return;
                    }
                } catch (ExecutionException | TimeoutException e) {
                    // the quorum is still electing
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        throw new IllegalStateException(seen + " of " + count + " Kafka brokers registered within " + timeout);
    }

    /** The cluster id of an existing, formatted data directory, so a restarted cluster keeps its identity. */
    private static String existingClusterId(Path root, int brokers) throws IOException {
        for (int i = 0; i < brokers; i++) {
            Path meta = root.resolve("node-" + i).resolve("meta.properties");
            if (Files.exists(meta)) {
                Properties p = new Properties();
                try (var in = Files.newInputStream(meta)) {
                    p.load(in);
                }
                return p.getProperty("cluster.id");
            }
        }
        return null;
    }

    /** A free port on 127.0.0.1 below the ephemeral range, not in {@code taken} ({@link Ports#belowEphemeral}). */
    static int freePort(Set<Integer> taken) throws IOException {
        return Ports.belowEphemeral(1, taken);
    }
}
