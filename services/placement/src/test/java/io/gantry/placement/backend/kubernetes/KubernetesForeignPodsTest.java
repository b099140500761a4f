package io.gantry.placement.backend.kubernetes;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.gantry.placement.backend.ForeignLoad;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The one entrance on Kubernetes: pods Gantry did not create holding GPUs on Gantry's nodes are found, logged once
 * and counted as capacity taken; Gantry's own pods tolerate the taint that keeps the default scheduler away.
 */
class KubernetesForeignPodsTest {
    private static final String NS = "gantry-fp";
    private static final String OTHERS = "team-x";
    private static MockCluster cluster;
    private final List<KubernetesBackend> backends = new ArrayList<>();
    private ListAppender<ILoggingEvent> log;

    @BeforeAll
    static void startServer() {
        cluster = new MockCluster();
        cluster.node("fp-1", 8, true, Map.of("pool", "gantry"));
        cluster.node("fp-2", 8, true, Map.of("pool", "gantry"));
        cluster.node("fp-other", 8, true, Map.of("pool", "elsewhere"));
    }

    @AfterAll
    static void stopServer() {
        cluster.close();
    }

    @AfterEach
    void closeBackends() {
        backends.forEach(KubernetesBackend::halt);
        if (log != null) {
            ((Logger) LoggerFactory.getLogger(KubernetesBackend.class)).detachAppender(log);
        }
    }

    private KubernetesBackend backend(Duration scanEvery) {
        KubernetesSettings s = KubernetesSettings.defaults().withNamespace(NS).withNodeSelector("pool=gantry")
                .withRetries(2, Duration.ofMillis(50)).withForeignScanInterval(scanEvery);
        KubernetesBackend b = new KubernetesBackend(cluster.client(), s).start(Duration.ofSeconds(10));
        backends.add(b);
        return b;
    }

    private void capture() {
        log = new ListAppender<>();
        log.start();
        Logger logger = (Logger) LoggerFactory.getLogger(KubernetesBackend.class);
        logger.setLevel(Level.INFO);
        logger.addAppender(log);
    }

    /** A pod as another user's controller or kubectl would make it; {@code phase} null: not started yet. */
    private static Pod otherPod(String name, String node, String phase, Map<String, String> labels,
                                Map<String, String> limits) {
        Map<String, Quantity> q = new LinkedHashMap<>();
        limits.forEach((k, v) -> q.put(k, new Quantity(v)));
        Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(OTHERS).withLabels(labels).endMetadata()
                .withNewSpec().withNodeName(node)
                .withContainers(new ContainerBuilder().withName("main").withImage("pytorch")
                        .addNewEnv().withName("WANDB_API_KEY").withValue("hunter2-do-not-log").endEnv()
                        .withNewResources().withLimits(q).endResources().build())
                .endSpec().build();
        if (phase != null) {
            // created with its phase, so the scan (on its own thread) never sees it without one (= Pending)
            pod.setStatus(new PodStatusBuilder().withPhase(phase).build());
        }
        Pod created = cluster.admin.pods().inNamespace(OTHERS).resource(pod).create();
        if (phase != null) {
            created.setStatus(new PodStatusBuilder().withPhase(phase).build());
            cluster.admin.pods().inNamespace(OTHERS).resource(created).updateStatus();
        }
        return created;
    }

    private static Allocation gang(String job, String node) {
        return new Allocation("a-" + job + "-0000-0000-0000-000000000001", job, "vision", 1,
                List.of(new PlacedTask("worker", 0, node, "H100", List.of(0, 1, 2, 3), 1000, 1024)),
                Instant.parse("2026-11-24T10:00:00Z"), KubernetesBackend.NAME);
    }

