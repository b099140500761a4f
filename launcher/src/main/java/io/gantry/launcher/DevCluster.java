package io.gantry.launcher;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedKafkaCluster;
import io.gantry.embedded.EmbeddedPostgres;

import java.io.IOException;
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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The whole system on one machine: a KRaft Kafka broker (or a cluster of them) and PostgreSQL in this JVM, and the
 * five services as child JVMs. State lives under the data directory, so a restart keeps every job, topic and ledger
 * row. Used by {@code gantry dev} and by the end-to-end, broker chaos and chaos suite tests.
 */
public final class DevCluster implements AutoCloseable {
    /** A free port for a stack's Kafka or PostgreSQL (tests outside this package start stacks too). */
    public static int freePort() throws java.io.IOException {
        return EmbeddedStack.freePort();
    }

    /** The first of {@code n} consecutive free ports below the ephemeral range, for the services of a stack. */
    public static int freePortRange(int n) throws java.io.IOException {
        return EmbeddedStack.freePortRange(n);
    }


    /**
     * Where things go and how the system is tuned.
     *
     * @param kafkaBrokers 1: one broker (replication factor 1); more: an {@link EmbeddedKafkaCluster} ({@code kafkaPort}
     *                     is node 0's) whose topics, offsets and transaction logs are replicated on 3 brokers with 2
     *                     in sync required (on 2 brokers: 2 and 1)
     * @param instances    processes per service (1-3): instance k of the i-th service listens on
     *                     {@code basePort + 5k + i}; of a stateful service's instances one owns the work and the
     *                     others stand by, of admission's and billing's each takes a share of the partitions
     * @param kafkaPassword the broker's client listener asks for SASL PLAIN (user {@value #KAFKA_USER}, a random
     *                     password kept owner-only in {@code kafka.password}); the services get it in their
     *                     environment, so a local user, or a task of the local backend, cannot write Gantry's facts
     */
    public record Config(Path dataDir, Path repoRoot, int kafkaPort, int postgresPort, int basePort,
                         Map<String, Map<String, String>> serviceProperties, String serviceHeap, int kafkaBrokers,
                         int instances, boolean kafkaPassword) {
        public Config {
            serviceProperties = Map.copyOf(serviceProperties);
            if (kafkaBrokers < 1) {
                throw new IllegalArgumentException("kafkaBrokers must be at least 1, not " + kafkaBrokers);
            }
            if (instances < 1 || instances > 3) {
                throw new IllegalArgumentException("instances must be from 1 to 3, not " + instances);
            }
        }

        /** Kafka without a password (the tests' stacks read its topics as they like). */
        public Config(Path dataDir, Path repoRoot, int kafkaPort, int postgresPort, int basePort,
                      Map<String, Map<String, String>> serviceProperties, String serviceHeap, int kafkaBrokers,
                      int instances) {
            this(dataDir, repoRoot, kafkaPort, postgresPort, basePort, serviceProperties, serviceHeap, kafkaBrokers,
                    instances, false);
        }

        /** One instance of each service. */
        public Config(Path dataDir, Path repoRoot, int kafkaPort, int postgresPort, int basePort,
                      Map<String, Map<String, String>> serviceProperties, String serviceHeap, int kafkaBrokers) {
            this(dataDir, repoRoot, kafkaPort, postgresPort, basePort, serviceProperties, serviceHeap, kafkaBrokers, 1);
        }

        /** One Kafka broker. */
        public Config(Path dataDir, Path repoRoot, int kafkaPort, int postgresPort, int basePort,
                      Map<String, Map<String, String>> serviceProperties, String serviceHeap) {
            this(dataDir, repoRoot, kafkaPort, postgresPort, basePort, serviceProperties, serviceHeap, 1);
        }
    }

    public static final String KAFKA_USER = "gantry";
    public static final List<String> SERVICES = List.of("admission", "queue", "placement", "recovery", "billing");

    private final Config config;
    /** Each service's instances, in instance order. */
    private final Map<String, List<ServiceProcess>> services = new LinkedHashMap<>();
    private EmbeddedKafka kafka;
    private EmbeddedKafkaCluster kafkaCluster;
    private EmbeddedPostgres postgres;
    /** Stops PostgreSQL if this launcher dies without stopping it (see {@link #startPostgres}). */
    private Process postgresWatchdog;
    private Tokens tokens;
    private volatile boolean shuttingDown;
    private java.nio.channels.FileChannel lockChannel;
    private java.nio.channels.FileLock lock;

    public DevCluster(Config config) {
        this.config = config;
    }

