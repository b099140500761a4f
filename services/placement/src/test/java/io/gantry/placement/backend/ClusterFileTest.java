package io.gantry.placement.backend;

import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.RdmaNic;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClusterFileTest {

    @Test
    void theDefaultClusterIsFourNodesOfEightH100s() {
        List<NodeSpec> nodes = ClusterFile.defaultCluster();

        assertThat(nodes).extracting(NodeSpec::nodeId).containsExactly("sim-0", "sim-1", "sim-2", "sim-3");
        assertThat(nodes).allSatisfy(n -> {
            assertThat(n.gpus()).hasSize(8).allSatisfy(g -> assertThat(g.model()).isEqualTo("H100"));
            assertThat(n.gpus().get(0).memoryMiB()).isEqualTo(81_920);
            assertThat(n.cpuMillis()).isEqualTo(96_000);
            assertThat(n.memoryMiB()).isEqualTo(1_048_576);
            assertThat(n.labels()).containsKey("rack");
        });
    }

    @Test
    void aFileDescribesNodesWithCountsMixedGpusAndLabels() {
        List<NodeSpec> nodes = ClusterFile.parse("""
                nodes:
                  - id: a100
                    count: 2
                    gpus: {count: 4, model: A100, memoryMiB: 40960}
                    cpuMillis: 64000
                    memoryMiB: 524288
                    labels: {rack: r1}
                  - id: mixed
                    gpus:
                      - {count: 1, model: L4, memoryMiB: 24576}
                      - {count: 2, model: H100, memoryMiB: 81920}
                    cpuMillis: 8000
                    memoryMiB: 65536
                """);

        assertThat(nodes).extracting(NodeSpec::nodeId).containsExactly("a100-0", "a100-1", "mixed");
        assertThat(nodes.get(1).gpus()).hasSize(4);
        assertThat(nodes.get(1).labels()).isEqualTo(Map.of("rack", "r1"));
        assertThat(nodes.get(2).gpus()).extracting(g -> g.index() + ":" + g.model())
                .containsExactly("0:L4", "1:H100", "2:H100");
    }

    @Test
    void aMistakeNamesTheField() {
        assertThatThrownBy(() -> ClusterFile.parse("nodes:\n  - id: x\n    gpus: {count: 2}\n    cpuMillis: 1\n    memoryMiB: 1\n"))
                .hasMessageContaining("nodes[0].gpus.model");
        assertThatThrownBy(() -> ClusterFile.parse("nodes:\n  - id: x\n    memoryMiB: 1\n"))
                .hasMessageContaining("nodes[0].cpuMillis");
        assertThatThrownBy(() -> ClusterFile.parse("nodes: []")).hasMessageContaining("nodes");
    }

    @Test
    void theDefaultClusterHasTwoSocketsFourPcieSwitchesAndOneNvlinkDomainPerNode() {
        NodeSpec n = ClusterFile.defaultCluster().get(0);
        assertThat(n.numaCpuMillis()).containsExactly(48_000, 48_000);
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::numaNode).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::pcieSwitch).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::nvlinkDomain).containsOnly(0);
        assertThat(n.rack()).isEqualTo("rack-0");
        assertThat(n.spine()).isEqualTo("spine-0");
    }

    @Test
    void aFileDescribesSocketsRacksAndTheInsideOfANode() {
        List<NodeSpec> nodes = ClusterFile.parse("""
                nodes:
                  - id: pcie
                    sockets: 2
                    rack: r7
                    spine: s1
                    gpus:
                      - {count: 2, model: L40S, memoryMiB: 46068, nvlinkDomain: -1}
                      - {count: 2, model: L40S, memoryMiB: 46068, numaNode: 1, pcieSwitch: 5, nvlinkDomain: -1}
                    cpuMillis: 64000
                    memoryMiB: 524288
                """);
        NodeSpec n = nodes.get(0);
        assertThat(n.numaCpuMillis()).containsExactly(32_000, 32_000);
        assertThat(n.labels()).containsEntry("rack", "r7").containsEntry("spine", "s1");
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::numaNode).containsExactly(0, 0, 1, 1);
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::pcieSwitch).containsExactly(0, 0, 5, 5);
        assertThat(n.gpus()).extracting(io.gantry.placement.core.Gpu::nvlinkDomain).containsOnly(-1);
    }

    @Test
    void aBadTopologyIsRefusedWithTheReason() {
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    gpus: {count: 2, model: H100, numaNode: 1}
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessageContaining("nodes[0]: node bad: gpu 0 is on NUMA socket 1 but the node has 1 socket");
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    numaCpuMillis: [500, 400]
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessageContaining("numaCpuMillis adds up to 900 but cpuMillis is 1000");
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    gpus: {count: 1, model: H100, memoryMiB: -5}
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessageContaining("nodes[0].gpus: gpu 0: memoryMiB must be >= 0");
    }

    @Test
    void aNodeListsItsRdmaNicsAndANicOnASocketTheNodeDoesNotHaveIsRefused() {
        List<NodeSpec> nodes = ClusterFile.parse("""
                nodes:
                  - id: ib
                    count: 2
                    sockets: 2
                    gpus: {count: 8, model: H100, memoryMiB: 81920}
                    rdmaNics:
                      - {name: mlx5_0, numaNode: 0, pcieSwitch: 0, gbps: 400}
                      - {name: mlx5_1, numaNode: 1}
                    cpuMillis: 96000
                    memoryMiB: 1048576
                """);

        assertThat(nodes).allSatisfy(n -> assertThat(n.rdmaNics()).containsExactly(
                new RdmaNic("mlx5_0", 0, 0, 400), new RdmaNic("mlx5_1", 1, RdmaNic.NO_SWITCH, 0)));
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    gpus: {count: 2, model: H100}
                    rdmaNics: [{name: mlx5_0, numaNode: 1}]
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessage("nodes[0]: node bad: RDMA NIC mlx5_0 is on NUMA socket 1 but the node has 1 socket "
                + "(numaCpuMillis)");
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    rdmaNics: [{numaNode: 0}]
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessage("nodes[0].rdmaNics[0].name: required, a non-empty string");
    }

    @Test
    void aGpuGroupMayBeMigCapableAndTheFlagMustBeABoolean() {
        List<NodeSpec> nodes = ClusterFile.parse("""
                nodes:
                  - id: mig
                    gpus:
                      - {count: 2, model: A100, memoryMiB: 81920, migCapable: true}
                      - {count: 1, model: L4, memoryMiB: 24576}
                    cpuMillis: 8000
                    memoryMiB: 65536
                """);

        assertThat(nodes.get(0).gpus()).extracting(g -> g.model() + ":" + g.migCapable())
                .containsExactly("A100:true", "A100:true", "L4:false");
        assertThatThrownBy(() -> ClusterFile.parse("""
                nodes:
                  - id: bad
                    gpus: {count: 1, model: A100, migCapable: "yes"}
                    cpuMillis: 1000
                    memoryMiB: 1024
                """)).hasMessage("nodes[0].gpus.migCapable: must be true or false");
    }
}
