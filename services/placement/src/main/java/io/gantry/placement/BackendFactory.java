package io.gantry.placement;

import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.LocalBackend;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.backend.slurm.SlurmBackend;
import io.gantry.placement.backend.slurm.SlurmConfig;
import io.gantry.placement.backend.slurm.SlurmSettings;
import io.gantry.placement.backend.topology.HostTopology;
import io.gantry.placement.backend.topology.NodeTopology;
import io.gantry.placement.backend.kubernetes.KubernetesBackend;
import io.gantry.placement.backend.kubernetes.KubernetesSettings;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.gantry.placement.core.FirstFitPlacer;
import io.gantry.placement.core.GangPlacer;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.GpuSharing;
import io.gantry.placement.core.MigProfiles;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.RdmaNic;
import io.gantry.placement.core.TopologyPlacer;
import io.micronaut.context.env.Environment;
import io.micronaut.core.value.PropertyResolver;
import io.gantry.placement.core.Pools;
import java.util.LinkedHashMap;
import io.gantry.placement.kafka.PlacementProcessor;
import io.micronaut.context.annotation.Factory;
import io.micronaut.context.annotation.Value;
import io.micronaut.context.exceptions.ConfigurationException;
import jakarta.inject.Singleton;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Builds the placer, the virtual clock and the configured execution backend. */
@Factory
public class BackendFactory {
    private static final Logger LOG = LoggerFactory.getLogger(BackendFactory.class);

    /**
     * The configured pools: {@code gantry.placement.pools.<name>.backend} for each, else one pool {@code default}
     * with {@code gantry.placement.backend}. A pool's keys are {@code gantry.placement.pools.<name>.<key>}, falling
     * back to {@code gantry.placement.<key>} ({@link PoolProperties}); tiers are global. Every backend is started
     * here, so a node id listed by two pools refuses the start before any event is read or written.
     */
    @Singleton
    PlacementProcessor.Configured pools(Environment env, VirtualClock clock) throws IOException {
        Map<String, String> backends = poolBackends(env);
        List<PlacementProcessor.Pool> pools = new ArrayList<>();
        try {
            for (Map.Entry<String, String> pool : backends.entrySet()) {
                PropertyResolver p = env.getPropertyEntries(POOLS).isEmpty() ? env
                        : new PoolProperties(env, pool.getKey());
                ExecutionBackend backend = backend(pool.getValue(), clock, p);
                pools.add(new PlacementProcessor.Pool(pool.getKey(), backend, placer(p, env),
                        p.getProperty("gantry.placement." + pool.getValue() + ".heartbeat-interval", Duration.class)
                                .orElse(Duration.ofSeconds(1))));
            }
            Map<String, List<String>> nodes = new LinkedHashMap<>();
            pools.forEach(pool -> nodes.put(pool.name(), pool.backend().nodes().stream().map(NodeSpec::nodeId).toList()));
            Pools.duplicateNode(nodes).ifPresent(refusal -> {
                throw new ConfigurationException("gantry.placement.pools: " + refusal);
            });
        } catch (RuntimeException | IOException e) {
            pools.forEach(pool -> pool.backend().close());
            throw e;
        }
        return new PlacementProcessor.Configured(pools);
    }

    static final String POOLS = "gantry.placement.pools";

    /**
     * Pool name to backend name, by pool name ({@code default} first when configured: the pool of jobs naming
     * none); one pool {@code default} with {@code gantry.placement.backend} (simulated) when no pool is configured.
     */
    static Map<String, String> poolBackends(PropertyResolver env) {
        Map<String, String> pools = new LinkedHashMap<>();
        java.util.SortedSet<String> names = new java.util.TreeSet<>(env.getPropertyEntries(POOLS));
        if (names.isEmpty()) {
            pools.put(Pools.DEFAULT, env.getProperty("gantry.placement.backend", String.class).orElse(SimulatedBackend.NAME));
            return pools;
        }
        if (names.remove(Pools.DEFAULT)) {
            pools.put(Pools.DEFAULT, null);
        }
        names.forEach(name -> pools.put(name, null));
        for (String name : pools.keySet()) {
            try {
                Pools.checkName(name);
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(POOLS + ": " + e.getMessage());
            }
            pools.put(name, env.getProperty(POOLS + "." + name + ".backend", String.class).map(String::trim)
                    .orElseThrow(() -> new ConfigurationException(POOLS + "." + name + ".backend is missing: "
                            + "`simulated`, `local`, `kubernetes` or `slurm`")));
        }
        return pools;
    }

