package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.RunOutcome;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.placement.kafka.PlacementHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The Kubernetes backend against fabric8's mock API server in CRUD mode (the test plays the kubelet). */
class KubernetesBackendTest {
    private static final AtomicInteger NS = new AtomicInteger();
    private static MockCluster cluster;
    private final List<KubernetesBackend> backends = new ArrayList<>();
    private final List<RunOutcome> outcomes = new ArrayList<>();
    private String ns;

    @BeforeAll
    static void startServer() {
        cluster = new MockCluster();
    }

    /** Backends of finished tests, closed after the last one (see {@link #haltBackends}). */
    private static final List<KubernetesBackend> HALTED = new ArrayList<>();

    @AfterAll
    static void stopServer() {
        HALTED.forEach(KubernetesBackend::close);
        cluster.close();
    }

    /**
     * Halted, not closed: closing a watch while fabric8's mock server sends an event can stall the server for up to
     * 30 s (see {@link MockCluster.Proxy}), which would fail the next test.
     */
    @AfterEach
    void haltBackends() {
        backends.forEach(KubernetesBackend::halt);
        HALTED.addAll(backends);
    }

    private KubernetesBackend backend(MockCluster.Proxy proxy, Function<KubernetesSettings, KubernetesSettings> tweak) {
        KubernetesSettings s = tweak.apply(KubernetesSettings.defaults().withNamespace(ns)
                .withRetries(3, Duration.ofMillis(50)));
        KubernetesBackend b = new KubernetesBackend(cluster.client(proxy), s).start(Duration.ofSeconds(10));
        backends.add(b);
        return b;
    }

    private KubernetesBackend backend() {
        ns = ns == null ? "k" + NS.incrementAndGet() : ns;
        return backend(null, s -> s);
    }

    private void newNamespace() {
        ns = "k" + NS.incrementAndGet();
    }

    static Allocation gang(String job, String... nodes) {
        List<PlacedTask> tasks = new ArrayList<>();
        for (int r = 0; r < nodes.length; r++) {
            tasks.add(new PlacedTask("worker", r, nodes[r], "H100", List.of(4, 5, 6, 7), 8000, 65536, List.of(48, 49),
                    null, List.of(), List.of("mlx5_4")));
        }
        return new Allocation("a-" + job + "-0000-0000-0000-000000000001", job, "vision", 1, tasks,
                Instant.parse("2026-11-24T10:00:00Z"), KubernetesBackend.NAME);
    }

    static RunPlan plan() {
        return new RunPlan(Map.of("worker", new RunPlan.Task(List.of("python", "train.py"), null)), "s3cr3t-token",
                "/ckpt/job", null);
    }

    private List<Pod> podsOf(Allocation a) {
        return cluster.pods(ns).stream().filter(p -> a.allocationId().equals(p.getMetadata().getLabels()
                .get(GangManifest.ALLOCATION))).toList();
    }

    private List<Pod> awaitPods(Allocation a, int n) {
        await().atMost(Duration.ofSeconds(15)).until(() -> podsOf(a).size() == n);
        return podsOf(a);
    }

