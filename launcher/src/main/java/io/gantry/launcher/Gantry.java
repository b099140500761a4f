package io.gantry.launcher;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code gantry dev}: the whole system on embedded defaults. */
public final class Gantry {
    private Gantry() {
    }

    static final String USAGE = """
            usage: gantry dev [options]
              --data-dir DIR          where Kafka, PostgreSQL, logs and tokens live (default ./.gantry; env GANTRY_DATA_DIR)
              --port N                first HTTP port; services get N..N+4 (default 8080: admission 8080, queue 8081,
                                      placement 8082, recovery 8083, billing 8084)
              --kafka-port N          Kafka client port (default 9092)
              --kafka-brokers N       Kafka brokers in this JVM (default 1); 3: replication factor 3, min.insync.replicas 2
              --instances N           processes per service, 1-3 (default 1); instance k listens on port + 5k + i:
                                      one owns queue/placement/recovery work, the others stand by and forward
              --postgres-port N       PostgreSQL port (default 15432)
              --backend NAME          simulated (default), local (runs tenants' commands on this host!),
                                      kubernetes (pods on the cluster of --kubeconfig) or slurm (batch jobs on the
                                      controller of --slurm-conf); see services/placement/README.md
              --pool NAME=BACKEND     a pool of the cluster with its own backend and placement core; repeatable
                                      (e.g. --pool sim=simulated --pool gpu=local); the backend options below
                                      apply to the pools of that backend; without it one pool `default` (--backend)
              --shard-by-pool         with two or more --pool and --instances 2+: each pool a unit of placement's
                                      work of its own, spread over the placement instances
              --cluster FILE          cluster YAML for the simulated backend (default: 4 nodes x 8 H100)
              --local-gpus N          GPUs of the local node when nvidia-smi does not describe them (default 0)
              --local-gpu-model M     their model (default generic)
              --kubeconfig FILE       kubeconfig of the kubernetes backend (default: KUBECONFIG or ~/.kube/config)
              --namespace NS          namespace of the task pods (default: the kubeconfig's, else default)
              --image IMAGE           container image of every task on kubernetes (default ubuntu:24.04)
              --slurm-conf FILE       slurm.conf of the slurm backend's controller (default: SLURM_CONF or the
                                      system's; tools/slurm/start-test-slurm.sh starts a throwaway one)
              --slurm-partition P     the partition only Gantry submits to (default gantry)
              --speedup X             simulated time runs X times faster than wall time (default 1)
              --heartbeat-timeout D   how long a silent node lives before recovery fails it (default 10s)
              --gpu-quota N           default per-tenant GPU quota when there is no queue configuration (default 64)
              --queue-config FILE     queues, cohorts, flavours and priority classes (YAML; see
                                      services/queue/src/main/resources/examples/queues.yml)
              --queue-shards N        split the queue by cohort tree into N units of work (1-64, default 1), spread
                                      over the queue instances (--instances 2+); each tenant's trees on one shard
              --service-heap SIZE     -Xmx of each service JVM (default 256m)
            """;

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || !args[0].equals("dev")) {
            System.err.print(USAGE);
            System.exit(args.length == 0 ? 2 : (args[0].equals("--help") || args[0].equals("help") ? 0 : 2));
        }
        Map<String, String> opts;
        try {
            opts = parse(args);
            queueProperties(opts);
            placementProperties(opts, Path.of("."), 8080);
        } catch (BadOption e) {
            System.err.println("gantry: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        Path repo = Path.of(System.getProperty("gantry.repo", ".")).toAbsolutePath().normalize();
        Path dataDir = Path.of(opts.getOrDefault("data-dir",
                System.getenv().getOrDefault("GANTRY_DATA_DIR", repo.resolve(".gantry").toString()))).toAbsolutePath();
        int port = Integer.parseInt(opts.getOrDefault("port", "8080"));
        Map<String, Map<String, String>> props = new HashMap<>();
        props.put("placement", placementProperties(opts, dataDir, port));
        props.put("recovery", Map.of("gantry.recovery.heartbeat-timeout", opts.getOrDefault("heartbeat-timeout", "10s")));
        props.put("queue", queueProperties(opts));
        DevCluster.Config config = new DevCluster.Config(dataDir, repo,
                Integer.parseInt(opts.getOrDefault("kafka-port", "9092")),
                Integer.parseInt(opts.getOrDefault("postgres-port", "15432")), port, props,
                opts.getOrDefault("service-heap", "256m"), Integer.parseInt(opts.getOrDefault("kafka-brokers", "1")),
                Integer.parseInt(opts.getOrDefault("instances", "1")), true);

        DevCluster cluster = new DevCluster(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            cluster.beginShutdown();
            DevCluster.log("stopping ...");
            cluster.close();
            DevCluster.log("stopped; state kept in " + dataDir);
            stopped.countDown();
        }, "gantry-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            cluster.start();
        } catch (Exception e) {
            Runtime.getRuntime().removeShutdownHook(hook);
            cluster.close();
            System.err.println("[gantry] could not start: " + e.getMessage());
            System.exit(1);
        }
        DevCluster.Tokens t = cluster.tokens();
        // the CLI reads where this installation listens (CliConfig.DEV_API_FILE), so ./gantry ps works with any --port
        Files.writeString(dataDir.resolve("api-url"), cluster.url("admission") + "\n");
        boolean defaultDir = dataDir.equals(repo.resolve(".gantry"));
        String cliEnv = defaultDir ? "" : "export GANTRY_DATA_DIR=" + dataDir + "   # the CLI finds this installation\n  ";
        System.out.println("""

                Gantry is running (data: %s, logs: %s/logs).
                  API        %s   (admission: jobs)
                  queues     %s   nodes %s   usage %s   recovery %s
                  Kafka      %s   (SASL PLAIN, user %s, password in %s/kafka.password)
                  tokens     %s (tenant `%s` and the admin; the CLI uses the tenant's by itself)

                Submit a job file and follow it (2 tasks x 4 GPUs):

                  %s./gantry submit examples/jobs/hello-gang.yaml --watch
                  ./gantry ps          # then: why JOB, logs JOB, usage --job JOB, cancel JOB

                The REST API with curl: docs/user-guide.md. Ctrl-C stops everything.
                """.formatted(dataDir, dataDir, cluster.url("admission"), cluster.url("queue"), cluster.url("placement"),
                cluster.url("billing"), cluster.url("recovery"), cluster.bootstrapServers(), DevCluster.KAFKA_USER,
                dataDir, t.file(), t.tenant(),
                cliEnv));
        supervise(cluster, stopped);
    }

    /** The queue's {@code gantry.queue.*} settings from the options; a named file that is missing stops here. */
    static Map<String, String> queueProperties(Map<String, String> opts) {
        Map<String, String> queue = new LinkedHashMap<>();
        queue.put("gantry.queue.default-gpu-quota", opts.getOrDefault("gpu-quota", "64"));
        if (opts.containsKey("queue-config")) {
            Path queueConfig = Path.of(opts.get("queue-config")).toAbsolutePath();
            if (!Files.isRegularFile(queueConfig)) {
                fail("--queue-config " + queueConfig + ": no such file");
            }
            queue.put("gantry.queue.config-file", queueConfig.toString());
        }
        if (opts.containsKey("queue-shards")) {
            queue.put("gantry.queue.shards", opts.get("queue-shards"));
        }
        return queue;
    }

    /** Placement's {@code gantry.placement.*} settings from the options; a named file that is missing stops here. */
    static Map<String, String> placementProperties(Map<String, String> opts, Path dataDir, int port) {
        Map<String, String> placement = new LinkedHashMap<>();
        String backend = opts.getOrDefault("backend", "simulated");
        placement.put("gantry.placement.backend", backend);
        Map<String, String> pools = pools(opts);
        pools.forEach((name, b) -> placement.put("gantry.placement.pools." + name + ".backend", b));
        if (opts.containsKey("shard-by-pool")) {
            placement.put("gantry.placement.shard-by-pool", "true");
        }
        placement.put("gantry.placement.simulated.speedup", opts.getOrDefault("speedup", "1"));
        Map.of("local-gpus", "gantry.placement.local.gpus", "local-gpu-model", "gantry.placement.local.gpu-model",
                "namespace", "gantry.placement.kubernetes.namespace", "image", "gantry.placement.kubernetes.image",
                "slurm-partition", "gantry.placement.slurm.partition")
                .forEach((opt, key) -> {
                    if (opts.containsKey(opt)) {
                        placement.put(key, opts.get(opt));
                    }
                });
        Map.of("kubeconfig", "gantry.placement.kubernetes.kubeconfig",
                "cluster", "gantry.placement.simulated.cluster-file",
                "slurm-conf", "gantry.placement.slurm.conf").forEach((opt, key) -> {
                    if (opts.containsKey(opt)) {
                        Path file = Path.of(opts.get(opt)).toAbsolutePath();
                        if (!Files.isRegularFile(file)) {
                            fail("--" + opt + " " + file + ": no such file");
                        }
                        placement.put(key, file.toString());
                    }
                });
        if (backend.equals("slurm") || pools.containsValue("slurm")) {
            // the jobs report checkpoints to admission on whatever port it got, as local tasks do, and log under the
            // data directory (the dev controller's slurmd runs on this host, so it can write there)
            placement.put("gantry.placement.slurm.api-url", "http://127.0.0.1:" + port);
            placement.put("gantry.placement.slurm.work-dir", dataDir.resolve("slurm-runs").toString());
        }
        return placement;
    }

    /** {@code --pool NAME=BACKEND} options, in the order given; a malformed one stops here. */
    static Map<String, String> pools(Map<String, String> opts) {
        Map<String, String> pools = new LinkedHashMap<>();
        if (!opts.containsKey("pool")) {
            return pools;
        }
        for (String p : opts.get("pool").split(",")) {
            int eq = p.indexOf('=');
            String name = eq < 0 ? p : p.substring(0, eq);
            String b = eq < 0 ? "" : p.substring(eq + 1);
            if (!name.matches("[a-z0-9-]{1,32}")) {
                fail("--pool " + p + ": a pool name is 1-32 lower-case letters, digits or '-'");
            } else if (!BACKENDS.contains(b)) {
                fail("--pool " + p + ": the backend must be one of " + String.join(", ", BACKENDS));
            } else if (pools.put(name, b) != null) {
                fail("--pool " + name + " is given twice");
            }
        }
        return pools;
    }

    private static final List<String> BACKENDS = List.of("simulated", "local", "kubernetes", "slurm");

    /** Restarts a service that died on its own, at most 5 times a minute each. */
    private static void supervise(DevCluster cluster, CountDownLatch stopped) throws InterruptedException {
        Map<String, Deque<Long>> restarts = new HashMap<>();
        while (!stopped.await(2, TimeUnit.SECONDS)) {
            for (int k = 0; k < cluster.instances() * DevCluster.SERVICES.size(); k++) {
                String service = DevCluster.SERVICES.get(k % DevCluster.SERVICES.size());
                int instance = k / DevCluster.SERVICES.size();
                ServiceProcess p = cluster.service(service, instance);
                String name = service + (instance == 0 ? "" : " #" + instance);
                if (cluster.isShuttingDown()) {
                    return;
                }
                if (p.isAlive()) {
                    continue;
                }
                Deque<Long> recent = restarts.computeIfAbsent(name, n -> new ArrayDeque<>());
                long now = System.currentTimeMillis();
                while (!recent.isEmpty() && now - recent.peekFirst() > 60_000) {
                    recent.removeFirst();
                }
                if (recent.size() >= 5) {
                    continue;
                }
                recent.addLast(now);
                DevCluster.log(name + " exited; restarting (see " + p.logFile() + ")");
                try {
                    cluster.restart(service, instance);
                } catch (Exception e) {
                    DevCluster.log(name + " failed to restart: " + e.getMessage());
                }
            }
        }
    }

    static Map<String, String> parse(String[] args) {
        List<String> known = List.of("data-dir", "port", "kafka-port", "kafka-brokers", "instances", "postgres-port", "backend", "cluster", "speedup",
                "heartbeat-timeout", "gpu-quota", "queue-config", "service-heap", "local-gpus", "local-gpu-model",
                "kubeconfig", "namespace", "image", "slurm-conf", "slurm-partition", "pool", "queue-shards");
        Map<String, String> opts = CliArgs.parse(args, 1, known, List.of("shard-by-pool"), List.of("pool"), USAGE,
                Gantry::fail);
        if (opts.containsKey("shard-by-pool") && pools(opts).size() < 2) {
            fail("--shard-by-pool needs two or more --pool");
        }
        for (String numeric : List.of("gpu-quota", "local-gpus")) {
            if (opts.containsKey(numeric) && !opts.get(numeric).matches("\\d{1,5}")) {
                fail("--" + numeric + " must be a number");
            }
        }
        int instances = opts.containsKey("instances") && opts.get("instances").matches("[1-3]")
                ? Integer.parseInt(opts.get("instances")) : 1;
        for (String port : List.of("port", "kafka-port", "postgres-port")) {
            // the services listen on --port and the next 5 x instances - 1
            int last = port.equals("port") ? 65535 - DevCluster.SERVICES.size() * instances + 1 : 65535;
            if (opts.containsKey(port) && !(opts.get(port).matches("\\d{1,5}")
                    && Integer.parseInt(opts.get(port)) >= 1 && Integer.parseInt(opts.get(port)) <= last)) {
                fail("--" + port + " must be a port number from 1 to " + last);
            }
        }
        if (opts.containsKey("heartbeat-timeout") && !opts.get("heartbeat-timeout").matches("[1-9]\\d*(ms|s|m|h)")) {
            fail("--heartbeat-timeout must be a duration such as 500ms, 10s, 2m or 1h");
        }
        if (opts.containsKey("service-heap") && !opts.get("service-heap").matches("[1-9]\\d*[kKmMgG]?")) {
            fail("--service-heap must be a JVM heap size such as 256m or 1g");
        }
        if (opts.containsKey("queue-shards") && !opts.get("queue-shards").matches("[1-9]|[1-5][0-9]|6[0-4]")) {
            fail("--queue-shards must be a number from 1 to 64");
        }
        if (opts.containsKey("kafka-brokers") && !opts.get("kafka-brokers").matches("[1-9]")) {
            fail("--kafka-brokers must be a number from 1 to 9");
        }
        if (opts.containsKey("instances") && !opts.get("instances").matches("[1-3]")) {
            fail("--instances must be 1, 2 or 3");
        }
        if (opts.containsKey("backend") && !BACKENDS.contains(opts.get("backend"))) {
            fail("--backend must be simulated, local, kubernetes or slurm");
        }
        if (opts.containsKey("speedup") && !(opts.get("speedup").matches("\\d+(\\.\\d+)?")
                && Double.parseDouble(opts.get("speedup")) > 0)) {
            fail("--speedup must be a positive number");
        }
        return opts;
    }

    private static void fail(String message) {
        throw new BadOption(message);
    }

    /** An option {@code gantry dev} refuses before it starts anything: main prints it with the usage, exit 2. */
    static final class BadOption extends RuntimeException {
        BadOption(String message) {
            super(message);
        }
    }
}