    /** A pool's placer: {@code placer}, {@code policy}, {@code gpu-overcommit}, {@code mig.*} of the pool; tiers global. */
    static GangPlacer placer(PropertyResolver pool, PropertyResolver env) {
        String name = pool.getProperty("gantry.placement.placer", String.class).orElse("topology");
        String policy = pool.getProperty("gantry.placement.policy", String.class).orElse("binpack");
        String overcommit = pool.getProperty("gantry.placement.gpu-overcommit", String.class).orElse("1.0");
        if ("first-fit".equals(name)) {
            return new FirstFitPlacer(tiers(env.getProperties("gantry.placement.tiers")));
        }
        if (!"topology".equals(name)) {
            throw new ConfigurationException("gantry.placement.placer must be `topology` or `first-fit`, was `" + name + "`");
        }
        PlacementPolicy p;
        try {
            p = PlacementPolicy.valueOf(policy.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("gantry.placement.policy must be `binpack` or `spread`, was `" + policy + "`");
        }
        return new TopologyPlacer(p, tiers(env.getProperties("gantry.placement.tiers")),
                sharing(overcommit, pool.getProperties("gantry.placement.mig")));
    }

    /** {@code gantry.placement.gpu-overcommit} (factor >= 1.0) and {@code gantry.placement.mig.<model>=<shape>}. */
    static GpuSharing sharing(String overcommit, Map<String, Object> mig) {
        double factor;
        try {
            factor = Double.parseDouble(overcommit.trim());
        } catch (NumberFormatException e) {
            throw new ConfigurationException("gantry.placement.gpu-overcommit must be a number >= 1.0, was `"
                    + overcommit + "`");
        }
        Map<String, String> shapes = new TreeMap<>();
        mig.forEach((model, shape) -> shapes.put(model, String.valueOf(shape)));
        try {
            return new GpuSharing(factor, new MigProfiles(shapes));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException((e.getMessage().startsWith("GPU overcommit")
                    ? "gantry.placement.gpu-overcommit: " : "gantry.placement.mig: ") + e.getMessage());
        }
    }

    /** {@code gantry.placement.tiers.<tier>=H100,A100} (or a YAML list): tier name to models in preference order. */
    static Map<String, List<String>> tiers(Map<String, Object> raw) {
        Map<String, List<String>> tiers = new TreeMap<>();
        raw.forEach((tier, value) -> {
            List<String> models = new ArrayList<>();
            if (value instanceof Collection<?> c) {
                c.forEach(m -> models.add(String.valueOf(m).trim()));
            } else {
                for (String m : String.valueOf(value).split(",")) {
                    models.add(m.trim());
                }
            }
            models.removeIf(String::isEmpty);
            if (models.isEmpty()) {
                throw new ConfigurationException("gantry.placement.tiers." + tier + ": needs at least one GPU model");
            }
            tiers.put(tier, List.copyOf(models));
        });
        return tiers;
    }

    /**
     * Placement's one clock, shared by its pools. Real processes, pods and Slurm jobs run in real time: the speed-up
     * applies only when every pool is simulated.
     */
    @Singleton
    VirtualClock clock(Environment env, @Value("${gantry.placement.simulated.speedup:1.0}") double speedup) {
        boolean simulated = poolBackends(env).values().stream().allMatch(SimulatedBackend.NAME::equals);
        return new VirtualClock(Clock.systemUTC(), simulated ? speedup : 1.0);
    }

    /**
     * The simulated backend's device faults and pre-flight checks: {@code gantry.placement.simulated.fault-file}
     * (faults injected at virtual times), {@code gantry.placement.simulated.preflight-failure-probability} (0) and
     * {@code gantry.placement.simulated.preflight-seed} (42). Read here, not as parameters, so the factory's signature
     * stays that of every backend.
     */
    static SimulatedBackend simulatedFaults(SimulatedBackend sim, PropertyResolver env) throws IOException {
        String faultFile = env.getProperty("gantry.placement.simulated.fault-file", String.class).orElse("");
        if (!faultFile.isBlank()) {
            try {
                sim.withFaultSchedule(io.gantry.placement.backend.FaultFile.parse(
                        java.nio.file.Files.readString(Path.of(faultFile))));
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("gantry.placement.simulated.fault-file " + faultFile + ": "
                        + e.getMessage(), e);
            }
        }
        double p = env.getProperty("gantry.placement.simulated.preflight-failure-probability", Double.class).orElse(0.0);
        long seed = env.getProperty("gantry.placement.simulated.preflight-seed", Long.class).orElse(42L);
        try {
            return sim.withPreflightFailures(p, seed);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("gantry.placement.simulated.preflight-failure-probability: "
                    + e.getMessage(), e);
        }
    }

    /** A pool's execution backend, from the pool's keys ({@code env}: the pool's view of the configuration). */
    static ExecutionBackend backend(String backendName, VirtualClock clock, PropertyResolver env) throws IOException {
        if (SimulatedBackend.NAME.equals(backendName)) {
            String clusterFile = string(env, "simulated.cluster-file", "");
            long defaultRunSeconds = env.getProperty("gantry.placement.simulated.default-run-seconds", Long.class)
                    .orElse(60L);
            List<NodeSpec> nodes;
            try {
                nodes = clusterFile.isBlank() ? ClusterFile.defaultCluster() : ClusterFile.load(Path.of(clusterFile));
            } catch (IllegalArgumentException e) {
                // refuse to start: a cluster that cannot be described cannot be placed on
                throw new ConfigurationException("gantry.placement.simulated.cluster-file " + e.getMessage(), e);
            }
            if (defaultRunSeconds < 0) {
                throw new ConfigurationException("gantry.placement.simulated.default-run-seconds must be >= 0 (0: a task "
                        + "without runSeconds runs until cancelled), was " + defaultRunSeconds);
            }
            SimulatedBackend sim = simulatedFaults(new SimulatedBackend(nodes, defaultRunSeconds), env);
            Integer busy = env.getProperty("gantry.placement.simulated.gpu-utilisation", Integer.class).orElse(null);
            try {
                return sim.withGpuUtilisation(busy);
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("gantry.placement.simulated.gpu-utilisation: " + e.getMessage(), e);
            }
        }
        if (KubernetesBackend.NAME.equals(backendName)) {
            return kubernetes(env);
        }
        if (SlurmBackend.NAME.equals(backendName)) {
            return slurm(env, clock);
        }
        if (!LocalBackend.NAME.equals(backendName)) {
            throw new ConfigurationException("gantry.placement.backend must be `simulated`, `local`, `kubernetes` or "
                    + "`slurm`, was `" + backendName + "`");
        }
        String nvidiaSmi = string(env, "local.nvidia-smi", "nvidia-smi");
        int gpus = env.getProperty("gantry.placement.local.gpus", Integer.class).orElse(0);
        String gpuModel = string(env, "local.gpu-model", "generic");
        long gpuMemory = env.getProperty("gantry.placement.local.gpu-memory-mib", Long.class).orElse(0L);
        boolean migCapable = env.getProperty("gantry.placement.local.gpu-mig-capable", Boolean.class).orElse(false);
        int cpuMillis = env.getProperty("gantry.placement.local.cpu-millis", Integer.class).orElse(0);
        long memoryMiB = env.getProperty("gantry.placement.local.memory-mib", Long.class).orElse(0L);
        String workDir = string(env, "local.work-dir", "");
        String runAs = string(env, "local.run-as", LocalBackend.PER_TENANT);
        long tenantBase = env.getProperty("gantry.placement.local.tenant-uid-base", Long.class)
                .orElse(LocalBackend.DEFAULT_TENANT_BASE);
        String rdmaNics = string(env, "local.rdma-nics", "");
        boolean pinCpus = env.getProperty("gantry.placement.local.pin-cpus", Boolean.class).orElse(false);
        String apiUrl = string(env, "local.api-url", "");
        Optional<NodeTopology.Discovered> discovered = HostTopology.discover(nvidiaSmi, HostTopology.SYS_NODES,
                Duration.ofSeconds(20));
        NodeSpec node = localNode(gpus, gpuModel, gpuMemory, migCapable, cpuMillis, memoryMiB, rdmaNics, discovered);
        discovered.ifPresent(d -> LOG.info("local node from nvidia-smi: {} GPU(s) {}, {} NUMA socket(s), NICs {}",
                d.gpus().size(), d.gpus().stream().map(Gpu::model).distinct().toList(), d.sockets(),
                d.nics().stream().map(RdmaNic::name).toList()));
        Path dir = workDir.isBlank() ? Path.of(System.getProperty("java.io.tmpdir"), "gantry-placement")
                : Path.of(workDir);
        boolean root = "root".equals(System.getProperty("user.name"));
        LocalBackend.RunAs as = !root ? null : runAs.equals(LocalBackend.PER_TENANT)
                ? LocalBackend.RunAs.perTenant(tenantBase) : LocalBackend.resolveRunAs(runAs);
        LOG.warn("the local backend runs tenants' commands on this host (work dir {}, {})", dir,
                as == null ? "as " + System.getProperty("user.name")
                        : as.isPerTenant() ? "each tenant as its own uid from " + tenantBase + " via setpriv"
                        : "as " + runAs + " via setpriv");
        return localHealth(new LocalBackend(node, dir, as, clock, pinCpus, apiUrl), env, nvidiaSmi);
    }

    /**
     * The local backend's GPU health reader and pre-flight check: {@code gantry.placement.local.health-interval}
     * (10s; 0 turns the reader off), {@code gantry.placement.local.kernel-log} (none), and
     * {@code gantry.placement.local.preflight-command} (none: every check passes; split on spaces, run without a
     * shell) with {@code gantry.placement.local.preflight-timeout} (10s). Read here so the factory's signature stays.
     */
    static LocalBackend localHealth(LocalBackend local, PropertyResolver env, String nvidiaSmi) {
        Duration every = env.getProperty("gantry.placement.local.health-interval", Duration.class)
                .orElse(Duration.ofSeconds(10));
        String kernelLog = env.getProperty("gantry.placement.local.kernel-log", String.class).orElse("").trim();
        if (!every.isZero() && !every.isNegative()) {
            local.withHealth(LocalBackend.hostHealth(nvidiaSmi, kernelLog.isEmpty() ? null : Path.of(kernelLog)), every);
        }
        String preflight = env.getProperty("gantry.placement.local.preflight-command", String.class).orElse("").trim();
        if (!preflight.isEmpty()) {
            local.withPreflight(List.of(preflight.split("\\s+")),
                    env.getProperty("gantry.placement.local.preflight-timeout", Duration.class)
                            .orElse(Duration.ofSeconds(10)));
        }
        return local;
    }

    /** The Slurm backend: reads the controller's nodes at start; refuses to start without them (with the reason). */
    private static ExecutionBackend slurm(PropertyResolver environment, VirtualClock clock) {
        SlurmConfig config;
        try {
            config = SlurmSettings.config(environment);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), e);
        }
        try {
            return SlurmBackend.connect(config, SlurmSettings.commands(environment, config), clock);
        } catch (IllegalStateException e) {
            throw new ConfigurationException("gantry.placement.backend=slurm: " + e.getMessage(), e);
        }
    }

    /**
     * The Kubernetes backend: a client configured from {@code gantry.placement.kubernetes.kubeconfig} when set,
     * else the usual way (in a pod: its service account; outside: {@code KUBECONFIG} or {@code ~/.kube/config},
     * context {@code gantry.placement.kubernetes.context} or the current one). Nothing of the configuration is
     * logged but the API server's address and the namespace.
     */
    static KubernetesBackend kubernetes(PropertyResolver env) {
        java.util.function.BiFunction<String, String, String> get = (key, def) ->
                env.getProperty("gantry.placement.kubernetes." + key, String.class).orElse(def).trim();
        Config config;
        String kubeconfig = get.apply("kubeconfig", "");
        String context = get.apply("context", "");
        try {
            if (!kubeconfig.isEmpty()) {
                config = Config.fromKubeconfig(context.isEmpty() ? null : context,
                        java.nio.file.Files.readString(Path.of(kubeconfig)), kubeconfig);
            } else {
                config = Config.autoConfigure(context.isEmpty() ? null : context);
            }
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("gantry.placement.kubernetes: cannot configure the Kubernetes client ("
                    + e.getClass().getSimpleName() + ")", e);
        }
        KubernetesSettings d = KubernetesSettings.defaults();
        String namespace = get.apply("namespace", "");
        if (namespace.isEmpty()) {
            namespace = config.getNamespace() == null || config.getNamespace().isBlank() ? "default" : config.getNamespace();
        }
        KubernetesSettings settings;
        try {
            settings = new KubernetesSettings(namespace, get.apply("image", d.image()),
                    number(get, "grace-seconds", d.graceSeconds()),
                    get.apply("gpu-resource", d.gpuResource()), get.apply("model-label", d.modelLabel()),
                    get.apply("memory-label", d.memoryLabel()), get.apply("mig-label", d.migLabel()),
                    get.apply("rack-label", d.rackLabel()), get.apply("spine-label", d.spineLabel()),
                    get.apply("topology-annotation", d.topologyAnnotation()), get.apply("node-selector", ""),
                    (int) number(get, "master-port", d.masterPort()),
                    get.apply("api-url", ""),
                    (int) number(get, "create-attempts", d.createAttempts()),
                    env.getProperty("gantry.placement.kubernetes.retry-backoff", Duration.class).orElse(d.retryBackoff()),
                    env.getProperty("gantry.placement.kubernetes.resync-interval", Duration.class)
                            .orElse(d.resyncInterval()),
                    env.getProperty("gantry.placement.kubernetes.image-pull-timeout", Duration.class)
                            .orElse(d.imagePullTimeout()),
                    get.apply("toleration-key", d.tolerationKey()),
                    env.getProperty("gantry.placement.kubernetes.foreign-scan-interval", Duration.class)
                            .orElse(d.foreignScanInterval()),
                    java.util.Arrays.asList(get.apply("allowed-host-paths", "").split(",")));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("gantry.placement.kubernetes: " + e.getMessage(), e);
        }
        Duration startup = env.getProperty("gantry.placement.kubernetes.startup-timeout", Duration.class)
                .orElse(Duration.ofSeconds(30));
        LOG.info("the kubernetes backend runs tasks as pods in namespace {} of {}", settings.namespace(),
                config.getMasterUrl());
        return new KubernetesBackend(new KubernetesClientBuilder().withConfig(config).build(), settings).start(startup);
    }

    /**
     * The {@code local} node: the GPUs {@code nvidia-smi} discovered (models, memory, MIG mode, NVLink domains, PCIe
     * switches, NUMA sockets and their CPUs, RDMA NICs) when it ran, else {@code gpus} GPUs of {@code gpuModel}.
     * Configured NICs replace discovered ones; a configured CPU amount is shared out over the discovered sockets.
     */
    static NodeSpec localNode(int gpus, String gpuModel, long gpuMemory, boolean migCapable, int cpuMillis,
                              long memoryMiB, String rdmaNics, Optional<NodeTopology.Discovered> discovered) {
        long memory = memoryMiB > 0 ? memoryMiB : hostMemoryMiB();
        List<RdmaNic> nics;
        try {
            nics = localNics(rdmaNics);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("gantry.placement.local.rdma-nics: " + e.getMessage(), e);
        }
        Map<String, String> labels = new TreeMap<>(Map.of("host", hostname()));
        List<Gpu> devices = new ArrayList<>();
        List<Integer> numaCpuMillis = List.of();
        int cpu;
        if (discovered.isPresent()) {
            NodeTopology.Discovered d = discovered.get();
            devices.addAll(d.gpus());
            labels.putAll(d.labels());
            int found = d.numaCpuMillis().stream().mapToInt(Integer::intValue).sum();
            cpu = cpuMillis > 0 ? cpuMillis : found > 0 ? found : Runtime.getRuntime().availableProcessors() * 1000;
            numaCpuMillis = d.numaCpuMillis(cpu);
            if (nics.isEmpty()) {
                nics = d.nics();
            }
        } else {
            for (int i = 0; i < gpus; i++) {
                devices.add(new Gpu(i, gpuModel, gpuMemory).withMigCapable(migCapable));
            }
            cpu = cpuMillis > 0 ? cpuMillis : Runtime.getRuntime().availableProcessors() * 1000;
        }
        try {
            return new NodeSpec(LocalBackend.NODE_ID, LocalBackend.NAME, devices, cpu, memory, labels, numaCpuMillis,
                    nics);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("gantry.placement.local: " + e.getMessage(), e);
        }
    }

    /** {@code gantry.placement.<key>}, or {@code def} when unset. */
    private static String string(PropertyResolver env, String key, String def) {
        return env.getProperty("gantry.placement." + key, String.class).orElse(def);
    }

    private static long number(java.util.function.BiFunction<String, String, String> get, String key, long def) {
        String value = get.apply(key, Long.toString(def));
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new ConfigurationException("gantry.placement.kubernetes." + key + " must be a whole number, was `"
                    + value + "`");
        }
    }

    /** {@code mlx5_0:0:0:200,mlx5_1:0:1:200}: name, NUMA socket, PCIe switch (-1: none), Gbit/s. */
    static List<RdmaNic> localNics(String value) {
        List<RdmaNic> nics = new ArrayList<>();
        for (String item : value.split(",")) {
            if (item.isBlank()) {
                continue;
            }
            String[] f = item.trim().split(":");
            try {
                nics.add(new RdmaNic(f[0], f.length > 1 ? Integer.parseInt(f[1]) : 0,
                        f.length > 2 ? Integer.parseInt(f[2]) : RdmaNic.NO_SWITCH,
                        f.length > 3 ? Integer.parseInt(f[3]) : 0));
            } catch (NumberFormatException e) {
                throw new ConfigurationException("gantry.placement.local.rdma-nics: `" + item
                        + "` must be name[:numaNode[:pcieSwitch[:gbps]]]");
            }
        }
        return nics;
    }

    private static long hostMemoryMiB() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize() / (1024 * 1024);
        }
        return Runtime.getRuntime().maxMemory() / (1024 * 1024);
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