    private RunOutcome awaitOutcome(ExecutionBackend b) {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            outcomes.addAll(b.poll(Instant.now()));
            return !outcomes.isEmpty();
        });
        return outcomes.remove(0);
    }

    private static Map<String, String> env(Pod pod) {
        return pod.getSpec().getContainers().get(0).getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @Test
    void aGangBecomesPodsBoundToTheirNodesWithDevicesAndRendezvousAndSucceedsWhenAllDo() {
        newNamespace();
        cluster.node("gl-1", 8, true, Map.of());
        cluster.node("gl-2", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = gang("train-1", "gl-1", "gl-2");

        assertThat(b.start(a, plan(), Instant.now())).isEmpty();
        List<Pod> pods = awaitPods(a, 2);

        String base = GangManifest.baseName(a.allocationId());
        Pod rank0 = pods.stream().filter(p -> "0".equals(p.getMetadata().getLabels().get(GangManifest.RANK)))
                .findFirst().orElseThrow();
        Pod rank1 = pods.stream().filter(p -> p != rank0).findFirst().orElseThrow();
        assertThat(rank0.getSpec().getNodeName()).isEqualTo("gl-1");
        assertThat(rank1.getSpec().getNodeName()).isEqualTo("gl-2");
        assertThat(rank0.getSpec().getRestartPolicy()).isEqualTo("Never");
        assertThat(rank0.getSpec().getSubdomain()).isEqualTo(base);
        assertThat(rank0.getSpec().getAutomountServiceAccountToken()).isFalse();
        assertThat(rank0.getMetadata().getLabels()).containsEntry(GangManifest.JOB, "train-1")
                .containsEntry(GangManifest.ATTEMPT, "1").containsEntry(GangManifest.TASK, "worker")
                .containsEntry(GangManifest.MANAGED_BY, GangManifest.MANAGER);
        assertThat(rank0.getMetadata().getAnnotations()).containsEntry(GangManifest.JOB_ID_ANNOTATION, "train-1")
                .containsEntry(GangManifest.TENANT_ANNOTATION, "vision");
        var limits = rank0.getSpec().getContainers().get(0).getResources().getLimits();
        assertThat(limits.get("nvidia.com/gpu").toString()).isEqualTo("4");
        assertThat(limits.get("cpu").toString()).isEqualTo("8000m");
        assertThat(rank0.getSpec().getContainers().get(0).getResources().getRequests()).isEqualTo(limits);
        assertThat(rank0.getSpec().getContainers().get(0).getCommand()).containsExactly("python", "train.py");
        String master = rank0.getMetadata().getName() + "." + base + "." + ns + ".svc";
        assertThat(env(rank1)).containsEntry("NVIDIA_VISIBLE_DEVICES", "4,5,6,7")
                .containsEntry("CUDA_VISIBLE_DEVICES", "0,1,2,3").containsEntry("GANTRY_GPU_INDICES", "4,5,6,7")
                .containsEntry("MASTER_ADDR", master).containsEntry("MASTER_PORT", "29500")
                .containsEntry("WORLD_SIZE", "2").containsEntry("RANK", "1").containsEntry("PET_NNODES", "2")
                .containsEntry("PET_NODE_RANK", "1").containsEntry("PET_NPROC_PER_NODE", "4")
                .containsEntry("GANTRY_CPU_SET", "48-49").containsEntry("NCCL_IB_HCA", "mlx5_4")
                .containsEntry("GANTRY_CHECKPOINT_DIR", "/ckpt/job").containsEntry("GANTRY_JOB_ID", "train-1");
        // the run token is only in a secret the pod refers to, never in the pod spec
        assertThat(rank0.toString()).doesNotContain("s3cr3t-token");
        assertThat(rank0.getSpec().getContainers().get(0).getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("GANTRY_RUN_TOKEN");
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo(base + "-run");
        });
        var secret = cluster.admin.secrets().inNamespace(ns).withName(base + "-run").get();
        // the mock keeps stringData as written; a real API server turns it into data
        assertThat(secret.getStringData()).containsEntry(GangManifest.TOKEN_KEY, "s3cr3t-token");
        Service svc = cluster.admin.services().inNamespace(ns).withName(base).get();
        assertThat(svc.getSpec().getClusterIP()).isEqualTo("None");
        assertThat(svc.getSpec().getSelector()).containsEntry(GangManifest.ALLOCATION, a.allocationId());

        cluster.running(ns, rank0.getMetadata().getName());
        cluster.finish(ns, rank0.getMetadata().getName(), 0);
        assertThat(b.poll(Instant.now())).isEmpty();
        cluster.finish(ns, rank1.getMetadata().getName(), 0);
        RunOutcome o = awaitOutcome(b);

        assertThat(o.allocationId()).isEqualTo(a.allocationId());
        assertThat(o.result().succeeded()).isTrue();

        b.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).isEmpty()
                && cluster.admin.services().inNamespace(ns).withName(base).get() == null
                && cluster.admin.secrets().inNamespace(ns).withName(base + "-run").get() == null);
        assertThat(b.poll(Instant.now())).isEmpty();
    }

    @Test
    void aPreemptionNoticeIsSetOnEveryPodOfTheRunWhichSeesItAsAFileBeforeItsDeletion() {
        newNamespace();
        cluster.node("pn-1", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = gang("noticed", "pn-1", "pn-1");
        b.start(a, plan(), Instant.now());
        List<Pod> pods = awaitPods(a, 2);
        assertThat(env(pods.get(0))).containsEntry("GANTRY_PREEMPTION_NOTICE", GangManifest.NOTICE_FILE);
        assertThat(pods.get(0).getSpec().getVolumes()).anySatisfy(v -> assertThat(v.getDownwardAPI().getItems())
                .singleElement().satisfies(i -> assertThat(i.getFieldRef().getFieldPath())
                        .isEqualTo("metadata.annotations['" + GangManifest.PREEMPTION_ANNOTATION + "']")));
        assertThat(pods.get(0).getSpec().getContainers().get(0).getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo(GangManifest.NOTICE_DIR));

        Instant now = Instant.parse("2026-11-25T04:00:00Z");
        b.notice(a.allocationId(), new io.gantry.placement.backend.PreemptionNotice("noticed", 1, "PREEMPTED",
                "queue vision reclaims 8 x H100", now, now.plusSeconds(30)));

        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).stream().allMatch(p ->
                p.getMetadata().getAnnotations().getOrDefault(GangManifest.PREEMPTION_ANNOTATION, "")
                        .contains("\"deadline\":\"2026-11-25T04:00:30Z\"")));
        b.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).isEmpty());
    }

    @Test
    void aTasksImageEnvironmentWorkingDirectoryAndMountsReachItsPod() {
        newNamespace();
        cluster.node("rt-1", 8, true, Map.of());
        KubernetesBackend b = backend(null, s -> s.withAllowedHostPaths(List.of("/mnt")));
        Allocation a = new Allocation("a-runtime-0000-0000-0000-000000000001", "runtime", "vision", 1, List.of(
                new PlacedTask("launcher", 0, "rt-1", null, List.of(), 1000, 1024),
                new PlacedTask("worker", 0, "rt-1", "H100", List.of(2), 1000, 1024)),
                Instant.parse("2026-11-24T10:00:00Z"), KubernetesBackend.NAME);
        RunPlan plan = new RunPlan(Map.of(
                "launcher", new RunPlan.Task(List.of("mpirun", "train"), null, Map.of("OMP_NUM_THREADS", "4",
                        "CUDA_VISIBLE_DEVICES", "9"), "/workspace", "nvcr.io/nvidia/pytorch:24.05-py3",
                        List.of(new RunPlan.Mount("/data", null, "datasets", true),
                                new RunPlan.Mount("/scratch", "/mnt/nvme", null, false))),
                "worker", new RunPlan.Task(List.of("sleep", "infinity"), null)), "token", null);

        assertThat(b.start(a, plan, Instant.now())).isEmpty();
        List<Pod> pods = awaitPods(a, 2);

        Pod launcher = pods.stream().filter(p -> "launcher".equals(p.getMetadata().getLabels().get(GangManifest.TASK)))
                .findFirst().orElseThrow();
        Pod worker = pods.stream().filter(p -> p != launcher).findFirst().orElseThrow();
        var container = launcher.getSpec().getContainers().get(0);
        assertThat(container.getImage()).isEqualTo("nvcr.io/nvidia/pytorch:24.05-py3");
        assertThat(container.getWorkingDir()).isEqualTo("/workspace");
        assertThat(env(launcher)).containsEntry("OMP_NUM_THREADS", "4")
                .as("Gantry's devices win").containsEntry("CUDA_VISIBLE_DEVICES", "")
                .containsEntry("RANK", "0").containsEntry("WORLD_SIZE", "2");
        assertThat(container.getEnv()).extracting(EnvVar::getName).doesNotHaveDuplicates();
        assertThat(container.getVolumeMounts()).extracting(m -> m.getMountPath() + ":" + m.getReadOnly())
                .containsExactly("/data:true", "/scratch:false", GangManifest.NOTICE_DIR + ":true");
        var volumes = launcher.getSpec().getVolumes();
        assertThat(volumes).hasSize(3);
        assertThat(volumes.get(0).getName()).isEqualTo(container.getVolumeMounts().get(0).getName());
        assertThat(volumes.get(0).getPersistentVolumeClaim().getClaimName()).isEqualTo("datasets");
        assertThat(volumes.get(0).getPersistentVolumeClaim().getReadOnly()).isTrue();
        assertThat(volumes.get(1).getHostPath().getPath()).isEqualTo("/mnt/nvme");
        assertThat(worker.getSpec().getContainers().get(0).getImage()).as("the configured image")
                .isEqualTo(KubernetesSettings.defaults().image());
        assertThat(worker.getSpec().getVolumes()).as("only the preemption notice").singleElement()
                .satisfies(v -> assertThat(v.getDownwardAPI()).isNotNull());
        assertThat(worker.getSpec().getContainers().get(0).getWorkingDir()).isNull();
        assertThat(env(worker)).containsEntry("RANK", "1").doesNotContainKey("OMP_NUM_THREADS");
    }

    @Test
    void aHostPathTheOperatorDidNotAllowFailsTheRunSayingSoAndCreatesNothing() {
        newNamespace();
        cluster.node("hp-1", 8, true, Map.of());
        KubernetesBackend b = backend(null, s -> s.withAllowedHostPaths(List.of("/mnt/datasets")));
        Allocation a = gang("hostpath", "hp-1");
        RunPlan plan = new RunPlan(Map.of("worker", new RunPlan.Task(List.of("python", "train.py"), null, Map.of(),
                null, null, List.of(new RunPlan.Mount("/host", "/var/run", null, false)))));

        Optional<RunOutcome> failed = b.start(a, plan, Instant.now());

        assertThat(failed).hasValueSatisfying(o -> assertThat(o.result().message())
                .contains("mounts the node's /var/run, which gantry.placement.kubernetes.allowed-host-paths does not "
                        + "allow ([/mnt/datasets])"));
        assertThat(podsOf(a)).isEmpty();
    }

    @Test
    void underASuccessPolicyTheLeadersPodSucceedingEndsTheRunAndItsReleaseDeletesTheWorkers() {
        newNamespace();
        cluster.node("sp-1", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = new Allocation("a-leader-0000-0000-0000-000000000001", "leader", "vision", 1, List.of(
                new PlacedTask("launcher", 0, "sp-1", null, List.of(), 1000, 1024),
                new PlacedTask("worker", 0, "sp-1", "H100", List.of(0), 1000, 1024),
                new PlacedTask("worker", 1, "sp-1", "H100", List.of(1), 1000, 1024)),
                Instant.parse("2026-11-24T10:00:00Z"), KubernetesBackend.NAME);
        RunPlan plan = new RunPlan(Map.of("launcher", new RunPlan.Task(List.of("mpirun"), null),
                "worker", new RunPlan.Task(List.of("sleep", "infinity"), null))).withSuccessLeader("launcher");
        b.start(a, plan, Instant.now());
        awaitPods(a, 3);

        cluster.finish(ns, GangManifest.podName(a.allocationId(), "worker", 0), 0);
        assertThat(b.poll(Instant.now())).as("a worker's end decides nothing").isEmpty();
        cluster.finish(ns, GangManifest.podName(a.allocationId(), "launcher", 0), 0);
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).as(o.toString()).isTrue();
        b.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).isEmpty());
    }

    @Test
    void aFailedPodFailsTheRunWithItsExitCodeAndTheRestIsDeletedOnRelease() {
        newNamespace();
        cluster.node("fl-1", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = gang("fails", "fl-1", "fl-1");
        b.start(a, plan(), Instant.now());
        List<Pod> pods = awaitPods(a, 2);

        cluster.finish(ns, pods.get(1).getMetadata().getName(), 3);
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().exitCode()).isEqualTo(3);
        assertThat(o.result().message()).contains("task worker-").contains("exited with 3").contains("fl-1");
        b.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).isEmpty());
    }

    @Test
    void aContainerThatCanNeverStartFailsTheRunAndAnImageNotPulledInTimeToo() {
        newNamespace();
        cluster.node("ws-1", 8, true, Map.of());
        KubernetesBackend b = backend(null, s -> s.withImagePullTimeout(Duration.ofSeconds(30)));
        Allocation config = gang("bad-config", "ws-1");
        Allocation pull = gang("no-image", "ws-1");
        b.start(config, plan(), Instant.now());
        b.start(pull, plan(), Instant.now());
        String configPod = awaitPods(config, 1).get(0).getMetadata().getName();
        String pullPod = awaitPods(pull, 1).get(0).getMetadata().getName();

        cluster.waiting(ns, configPod, "CreateContainerConfigError");
        RunOutcome o = awaitOutcome(b);
        assertThat(o.allocationId()).isEqualTo(config.allocationId());
        assertThat(o.result().message()).contains("cannot start: CreateContainerConfigError");

        cluster.waiting(ns, pullPod, "ImagePullBackOff");
        Instant first = Instant.now();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            outcomes.addAll(b.poll(first));
            return true;
        });
        assertThat(outcomes).as("still within the pull timeout").isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            outcomes.addAll(b.poll(first.plusSeconds(31)));
            return outcomes.isEmpty();
        });
        cluster.waiting(ns, pullPod, "ErrImagePull");
        o = awaitOutcomeAt(b, first.plusSeconds(31));
        assertThat(o.allocationId()).isEqualTo(pull.allocationId());
        assertThat(o.result().message()).contains("could not pull its image for 30 s: ErrImagePull");
    }

    private RunOutcome awaitOutcomeAt(ExecutionBackend b, Instant at) {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            outcomes.addAll(b.poll(at));
            return !outcomes.isEmpty();
        });
        return outcomes.remove(0);
    }

    @Test
    void aPodThatDisappearsIsAFailureNotAHang() {
        newNamespace();
        cluster.node("dl-1", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = gang("vanishes", "dl-1");
        b.start(a, plan(), Instant.now());
        Pod pod = awaitPods(a, 1).get(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            outcomes.addAll(b.poll(Instant.now()));
            return true;
        });

        cluster.admin.pods().inNamespace(ns).withName(pod.getMetadata().getName()).delete();
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().message()).contains(pod.getMetadata().getName()).contains("deleted");
    }

    @Test
    void nodesAreRegisteredFromTheirLabelsAndANodeGoingNotReadyStopsItsHeartbeats() {
        newNamespace();
        cluster.node("nr-1", 8, true, Map.of("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.memory", "81559", "topology.gantry.io/rack", "r7",
                NodeInventory.GPU_NUMA_LABEL, "0.0.0.0.1.1.1.1"));
        KubernetesBackend b = backend();

        NodeSpec spec = b.nodes().stream().filter(n -> n.nodeId().equals("nr-1")).findFirst().orElseThrow();
        assertThat(spec.backend()).isEqualTo(KubernetesBackend.NAME);
        assertThat(spec.gpus()).hasSize(8).allSatisfy(g -> assertThat(g.model()).isEqualTo("H100"));
        assertThat(spec.gpus().get(5).numaNode()).isEqualTo(1);
        assertThat(spec.gpus().get(5).memoryMiB()).isEqualTo(81559);
        assertThat(spec.rack()).isEqualTo("r7");
        assertThat(spec.cpuMillis()).isEqualTo(96_000);
        assertThat(spec.numaCpuMillis()).containsExactly(48_000, 48_000);
        assertThat(spec.memoryMiB()).isEqualTo(1024 * 1024);
        assertThat(b.heartbeating("nr-1")).isTrue();

        cluster.ready("nr-1", false);
        await().atMost(Duration.ofSeconds(10)).until(() -> !b.heartbeating("nr-1"));
        cluster.ready("nr-1", true);
        await().atMost(Duration.ofSeconds(10)).until(() -> b.heartbeating("nr-1"));
        cluster.admin.nodes().withName("nr-1").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> !b.heartbeating("nr-1"));
    }

    @Test
    void aNodeJoiningAfterTheStartIsRegisteredByPlacementAtItsNextHeartbeatAndADeletedOneStopsHeartbeating() {
        newNamespace();
        // no resync for an hour: only the node watch can tell the backend (other tests' pods are no foreign load here)
        KubernetesBackend b = backend(null, s -> s.withResyncInterval(Duration.ofHours(1))
                .withForeignScanInterval(Duration.ZERO));
        MutableClock wall = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));
        PlacementHandler h = new PlacementHandler(new ClusterState(KubernetesBackend.NAME, new TopologyPlacer()), b,
                new VirtualClock(wall, 1), Duration.ofSeconds(1));
        List<Object> sent = new ArrayList<>();
        Output out = new Output() {
            @Override
            public <V> void send(Topic<V> topic, String key, V value) {
                sent.add(value);
            }
        };
        h.restored(out);
        assertThat(h.state().knows("late-1")).isFalse();

        cluster.node("late-1", 4, true, Map.of("nvidia.com/gpu.product", "NVIDIA-L40S"));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.nodes().stream().anyMatch(n -> n.nodeId().equals("late-1")));
        sent.clear();
        wall.advance(Duration.ofSeconds(1));
        h.tick(wall.instant(), out);
        assertThat(sent).filteredOn(v -> v instanceof NodeEvent e && e.getPayload() instanceof NodeRegistered)
                .extracting(v -> ((NodeEvent) v).getNodeId().toString()).containsExactly("late-1");
        assertThat(h.state().node("late-1")).hasValueSatisfying(n -> assertThat(n.gpuCount("L40S")).isEqualTo(4));
        assertThat(sent).filteredOn(v -> v instanceof NodeHeartbeatEvent)
                .extracting(v -> ((NodeHeartbeatEvent) v).getNodeId().toString()).contains("late-1");

        cluster.admin.nodes().withName("late-1").delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.nodes().stream().noneMatch(n -> n.nodeId().equals("late-1")));
        sent.clear();
        wall.advance(Duration.ofSeconds(1));
        h.tick(wall.instant(), out);
        // silence: recovery's failure detector turns it into NodeFailed
        assertThat(sent).filteredOn(v -> v instanceof NodeHeartbeatEvent)
                .extracting(v -> ((NodeHeartbeatEvent) v).getNodeId().toString()).doesNotContain("late-1");
    }

    @Test
    void thePodWatchReconnectsAfterADroppedConnection() throws Exception {
        newNamespace();
        cluster.node("wr-1", 8, true, Map.of());
        try (MockCluster.Proxy proxy = new MockCluster.Proxy(cluster.server.getPort())) {
            // no resync for an hour: only the watch can tell the backend
            KubernetesBackend b = backend(proxy, s -> s.withResyncInterval(Duration.ofHours(1)));
            Allocation a = gang("reconnects", "wr-1");
            b.start(a, plan(), Instant.now());
            Pod pod = awaitPods(a, 1).get(0);
            cluster.running(ns, pod.getMetadata().getName());
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                outcomes.addAll(b.poll(Instant.now()));
                return proxy.accepted.get() > 0;
            });
            int before = proxy.accepted.get();

            proxy.drop();
            await().atMost(Duration.ofSeconds(15)).until(() -> proxy.accepted.get() >= before + 2);
            cluster.finish(ns, pod.getMetadata().getName(), 0);
            RunOutcome o = awaitOutcome(b);

            assertThat(o.result().succeeded()).isTrue();
        }
    }

    @Test
    void aRestartedPlacementFollowsItsPodsWithoutCreatingThemAgainAndDeletesOrphans() {
        newNamespace();
        cluster.node("rs-1", 8, true, Map.of());
        KubernetesBackend first = backend();
        Allocation kept = gang("kept", "rs-1", "rs-1");
        Allocation orphan = gang("orphan", "rs-1");
        first.start(kept, plan(), Instant.now());
        first.start(orphan, plan(), Instant.now());
        List<String> uids = awaitPods(kept, 2).stream().map(p -> p.getMetadata().getUid()).sorted().toList();
        awaitPods(orphan, 1);
        first.halt(); // placement died
        Allocation neverCreated = gang("never", "rs-1");

        KubernetesBackend second = backend(null, s -> s);
        List<RunOutcome> lost = second.adopt(List.of(new ExecutionBackend.LiveRun(kept, null),
                new ExecutionBackend.LiveRun(neverCreated, null)), Instant.now());

        assertThat(lost).isEmpty();
        RunOutcome never = awaitOutcome(second);
        assertThat(never.allocationId()).isEqualTo(neverCreated.allocationId());
        assertThat(never.result().message()).contains("before the run's pods were created");
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(orphan).isEmpty());
        assertThat(podsOf(kept).stream().map(p -> p.getMetadata().getUid()).sorted().toList()).isEqualTo(uids);

        podsOf(kept).forEach(p -> cluster.finish(ns, p.getMetadata().getName(), 0));
        RunOutcome o = awaitOutcome(second);
        assertThat(o.allocationId()).isEqualTo(kept.allocationId());
        assertThat(o.result().succeeded()).isTrue();
    }

    @Test
    void aRestartedPlacementFailsAGangThatLostAPodWhileItWasDownAndItsReleaseDeletesTheRest() {
        newNamespace();
        cluster.node("ic-1", 8, true, Map.of());
        KubernetesBackend first = backend();
        Allocation a = gang("incomplete", "ic-1", "ic-1");
        first.start(a, plan(), Instant.now());
        List<Pod> pods = awaitPods(a, 2);
        first.halt(); // placement died
        cluster.admin.pods().inNamespace(ns).withName(pods.get(0).getMetadata().getName()).delete();

        KubernetesBackend second = backend(null, s -> s);
        assertThat(second.adopt(List.of(new ExecutionBackend.LiveRun(a, null)), Instant.now())).isEmpty();
        RunOutcome o = awaitOutcome(second);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().message()).contains("gang incomplete").contains(pods.get(0).getMetadata().getName());
        second.stop(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() -> podsOf(a).isEmpty());
    }

    @Test
    void aPodNameTakenByAPodPlacementDoesNotManageIsNeverTouched() {
        newNamespace();
        cluster.node("tk-1", 8, true, Map.of());
        Allocation a = gang("taken", "tk-1");
        Pod squatter = GangManifest.render(a, plan(), KubernetesSettings.defaults().withNamespace(ns)).pods().get(0);
        squatter.getMetadata().setLabels(Map.of("app", "someone-elses"));
        cluster.admin.pods().inNamespace(ns).resource(squatter).create();
        KubernetesBackend b = backend();

        b.start(a, plan(), Instant.now());
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().message()).contains("taken by a pod placement does not manage");
        assertThat(cluster.admin.pods().inNamespace(ns).withName(squatter.getMetadata().getName()).get()).isNotNull();
    }

    @Test
    void aGangStartedTwiceForTheSameAllocationKeepsOnePodPerTask() {
        newNamespace();
        cluster.node("tw-1", 8, true, Map.of());
        KubernetesBackend b = backend();
        Allocation a = gang("twice", "tw-1", "tw-1");
        b.start(a, plan(), Instant.now());
        List<String> uids = awaitPods(a, 2).stream().map(p -> p.getMetadata().getUid()).sorted().toList();

        KubernetesBackend other = backend(null, s -> s);
        other.start(a, plan(), Instant.now());
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            outcomes.addAll(other.poll(Instant.now()));
            return true;
        });

        assertThat(outcomes).isEmpty();
        assertThat(podsOf(a).stream().map(p -> p.getMetadata().getUid()).sorted().toList()).isEqualTo(uids);
    }

    @Test
    void aCreationTheServerFailsIsRetriedAndSucceeds() {
        newNamespace();
        cluster.node("rt-1", 8, true, Map.of());
        cluster.server.expect().post().withPath("/api/v1/namespaces/" + ns + "/pods").andReturn(503, "busy").times(2);
        KubernetesBackend b = backend();
        Allocation a = gang("retried", "rt-1");

        b.start(a, plan(), Instant.now());
        Pod pod = awaitPods(a, 1).get(0);
        cluster.finish(ns, pod.getMetadata().getName(), 0);

        assertThat(awaitOutcome(b).result().succeeded()).isTrue();
    }

    @Test
    void aCreationTheServerRefusesIsReportedWithItsReasonAndLeavesNothingBehind() {
        newNamespace();
        cluster.node("rf-1", 8, true, Map.of());
        cluster.server.expect().post().withPath("/api/v1/namespaces/" + ns + "/pods")
                .andReturn(403, new io.fabric8.kubernetes.api.model.StatusBuilder().withCode(403)
                        .withMessage("pods is forbidden: exceeded quota").build()).always();
        KubernetesBackend b = backend();
        Allocation a = gang("refused", "rf-1");

        assertThat(b.start(a, plan(), Instant.now())).isEmpty();
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().exitCode()).isNull();
        assertThat(o.result().message()).contains("could not create pod").contains("exceeded quota")
                .contains("403");
        String base = GangManifest.baseName(a.allocationId());
        await().atMost(Duration.ofSeconds(10)).until(() ->
                cluster.admin.services().inNamespace(ns).withName(base).get() == null
                        && cluster.admin.secrets().inNamespace(ns).withName(base + "-run").get() == null);
    }

    @Test
    void anApiServerThatIsDownNeverBlocksAndTheRunFailsAfterTheRetries() throws Exception {
        newNamespace();
        int deadPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort();
        }
        io.fabric8.kubernetes.client.Config config = new io.fabric8.kubernetes.client.ConfigBuilder(
                io.fabric8.kubernetes.client.Config.empty()).withMasterUrl("http://127.0.0.1:" + deadPort)
                .withRequestTimeout(1000).withConnectionTimeout(500).withRequestRetryBackoffLimit(0).build();
        KubernetesBackend b = new KubernetesBackend(new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withConfig(config).build(), KubernetesSettings.defaults().withNamespace(ns)
                .withRetries(2, Duration.ofMillis(10))).start(Duration.ofMillis(200));
        backends.add(b);

        assertThat(b.nodes()).isEmpty();
        assertThat(b.start(gang("down", "n-1"), plan(), Instant.now())).isEmpty();
        RunOutcome o = awaitOutcome(b);

        assertThat(o.result().succeeded()).isFalse();
        assertThat(o.result().message()).contains("no answer from the API server").contains("after 2 attempts");
    }
}
