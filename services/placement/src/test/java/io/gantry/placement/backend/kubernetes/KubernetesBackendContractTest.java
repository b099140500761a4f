package io.gantry.placement.backend.kubernetes;

import io.gantry.placement.backend.ExecutionBackendContract;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** The Kubernetes backend keeps the contract against the mock API server; the test plays the kubelet. */
class KubernetesBackendContractTest extends ExecutionBackendContract<KubernetesBackend> {
    private static final AtomicInteger WORLD = new AtomicInteger();
    private static MockCluster cluster;
    private String namespace;
    private List<String> nodes;

    @BeforeAll
    static void startServer() {
        cluster = new MockCluster();
    }

    private static final List<KubernetesBackend> HALTED = new java.util.ArrayList<>();

    @AfterAll
    static void stopServer() {
        HALTED.forEach(KubernetesBackend::close);
        cluster.close();
    }

    /**
     * Halted, closed only after the last test: closing a watch while fabric8's mock server sends an event can stall
     * the server for up to 30 s (see {@link MockCluster.Proxy}), which would fail the next test.
     */
    @Override
    protected void dispose(KubernetesBackend backend) {
        backend.halt();
        HALTED.add(backend);
    }

    @Override
    protected KubernetesBackend newBackend() {
        int world = WORLD.incrementAndGet();
        namespace = "contract-" + world;
        nodes = List.of("ct" + world + "-a", "ct" + world + "-b");
        nodes.forEach(n -> cluster.node(n, 8, true, Map.of()));
        return open();
    }

    private KubernetesBackend open() {
        return new KubernetesBackend(cluster.client(), KubernetesSettings.defaults().withNamespace(namespace)
                .withRetries(3, Duration.ofMillis(50))).start(Duration.ofSeconds(10));
    }

    /** Pods outlive placement: a new process with a new backend finds them. */
    @Override
    protected KubernetesBackend restarted(KubernetesBackend before) {
        before.halt(); // the old process is gone: it makes no more calls
        return open();
    }

    @Override
    protected List<String> nodeIds(KubernetesBackend backend) {
        return nodes;
    }

    @Override
    protected RunPlan plan(Allocation allocation) {
        Map<String, RunPlan.Task> tasks = new java.util.HashMap<>();
        allocation.placements().forEach(p -> tasks.put(p.task(), new RunPlan.Task(List.of("python", "train.py"),
                null)));
        return new RunPlan(tasks, "token", null);
    }

    @Override
    protected void finish(KubernetesBackend backend, Allocation allocation, PlacedTask task, int exitCode) {
        cluster.finish(namespace, GangManifest.podName(allocation.allocationId(), task.task(), task.replica()), exitCode);
    }

    @Override
    protected int running(KubernetesBackend backend, Allocation allocation) {
        return (int) cluster.pods(namespace).stream()
                .filter(p -> allocation.allocationId().equals(p.getMetadata().getLabels().get(GangManifest.ALLOCATION)))
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).count();
    }

    @Override
    protected void loseNode(KubernetesBackend backend, String nodeId) {
        cluster.ready(nodeId, false);
    }
}
