package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.RdmaNic;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kubernetes nodes as placement registers them: GPU feature discovery's labels plus the topology annotation. */
class NodeInventoryTest {
    private static final KubernetesSettings S = KubernetesSettings.defaults();

    private static Node node(Map<String, String> labels, Map<String, String> annotations, String gpus, String cpu) {
        return new NodeBuilder().withNewMetadata().withName("dgx-07").withLabels(labels).withAnnotations(annotations)
                .endMetadata().withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity(cpu), "memory", new Quantity("2063Gi"),
                        "nvidia.com/gpu", new Quantity(gpus)))
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    }

    private static String sample(String name) {
        try (InputStream in = NodeInventoryTest.class.getResourceAsStream("/topology/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aDgxH100NodeWithItsTopoMatrixAnnotatedGetsTheSameTopologyAsOnTheHost() {
        Node n = node(Map.of("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory", "81559",
                        "topology.gantry.io/rack", "r3", "topology.gantry.io/spine", "s1"),
                Map.of("topology.gantry.io/nvidia-smi-topo", sample("dgx-h100-topo.txt")), "8", "223500m");

        NodeSpec spec = NodeInventory.spec(n, KubernetesBackend.NAME, S);

        assertThat(spec.gpus()).hasSize(8).allSatisfy(g -> {
            assertThat(g.model()).isEqualTo("H100");
            assertThat(g.nvlinkDomain()).isZero();
        });
        assertThat(spec.gpus()).extracting(Gpu::pcieSwitch).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(spec.gpus()).extracting(Gpu::numaNode).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(spec.cpuMillis()).isEqualTo(223_500);
        assertThat(spec.numaCpuMillis()).containsExactly(111_750, 111_750);
        assertThat(spec.memoryMiB()).isEqualTo(2063L * 1024);
        assertThat(spec.rdmaNics()).contains(new RdmaNic("mlx5_3", 0, 3, 0));
        assertThat(spec.rack()).isEqualTo("r3");
        assertThat(spec.spine()).isEqualTo("s1");
        assertThat(spec.labels()).containsEntry("gpu.product", "NVIDIA-H100-80GB-HBM3");
    }

    @Test
    void perGpuLabelsPlaceGpusWhenThereIsNoMatrix() {
        Node n = node(Map.of("nvidia.com/gpu.product", "NVIDIA-L40S", NodeInventory.GPU_NUMA_LABEL, "0.0.1.1",
                NodeInventory.GPU_PCIE_LABEL, "0.0.1.1", NodeInventory.GPU_NVLINK_LABEL, "n.n.n.n",
                "nvidia.com/mig.capable", "false"), Map.of(), "4", "64");

        NodeSpec spec = NodeInventory.spec(n, KubernetesBackend.NAME, S);

        assertThat(spec.gpus()).extracting(Gpu::numaNode).containsExactly(0, 0, 1, 1);
        assertThat(spec.gpus()).extracting(Gpu::pcieSwitch).containsExactly(0, 0, 1, 1);
        assertThat(spec.gpus()).extracting(Gpu::nvlinkDomain).containsOnly(Gpu.NO_NVLINK);
        assertThat(spec.gpus()).extracting(Gpu::model).containsOnly("L40S");
        assertThat(spec.rack()).isEqualTo(NodeSpec.UNLABELLED);
    }

    @Test
    void aNodeWithoutGpusOrLabelsIsACpuNodeAndAMalformedLabelIsRefused() {
        NodeSpec cpuOnly = NodeInventory.spec(node(Map.of(), Map.of(), "0", "32"), KubernetesBackend.NAME, S);
        assertThat(cpuOnly.gpus()).isEmpty();
        assertThat(cpuOnly.cpuMillis()).isEqualTo(32_000);

        Node bad = node(Map.of(NodeInventory.GPU_NUMA_LABEL, "0.1"), Map.of(), "8", "32");
        assertThatThrownBy(() -> NodeInventory.spec(bad, KubernetesBackend.NAME, S))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names 2 GPUs, the node has 8");
    }
}