    /** The API tokens of the dev tenant and the admin, created on first start and kept in the data directory. */
    public record Tokens(Path file, String tenant, String tenantToken, String adminToken) {
    }

    public DevCluster start() throws Exception {
        Files.createDirectories(config.dataDir().resolve("logs"));
        ownerOnly(config.dataDir().resolve("logs"));
        lockChannel = java.nio.channels.FileChannel.open(config.dataDir().resolve(".lock"),
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
        lock = lockChannel.tryLock();
        if (lock == null) {
            lockChannel.close();
            throw new IllegalStateException("another Gantry is already running on " + config.dataDir()
                    + " (stop it, or pick another --data-dir)");
        }
        try {
            requirePortsFree();
        } catch (IllegalStateException e) {
            lock.release();
            lockChannel.close();
            lock = null;
            throw e;
        }
        startKafka();
        // the services' logs and Kafka's log segments (every job's spec and variables, every tenant's) are the
        // operator's: tasks of the local backend run on this host as other users
        ownerOnly(config.dataDir().resolve(config.kafkaBrokers() == 1 ? "kafka" : "kafka-cluster"));
        // the services create their topics themselves (with the retention the system of record needs)
        log("starting PostgreSQL on 127.0.0.1:" + config.postgresPort());
        startPostgres();
        tokens = ensureTokens(config.dataDir().resolve("tokens.yml"));
        for (int k = 0; k < config.instances(); k++) {
            for (int i = 0; i < SERVICES.size(); i++) {
                String name = SERVICES.get(i);
                String db = name.equals("admission") || name.equals("billing") ? "gantry_" + name : null;
                ServiceSpec spec = new ServiceSpec(name, k, config.basePort() + SERVICES.size() * k + i, db,
                        config.serviceProperties().getOrDefault(name, Map.of()));
                ServiceProcess p = new ServiceProcess(spec, jarOf(name), config.dataDir().resolve("logs/"
                        + name + (k == 0 ? "" : "-" + k) + ".log"), commonProperties(spec), config.serviceHeap());
                services.computeIfAbsent(name, n -> new ArrayList<>()).add(p);
            }
        }
        for (ServiceProcess p : all()) {
            p.start();
        }
        for (ServiceProcess p : all()) {
            awaitHealthy(p, Duration.ofSeconds(120));
        }
        return this;
    }

    /** Makes {@code dir} readable by its owner only, where the file system has POSIX modes. */
    static void ownerOnly(Path dir) throws IOException {
        try {
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: its own rules apply
        }
    }

    /**
     * One broker in {@code kafka/}, or a cluster in {@code kafka-cluster/} (its own directory: a data directory keeps
     * the layout it was created with, since PostgreSQL's rows stand for what that Kafka log holds).
     */
    private void startKafka() throws Exception {
        Path single = config.dataDir().resolve("kafka");
        Path cluster = config.dataDir().resolve("kafka-cluster");
        if (config.kafkaBrokers() == 1) {
            if (Files.isDirectory(cluster)) {
                throw new IllegalStateException(config.dataDir() + " holds a Kafka cluster (" + cluster + "): start it "
                        + "with as many brokers as before, or pick another --data-dir");
            }
            log("starting Kafka (KRaft) on 127.0.0.1:" + config.kafkaPort());
            kafka = EmbeddedKafka.start(single, config.kafkaPort(), brokerSecurity());
        } else {
            if (Files.isDirectory(single)) {
                throw new IllegalStateException(config.dataDir() + " holds a single Kafka broker (" + single + "): "
                        + "start it with one broker, or pick another --data-dir");
            }
            kafkaCluster = EmbeddedKafkaCluster.start(config.kafkaBrokers(), cluster, config.kafkaPort(),
                    brokerSecurity());
            log("started a Kafka cluster (KRaft) of " + kafkaCluster.size() + " brokers, replication factor "
                    + kafkaCluster.replicationFactor() + ", min.insync.replicas " + kafkaCluster.minInsyncReplicas()
                    + ": " + kafkaCluster.bootstrapServers());
        }
    }

    /** The broker overrides that make it ask for the password, when the configuration wants one. */
    private Map<String, String> brokerSecurity() throws IOException {
        return config.kafkaPassword() ? EmbeddedKafka.saslPlain(KAFKA_USER, kafkaPassword()) : Map.of();
    }

    private String kafkaPassword() throws IOException {
        return io.gantry.embedded.KeptSecret.read(config.dataDir().resolve("kafka.password"));
    }

    /**
     * What a Kafka client of this stack sets besides the bootstrap servers ({@code security.protocol},
     * {@code sasl.*}); empty when the broker asks for no password.
     */
    public Map<String, String> kafkaClientSettings() {
        try {
            return config.kafkaPassword() ? EmbeddedKafka.saslPlainClient(KAFKA_USER, kafkaPassword()) : Map.of();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Map<String, String> commonProperties(ServiceSpec spec) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put("kafka.bootstrap.servers", bootstrapServers());
        // the JAAS configuration (it holds the password) goes in the environment: ServiceProcess.secret
        kafkaClientSettings().forEach((k, v) -> props.put("kafka." + k, v));
        props.put("micronaut.server.port", Integer.toString(spec.port()));
        // static group membership: a restarted instance takes its place back at once
        props.put("gantry.instance.id", Integer.toString(spec.instance()));
        props.put("gantry.instance.advertised-url", "http://127.0.0.1:" + spec.port());
        props.put("gantry.auth.tokens-file", tokens.file().toString());
        if (spec.database() != null) {
            props.put("datasources.default.url", postgres.ensureDatabase(spec.database()));
            props.put("datasources.default.username", postgres.user());
            props.put("datasources.default.password", postgres.password());
        }
        if (spec.name().equals("placement")) {
            props.put("gantry.placement.local.work-dir", config.dataDir().resolve(suffixed("runs", spec)).toString());
            // where local tasks report their checkpoints: admission, on whatever port it got
            props.put("gantry.placement.local.api-url", "http://127.0.0.1:" + config.basePort());
        }
        if (spec.name().equals("billing")) {
            // the Kafka Streams state of the month-to-date view, one per instance
            props.put("gantry.billing.data-dir", config.dataDir().resolve(suffixed("billing", spec)).toString());
        }
        props.putAll(spec.properties());
        return props;
    }

    /** A directory of one instance: {@code name} for the first, {@code name-k} for the others. */
    private static String suffixed(String name, ServiceSpec spec) {
        return spec.instance() == 0 ? name : name + "-" + spec.instance();
    }

    private List<ServiceProcess> all() {
        return services.values().stream().flatMap(List::stream).toList();
    }

    private Path jarOf(String service) {
        Path jar = config.repoRoot().resolve("services").resolve(service).resolve("target/gantry-" + service + ".jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: build first (mvn -B -DskipTests package)");
        }
        return jar;
    }

    private void awaitHealthy(ServiceProcess p, Duration timeout) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!p.isAlive()) {
                throw new IllegalStateException(p.name() + " exited during start; see " + p.logFile());
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url(p.name(), p.spec().instance())
                                + "/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    log(p.name() + (p.spec().instance() == 0 ? "" : " #" + p.spec().instance()) + " is up on "
                            + url(p.name(), p.spec().instance()));
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            TimeUnit.MILLISECONDS.sleep(250);
        }
        throw new IllegalStateException(p.name() + " did not become healthy within " + timeout + "; see " + p.logFile());
    }

    private static Tokens ensureTokens(Path file) throws IOException {
        if (!Files.exists(file)) {
            String tenantToken = "gty_" + randomHex();
            String adminToken = "gty_" + randomHex();
            Files.writeString(file, """
                    # API tokens of this dev installation (generated on first start). Keep them private.
                    tokens:
                      - tenant: demo
                        token: %s
                      - tenant: ops
                        role: admin
                        token: %s
                    """.formatted(tenantToken, adminToken), StandardCharsets.UTF_8);
            try {
                Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException ignored) {
                // not a POSIX file system
            }
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        String tenantToken = null;
        String adminToken = null;
        String tenant = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.startsWith("- tenant:")) {
                String t = line.substring("- tenant:".length()).trim();
                boolean admin = i + 1 < lines.size() && lines.get(i + 1).trim().equals("role: admin");
                for (int j = i + 1; j < Math.min(lines.size(), i + 3); j++) {
                    String l = lines.get(j).trim();
                    if (l.startsWith("token:")) {
                        String token = l.substring("token:".length()).trim();
                        if (admin && adminToken == null) {
                            adminToken = token;
                        } else if (!admin && tenantToken == null) {
                            tenantToken = token;
                            tenant = t;
                        }
                    }
                }
            }
        }
        return new Tokens(file, tenant, tenantToken, adminToken);
    }

    private static String randomHex() {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The first instance's HTTP base URL. */
    public String url(String service) {
        return url(service, 0);
    }

    public String url(String service, int instance) {
        return "http://127.0.0.1:" + service(service, instance).spec().port();
    }

    /** The first instance of a service. */
    public ServiceProcess service(String name) {
        return service(name, 0);
    }

    public ServiceProcess service(String name, int instance) {
        return services.get(name).get(instance);
    }

    /** Processes per service. */
    public int instances() {
        return config.instances();
    }

    public Tokens tokens() {
        return tokens;
    }

    public String bootstrapServers() {
        return kafkaCluster != null ? kafkaCluster.bootstrapServers() : kafka.bootstrapServers();
    }

    /** The Kafka cluster when started with several brokers (to stop and restart one), else null. */
    public EmbeddedKafkaCluster kafkaCluster() {
        return kafkaCluster;
    }

    /** From now on nothing is restarted; called first thing on Ctrl-C, before the services are stopped. */
    public void beginShutdown() {
        shuttingDown = true;
    }

    public boolean isShuttingDown() {
        return shuttingDown;
    }

    /** Restarts one service (e.g. after the test killed it) and waits until it is healthy again. */
    public void restart(String name) throws Exception {
        restart(name, 0);
    }

    /** Restarts one instance of a service and waits until it is healthy again. */
    public void restart(String name, int instance) throws Exception {
        if (shuttingDown) {
            throw new IllegalStateException("shutting down");
        }
        ServiceProcess p = service(name, instance);
        p.stop(Duration.ofSeconds(20));
        p.start();
        awaitHealthy(p, Duration.ofSeconds(120));
    }

    /**
     * A crash of the whole machine but the Kafka log: kill -9 of every service and of every PostgreSQL process at
     * once (the broker lives in this JVM). {@link #recoverFromCrash()} starts them again on the same data.
     */
    public void crashAllButKafka() throws InterruptedException {
        List<ProcessHandle> pg = postgresProcesses();
        pg.forEach(ProcessHandle::destroyForcibly);
        for (ServiceProcess p : all()) {
            p.kill();
        }
        awaitGone(pg);
    }

    /**
     * A crash of PostgreSQL alone, while the services keep running: kill -9 of every PostgreSQL process, then a start
     * on the same data directory (crash recovery replays its WAL). The services see their connections fail and must
     * reconnect on their own.
     */
    public void restartPostgres() throws IOException, InterruptedException {
        if (shuttingDown) {
            throw new IllegalStateException("shutting down");
        }
        List<ProcessHandle> pg = postgresProcesses();
        pg.forEach(ProcessHandle::destroyForcibly);
        awaitGone(pg);
        startPostgres();
    }

    /**
     * Every port this stack will listen on is free on 127.0.0.1, checked before anything starts (a port taken by
     * another program would otherwise be found only once Kafka and PostgreSQL run, by the service that cannot bind).
     * A PostgreSQL a killed launcher left on this data directory holds its own port: that one is stopped instead.
     */
    private void requirePortsFree() {
        Map<Integer, String> ports = new java.util.TreeMap<>();
        List<String> busy = new ArrayList<>();
        java.util.function.BiConsumer<Integer, String> want = (port, what) -> {
            String before = ports.putIfAbsent(port, what);
            if (before != null && port != 0) {
                busy.add(port + " is given to both " + before + " and " + what);
            }
        };
        want.accept(config.kafkaPort(), "Kafka (--kafka-port)");
        want.accept(config.postgresPort(), "PostgreSQL (--postgres-port)");
        for (int k = 0; k < config.instances(); k++) {
            for (int i = 0; i < SERVICES.size(); i++) {
                want.accept(config.basePort() + SERVICES.size() * k + i, SERVICES.get(i) + (k == 0 ? "" : " #" + k)
                        + " (--port " + config.basePort() + " and the next " + (SERVICES.size() * config.instances() - 1)
                        + ")");
            }
        }
        if (!busy.isEmpty()) {
            throw new IllegalStateException(String.join("; ", busy));
        }
        if (leftoverPostgres(config.dataDir().resolve("postgres"))) {
            ports.remove(config.postgresPort());
        }
        ports.forEach((port, what) -> {
            if (port == 0) {
                return;
            }
            try (java.net.ServerSocket s = new java.net.ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            } catch (IOException e) {
                busy.add("127.0.0.1:" + port + " for " + what);
            }
        });
        if (!busy.isEmpty()) {
            throw new IllegalStateException("in use by another program: " + String.join(", ", busy)
                    + "; stop it or pick other ports");
        }
    }

    /**
     * Starts PostgreSQL on the data directory's cluster. A server a killed launcher left running there is stopped
     * first (the directory's lock says no live Gantry uses it), and a watchdog stops this one if this launcher dies
     * without stopping it: PostgreSQL runs as its own daemon, not as a child that dies with the launcher.
     */
    private void startPostgres() throws IOException {
        Path dir = config.dataDir().resolve("postgres");
        stopLeftoverPostgres(dir);
        postgres = EmbeddedPostgres.start(dir, config.postgresPort());
        if (postgresWatchdog == null || !postgresWatchdog.isAlive()) {
            // reads the pid file when it fires, so a restarted server is covered; after a clean stop there is none
            postgresWatchdog = new ProcessBuilder("sh", "-c", "while kill -0 \"$1\" 2>/dev/null; do sleep 2; done; "
                    + "f=\"$2/postmaster.pid\"; [ -f \"$f\" ] && kill -INT \"$(head -n 1 \"$f\")\"", "gantry-pg-watch",
                    Long.toString(ProcessHandle.current().pid()), dir.toString())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
        }
    }

    /** Stops (fast shutdown) a postmaster still running on {@code dir} from a launcher that was killed. */
    static void stopLeftoverPostgres(Path dir) throws IOException {
        ProcessHandle pg = postmaster(dir);
        if (pg == null) {
            return;
        }
        long pid = pg.pid();
        log("stopping PostgreSQL (pid " + pid + ") left running on " + dir + " by a Gantry that was killed");
        try {
            new ProcessBuilder("kill", "-INT", Long.toString(pid)).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
            if (!pg.onExit().completeOnTimeout(null, 30, TimeUnit.SECONDS).thenApply(h -> h != null).join()) {
                pg.destroyForcibly();
                pg.onExit().completeOnTimeout(null, 10, TimeUnit.SECONDS).join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping the PostgreSQL left running on " + dir, e);
        }
    }

    /** Whether a postmaster runs on {@code dir} (a killed launcher's: the directory's lock is this launcher's). */
    private static boolean leftoverPostgres(Path dir) {
        return postmaster(dir) != null;
    }

    /** The live postmaster its pid file in {@code dir} names, or null (no file, not a pid, gone, not PostgreSQL). */
    private static ProcessHandle postmaster(Path dir) {
        try {
            long pid = Long.parseLong(Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim());
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .filter(h -> h.info().command().map(c -> c.endsWith("/postgres")).orElse(false)).orElse(null);
        } catch (IOException | RuntimeException e) {
            return null; // none, or not a pid file PostgreSQL wrote: its own start will judge it
        }
    }

    /** The postmaster (from its pid file) and its children: backends, WAL writer, checkpointer. */
    private List<ProcessHandle> postgresProcesses() {
        List<ProcessHandle> pg = new ArrayList<>();
        try {
            long pid = Long.parseLong(Files.readAllLines(config.dataDir().resolve("postgres/postmaster.pid")).get(0).trim());
            ProcessHandle.of(pid).ifPresent(h -> {
                pg.add(h);
                h.descendants().forEach(pg::add);
            });
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot find PostgreSQL's processes", e);
        }
        return pg;
    }

    /** Waits for the killed PostgreSQL processes to exit, then lets go of the server's handle. */
    private void awaitGone(List<ProcessHandle> pg) {
        for (ProcessHandle h : pg) {
            h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> h).join();
        }
        try {
            // the server is gone; this releases the data directory's lock (its stop command just finds nobody)
            postgres.close();
        } catch (IOException e) {
            log("PostgreSQL's handle did not close cleanly after the crash: " + e);
        }
        postgres = null;
    }

    /** Starts PostgreSQL and every service again after {@link #crashAllButKafka()}. */
    public void recoverFromCrash() throws Exception {
        startPostgres();
        for (ServiceProcess p : all()) {
            p.start();
        }
        for (ServiceProcess p : all()) {
            awaitHealthy(p, Duration.ofSeconds(120));
        }
    }

    @Override
    public void close() {
        shuttingDown = true;
        List<ServiceProcess> reversed = new ArrayList<>(all());
        java.util.Collections.reverse(reversed);
        for (ServiceProcess p : reversed) {
            p.stop(Duration.ofSeconds(20));
        }
        try {
            if (postgres != null) {
                postgres.close();
            }
        } catch (Exception e) {
            log("PostgreSQL did not stop cleanly: " + e);
        }
        if (postgresWatchdog != null) {
            postgresWatchdog.destroy();
        }
        try {
            if (kafka != null) {
                kafka.close();
            }
            if (kafkaCluster != null) {
                kafkaCluster.close();
            }
        } catch (Exception e) {
            log("Kafka did not stop cleanly: " + e);
        }
        try {
            if (lock != null) {
                lock.release();
                lockChannel.close();
            }
        } catch (IOException e) {
            log("could not release the data directory lock: " + e);
        }
    }

    static void log(String message) {
        System.out.println("[gantry] " + message);
    }
}
