package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.GpuShare;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** How a run is rendered: names a DNS label accepts, labels Kubernetes accepts, devices and resources. */
class GangManifestTest {
    private static final String ID = UUID.nameUUIDFromBytes("gantry-placement/job-1/1".getBytes()).toString();

    private static Allocation allocation(PlacedTask... tasks) {
        return new Allocation(ID, "Job/With Odd:Chars", "team-a", 3, List.of(tasks), Instant.EPOCH,
                KubernetesBackend.NAME);
    }

    private static Map<String, String> env(Pod pod) {
        return pod.getSpec().getContainers().get(0).getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @ParameterizedTest(name = "task `{0}` replica {1}")
    @CsvSource({"worker, 0", "Trainer_Main, 12", "a-very-long-task-name-that-goes-on-and-on-forever, 99999", "--, 3"})
    void podNamesAreDnsLabelsOfAtMost63Characters(String task, int replica) {
        String name = GangManifest.podName(ID, task, replica);

        assertThat(name).hasSizeLessThanOrEqualTo(63).matches("[a-z0-9]([a-z0-9-]*[a-z0-9])?")
                .startsWith(GangManifest.baseName(ID) + "-").endsWith("-" + replica);
    }

    @Test
    void taskNamesThatReadAlikeOnceCleanedStayApart() {
        assertThat(GangManifest.podName(ID, "Main", 0)).isNotEqualTo(GangManifest.podName(ID, "main", 0));
        assertThat(GangManifest.podName(ID, "a_b", 0)).isNotEqualTo(GangManifest.podName(ID, "a-b", 0));
    }

    @Test
    void labelValuesAreCleanedAndTheExactIdsAreAnnotations() {
        PlacedTask t = new PlacedTask("w", 0, "n1", "H100", List.of(0), 0, 0);
        Pod pod = GangManifest.render(allocation(t), new RunPlan(Map.of()), KubernetesSettings.defaults()).pods().get(0);

        assertThat(pod.getMetadata().getLabels().get(GangManifest.JOB)).isEqualTo("Job_With_Odd_Chars");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry(GangManifest.JOB_ID_ANNOTATION, "Job/With Odd:Chars");
        assertThat(GangManifest.labelValue("x".repeat(100))).hasSizeLessThanOrEqualTo(63);
        // no command: the image's own entrypoint runs
        assertThat(pod.getSpec().getContainers().get(0).getCommand()).isEmpty();
        // no CPU or memory asked: none requested
        assertThat(pod.getSpec().getContainers().get(0).getResources().getRequests()).containsOnlyKeys("nvidia.com/gpu");
    }

    @Test
    void aTaskWithoutGpusSeesNoneAndAFractionOrMigInstanceGetsItsShare() {
        PlacedTask cpu = new PlacedTask("cpu", 0, "n1", null, List.of(), 500, 128);
        PlacedTask fraction = new PlacedTask("f", 0, "n1", "L4", List.of(), 100, 64, List.of(), null,
                List.of(GpuShare.fraction(2, 250, 6000)));
        PlacedTask mig = new PlacedTask("m", 0, "n1", "A100", List.of(), 100, 64, List.of(), null,
                List.of(new GpuShare(5, 142, 10240, "1g.10gb", 6)));
        List<Pod> pods = GangManifest.render(allocation(cpu, fraction, mig), new RunPlan(Map.of()),
                KubernetesSettings.defaults()).pods();

        assertThat(env(pods.get(0))).containsEntry("NVIDIA_VISIBLE_DEVICES", "void").containsEntry("PET_NPROC_PER_NODE", "1");
        assertThat(pods.get(0).getSpec().getContainers().get(0).getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
        assertThat(env(pods.get(1))).containsEntry("NVIDIA_VISIBLE_DEVICES", "2").containsEntry("CUDA_VISIBLE_DEVICES", "0")
                .containsEntry("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25").containsEntry("GANTRY_GPU_MEMORY_MIB", "6000");
        assertThat(env(pods.get(2))).containsEntry("GANTRY_MIG_DEVICE", "5:1g.10gb:6").doesNotContainKey("NVIDIA_VISIBLE_DEVICES");
        assertThat(pods.get(2).getSpec().getContainers().get(0).getResources().getLimits().get("nvidia.com/mig-1g.10gb"))
                .hasToString("1");
        assertThat(env(pods.get(2))).containsEntry("WORLD_SIZE", "3").containsEntry("RANK", "2");
    }

    @Test
    void everyPodToleratesTheDedicatedTaintWhateverItsValueAndEffectUnlessNoKeyIsConfigured() {
        PlacedTask t = new PlacedTask("w", 0, "n1", "H100", List.of(0), 0, 0);
        Pod tolerant = GangManifest.render(allocation(t), new RunPlan(Map.of()),
                KubernetesSettings.defaults().withTolerationKey("example.com/gpu-pool")).pods().get(0);
        Pod plain = GangManifest.render(allocation(t), new RunPlan(Map.of()),
                KubernetesSettings.defaults().withTolerationKey(" ")).pods().get(0);

        assertThat(tolerant.getSpec().getTolerations()).singleElement().satisfies(tol -> {
            assertThat(tol.getKey()).isEqualTo("example.com/gpu-pool");
            assertThat(tol.getOperator()).isEqualTo("Exists");
            assertThat(tol.getEffect()).as("every effect: NoSchedule and NoExecute alike").isNull();
        });
        assertThat(plain.getSpec().getTolerations()).isEmpty();
    }

    @Test
    void onlyHostPathsAtOrUnderAnAllowedDirectoryMayBeMounted() {
        KubernetesSettings s = KubernetesSettings.defaults().withAllowedHostPaths(List.of("/mnt/data/", " /scratch"));

        assertThat(s.allowedHostPaths()).containsExactly("/mnt/data", "/scratch");
        assertThat(s.hostPathAllowed("/mnt/data")).isTrue();
        assertThat(s.hostPathAllowed("/mnt/data/imagenet")).isTrue();
        assertThat(s.hostPathAllowed("/mnt/database")).as("a sibling sharing a prefix").isFalse();
        assertThat(s.hostPathAllowed("/var/run")).isFalse();
        assertThat(KubernetesSettings.defaults().hostPathAllowed("/mnt/data")).as("none by default").isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> KubernetesSettings.defaults()
                .withAllowedHostPaths(List.of("data"))).hasMessageContaining("allowed-host-paths must be absolute");
    }
}