    @Test
    void podsOfOthersHoldingGpusOnGantrysNodesAreCapacityTakenCountedByTheGaugesUntilTheyGo() {
        capture();
        KubernetesBackend b = backend(Duration.ofMillis(100));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new KubernetesMetrics(registry, new java.util.ArrayList<>(List.of(b)));
        System.gc(); // the gauges must hold what they read: a gauge keeps only a weak reference to its state
        Allocation mine = gang("mine", "fp-1");
        b.start(mine, new RunPlan(Map.of("worker", new RunPlan.Task(List.of("true"), null))), Instant.now());
        await().atMost(Duration.ofSeconds(10)).until(() -> !cluster.pods(NS).isEmpty());

        otherPod("notebook", "fp-1", "Running", Map.of(), Map.of("nvidia.com/gpu", "2", "cpu", "4"));
        otherPod("mig-job", "fp-2", null, Map.of(), Map.of("nvidia.com/mig-1g.10gb", "1"));
        // Gantry's labels outside Gantry's namespace do not make a pod Gantry's
        otherPod("lookalike", "fp-2", "Running", Map.of(GangManifest.MANAGED_BY, GangManifest.MANAGER),
                Map.of("nvidia.com/gpu", "1"));
        otherPod("cpu-only", "fp-1", "Running", Map.of(), Map.of("cpu", "2"));
        otherPod("finished", "fp-1", "Succeeded", Map.of(), Map.of("nvidia.com/gpu", "1"));
        otherPod("elsewhere", "fp-other", "Running", Map.of(), Map.of("nvidia.com/gpu", "4"));
        otherPod("unbound", null, "Pending", Map.of(), Map.of("nvidia.com/gpu", "1"));

        await().atMost(Duration.ofSeconds(10)).until(() -> b.foreignPods().size() == 3);
        assertThat(b.foreignPods()).containsExactly(
                new KubernetesBackend.ForeignPod(OTHERS, "notebook", "fp-1", "Running", 2),
                new KubernetesBackend.ForeignPod(OTHERS, "lookalike", "fp-2", "Running", 1),
                new KubernetesBackend.ForeignPod(OTHERS, "mig-job", "fp-2", "Pending", 1));
        // what placement takes off the free count, per node
        assertThat(b.foreignLoad()).contains(Map.of(
                "fp-1", new ForeignLoad(2, "pod team-x/notebook (2 GPUs)"),
                "fp-2", new ForeignLoad(2, "pod team-x/lookalike (1 GPU); pod team-x/mig-job (1 GPU)")));
        assertThat(registry.get("gantry.placement.kubernetes.foreign.pods").gauge().value()).isEqualTo(3.0);
        assertThat(registry.get("gantry.placement.kubernetes.foreign.gpus").gauge().value()).isEqualTo(4.0);

        // several scans later each pod was still warned about once, by name, namespace, node and GPUs only
        long seen = b.foreignScans();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.foreignScans() >= seen + 5);
        List<String> warnings = log.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains("not created by Gantry")).toList();
        assertThat(warnings).hasSize(3);
        assertThat(warnings).anySatisfy(m -> assertThat(m).contains("team-x/notebook").contains("fp-1")
                .contains("2 GPU(s)"));
        assertThat(log.list).noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains("hunter2"));

        cluster.admin.pods().inNamespace(OTHERS).withName("notebook").withGracePeriod(0).delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.foreignPods().size() == 2);
        assertThat(registry.get("gantry.placement.kubernetes.foreign.gpus").gauge().value()).isEqualTo(2.0);
        // Gantry never deletes what is not its own
        assertThat(cluster.admin.pods().inNamespace(OTHERS).withName("mig-job").get()).isNotNull();
        cluster.admin.pods().inNamespace(OTHERS).delete();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.foreignPods().isEmpty());
        assertThat(b.foreignLoad()).contains(Map.of());
        assertThat(registry.get("gantry.placement.kubernetes.foreign.pods").gauge().value()).isZero();
    }

    @Test
    void gantrysPodsTolerateTheDedicatedTaintAndANodeWithoutTheTaintIsWarnedAbout() {
        cluster.admin.nodes().withName("fp-2").edit(n -> new NodeBuilder(n).editOrNewSpec().addNewTaint()
                .withKey("gantry.io/dedicated").withValue("true").withEffect("NoSchedule").endTaint().endSpec().build());
        capture();
        KubernetesBackend b = backend(Duration.ZERO);

        List<String> warnings = log.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains("has no taint")).toList();
        assertThat(warnings).singleElement().asString().contains("node fp-1 has no taint gantry.io/dedicated")
                .contains("kubectl taint node fp-1 gantry.io/dedicated=true:NoSchedule");
        Allocation a = gang("tolerates", "fp-2");
        b.start(a, new RunPlan(Map.of("worker", new RunPlan.Task(List.of("true"), null))), Instant.now());
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.pods(NS).stream()
                .anyMatch(p -> a.allocationId().equals(p.getMetadata().getLabels().get(GangManifest.ALLOCATION))));
        Pod pod = cluster.pods(NS).stream()
                .filter(p -> a.allocationId().equals(p.getMetadata().getLabels().get(GangManifest.ALLOCATION)))
                .findFirst().orElseThrow();

        assertThat(pod.getSpec().getTolerations()).extracting(Toleration::getKey, Toleration::getOperator,
                Toleration::getEffect).containsExactly(tuple("gantry.io/dedicated", "Exists", null));
        // no scan configured: nothing is listed and nothing reported (nor kept from before)
        assertThat(b.foreignPods()).isEmpty();
        assertThat(b.foreignLoad()).contains(Map.of());
    }

    @Test
    void theGpuCountIsTheKubeletsEffectiveRequestIncludingMigInstancesAndSidecars() {
        Pod p = new PodBuilder().withNewSpec()
                .addNewInitContainer().withName("warmup").withNewResources()
                .withLimits(Map.of("nvidia.com/gpu", new Quantity("3"))).endResources().endInitContainer()
                .addNewInitContainer().withName("sidecar").withRestartPolicy("Always").withNewResources()
                .withRequests(Map.of("nvidia.com/mig-2g.20gb", new Quantity("1"))).endResources().endInitContainer()
                .addNewContainer().withName("a").withNewResources()
                .withLimits(Map.of("nvidia.com/gpu", new Quantity("1"), "cpu", new Quantity("8"))).endResources()
                .endContainer()
                .addNewContainer().withName("b").endContainer()
                .endSpec().build();

        // the warm-up's 3 exceed the 1 + 1 that run together afterwards
        assertThat(KubernetesBackend.gpuRequest(p, "nvidia.com/gpu")).isEqualTo(3);
        p.getSpec().getInitContainers().remove(0);
        assertThat(KubernetesBackend.gpuRequest(p, "nvidia.com/gpu")).isEqualTo(2);
        // another GPU resource configured (e.g. AMD's) counts too
        p.getSpec().getContainers().get(1).setResources(new ResourceRequirementsBuilder()
                .withLimits(Map.of("amd.com/gpu", new Quantity("2"))).build());
        assertThat(KubernetesBackend.gpuRequest(p, "amd.com/gpu")).isEqualTo(4);
    }
}
