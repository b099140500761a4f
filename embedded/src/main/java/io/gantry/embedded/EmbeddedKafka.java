package io.gantry.embedded;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

/**
 * A single-node Kafka broker in KRaft mode (combined broker and controller) running in this JVM.
 *
 * <p>Used by the {@code gantry dev} launcher (with a persistent data directory) and by the tests (with a
 * throw-away directory, one broker per test JVM via {@link #shared()}).
 */
public final class EmbeddedKafka implements AutoCloseable {
    private static EmbeddedKafka shared;

    private final KafkaRaftServer server;
    private final Path logDir;
    private final boolean deleteOnClose;
    private final String bootstrap;

    private EmbeddedKafka(KafkaRaftServer server, Path logDir, boolean deleteOnClose, String bootstrap) {
        this.server = server;
        this.logDir = logDir;
        this.deleteOnClose = deleteOnClose;
        this.bootstrap = bootstrap;
    }

    /** One broker per JVM, started on first use and stopped by a shutdown hook (never by a test's AfterAll). */
    public static synchronized EmbeddedKafka shared() {
        if (shared == null) {
            try {
                shared = start(null, 0, Map.of());
            } catch (Exception e) {
                throw new IllegalStateException("could not start the embedded Kafka broker", e);
            }
            EmbeddedKafka broker = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(broker::closeQuietly, "embedded-kafka-stop"));
        }
        return shared;
    }

    /**
     * Starts a broker.
     *
     * @param dataDir where the log lives; {@code null} for a temporary directory deleted on close. An existing,
     *                already formatted directory is reused, so a restart keeps every topic.
     * @param port    the client port on 127.0.0.1, or 0 for a free one
     */
    public static EmbeddedKafka start(Path dataDir, int port, Map<String, String> overrides) throws Exception {
        int clientPort = port == 0 ? freePort() : port;
        int controllerPort = freePort();
        // nothing is bound to the client port yet, so the system may hand the same port out again
        for (int i = 0; i < 20 && controllerPort == clientPort; i++) {
            controllerPort = freePort();
        }
        boolean temporary = dataDir == null;
        Path logDir = temporary ? Files.createTempDirectory("gantry-kafka-") : dataDir;
        Files.createDirectories(logDir);
        Properties p = nodeProperties(1, "1@127.0.0.1:" + controllerPort, clientPort, controllerPort, logDir, 1, 1);
        p.putAll(overrides);
        KafkaConfig config = KafkaConfig.fromProps(p, false);
        formatIfNew(1, Uuid.randomUuid().toString(), logDir);
        KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
        server.startup();
        return new EmbeddedKafka(server, logDir, temporary, "127.0.0.1:" + clientPort);
    }

    /**
     * Broker overrides that make the client listener ask for SASL PLAIN with one user (the controller listener, which
     * serves no client requests, stays plain): only who knows the password reads or writes. With {@link #start}'s
     * {@code overrides}; clients connect with {@link #saslPlainClient}.
     */
    public static Map<String, String> saslPlain(String user, String password) {
        requireJaasSafe(user, password);
        return Map.of("listener.security.protocol.map", "PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "sasl.enabled.mechanisms", "PLAIN",
                "sasl.mechanism.inter.broker.protocol", "PLAIN",
                "listener.name.plaintext.plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule"
                        + " required username=\"" + user + "\" password=\"" + password + "\" user_" + user + "=\""
                        + password + "\";");
    }

    /** The client settings ({@code security.protocol}, {@code sasl.*}) of a broker started with {@link #saslPlain}. */
    public static Map<String, String> saslPlainClient(String user, String password) {
        requireJaasSafe(user, password);
        return Map.of("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN",
                "sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                        + user + "\" password=\"" + password + "\";");
    }

    private static void requireJaasSafe(String user, String password) {
        if (!user.matches("[A-Za-z0-9_-]+") || !password.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("a SASL user and password of letters, digits, '_' and '-' only");
        }
    }

    /**
     * The configuration of one KRaft node that is broker and controller at once, on 127.0.0.1.
     *
     * @param voters      {@code controller.quorum.voters}, e.g. {@code 0@127.0.0.1:p0,1@127.0.0.1:p1,...}
     * @param replication the replication factor of new topics and of the offsets and transaction state logs
     * @param minIsr      {@code min.insync.replicas} of every topic, the transaction state log included
     */
    static Properties nodeProperties(int nodeId, String voters, int clientPort, int controllerPort, Path logDir,
                                     int replication, int minIsr) {
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", Integer.toString(nodeId));
        p.put("controller.quorum.voters", voters);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + clientPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + clientPort);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", logDir.toString());
        p.put("num.partitions", "1");
        p.put("default.replication.factor", Integer.toString(replication));
        p.put("min.insync.replicas", Integer.toString(minIsr));
        p.put("offsets.topic.replication.factor", Integer.toString(replication));
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", Integer.toString(replication));
        p.put("transaction.state.log.min.isr", Integer.toString(minIsr));
        p.put("transaction.state.log.num.partitions", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("auto.create.topics.enable", "false");
        // the default 128 MiB dedupe buffer makes the broker die silently under a small heap
        p.put("log.cleaner.dedupe.buffer.size", "2097152");
        p.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "5000");
        p.put("transaction.remove.expired.transaction.cleanup.interval.ms", "5000");
        return p;
    }

    /** {@code kafka-storage.sh format} in this JVM, unless the directory is formatted already (a restart). */
    static void formatIfNew(int nodeId, String clusterId, Path logDir) throws Exception {
        if (!Files.exists(logDir.resolve("meta.properties"))) {
            new Formatter()
                    .setNodeId(nodeId)
                    .setClusterId(clusterId)
                    .setDirectories(List.of(logDir.toString()))
                    .setMetadataLogDirectory(logDir.toString())
                    .setControllerListenerName("CONTROLLER")
                    .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
                    .run();
        }
    }

    public String bootstrapServers() {
        return bootstrap;
    }

    /** Creates the topics that do not exist yet; existing ones are left as they are. */
    public void createTopics(Collection<String> names, int partitions) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            createTopics(admin, names, partitions);
        }
    }

    /** Idempotent topic creation on any cluster, one replica each. */
    public static void createTopics(Admin admin, Collection<String> names, int partitions) {
        createTopics(admin, names, partitions, 1);
    }

    /** Idempotent topic creation on any cluster: topics that exist already stay as they are. */
    public static void createTopics(Admin admin, Collection<String> names, int partitions, int replicationFactor) {
        for (String name : names) {
            try {
                admin.createTopics(List.of(new NewTopic(name, partitions, (short) replicationFactor))).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("could not create topic " + name, e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.shutdown();
        server.awaitShutdown();
        if (deleteOnClose) {
            Utils.delete(logDir.toFile());
        }
    }

    void closeQuietly() {
        try {
            close();
        } catch (Exception ignored) {
            // the JVM is going away
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }
}
