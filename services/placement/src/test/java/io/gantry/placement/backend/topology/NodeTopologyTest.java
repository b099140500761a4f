package io.gantry.placement.backend.topology;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.RdmaNic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Recorded {@code nvidia-smi} outputs of three 8-GPU servers, and the topology registered from them. */
class NodeTopologyTest {

    static String sample(String name) {
        try (InputStream in = NodeTopologyTest.class.getResourceAsStream("/topology/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code node<N> <cpulist>} lines, as a script would collect {@code /sys/devices/system/node/node*}/cpulist. */
    static Map<Integer, String> numa(String name) {
        Map<Integer, String> out = new TreeMap<>();
        for (String line : sample(name).split("\\R")) {
            if (!line.isBlank()) {
                String[] f = line.trim().split("\\s+");
                out.put(Integer.parseInt(f[0].substring(4)), f[1]);
            }
        }
        return out;
    }

    static NodeTopology.Discovered discover(String server, Map<Integer, String> numa) {
        return NodeTopology.discover(NvidiaSmiQuery.parse(sample(server + "-query.txt")),
                NvidiaSmiTopo.parse(sample(server + "-topo.txt")), numa);
    }

    private static List<Integer> field(List<Gpu> gpus, java.util.function.ToIntFunction<Gpu> f) {
        return gpus.stream().map(g -> f.applyAsInt(g)).toList();
    }

    @Test
    void aDgxH100IsOneNvlinkDomainWithAPcieSwitchAndNicPerGpuAndFourGpusPerSocket() {
        NodeTopology.Discovered d = discover("dgx-h100", Map.of());

        assertThat(d.gpus()).hasSize(8).allSatisfy(g -> {
            assertThat(g.model()).isEqualTo("H100");
            assertThat(g.memoryMiB()).isEqualTo(81559);
            assertThat(g.migCapable()).isFalse();
        });
        assertThat(field(d.gpus(), Gpu::nvlinkDomain)).containsOnly(0);
        assertThat(field(d.gpus(), Gpu::pcieSwitch)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(field(d.gpus(), Gpu::numaNode)).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(d.numaCpuMillis()).containsExactly(112_000, 112_000);
        assertThat(d.nics()).hasSize(10);
        assertThat(d.nics().get(0)).isEqualTo(new RdmaNic("mlx5_0", 0, 0, 0));
        assertThat(d.nics().get(5)).isEqualTo(new RdmaNic("mlx5_5", 1, 5, 0));
        // the storage NICs hang off no GPU's switch, on the socket they share with GPUs
        assertThat(d.nics().get(8)).isEqualTo(new RdmaNic("mlx5_8", 0, RdmaNic.NO_SWITCH, 0));
        assertThat(d.nics().get(9)).isEqualTo(new RdmaNic("mlx5_9", 1, RdmaNic.NO_SWITCH, 0));
        assertThat(d.labels()).containsEntry(GpuModels.PRODUCT_LABEL, "NVIDIA H100 80GB HBM3");
    }

    @Test
    void aPcieOnlyL40sServerHasNoNvlinkAndTwoGpusPerSwitch() {
        NodeTopology.Discovered d = discover("pcie-l40s", Map.of());

        assertThat(d.gpus()).allSatisfy(g -> {
            assertThat(g.model()).isEqualTo("L40S");
            assertThat(g.memoryMiB()).isEqualTo(46068);
            assertThat(g.nvlinkDomain()).isEqualTo(Gpu.NO_NVLINK);
            assertThat(g.migCapable()).isFalse();
        });
        assertThat(field(d.gpus(), Gpu::pcieSwitch)).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
        assertThat(field(d.gpus(), Gpu::numaNode)).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(d.nics()).containsExactly(new RdmaNic("mlx5_0", 0, 0, 0), new RdmaNic("mlx5_1", 1, 2, 0));
        assertThat(d.numaCpuMillis()).containsExactly(64_000, 64_000);
    }

    @Test
    void aMigEnabledDgxA100KeepsItsNumaNodesWithoutGpusAndMarksOnlyMigEnabledGpus() {
        NodeTopology.Discovered d = discover("dgx-a100-mig", numa("dgx-a100-mig-numa.txt"));

        assertThat(d.gpus()).allSatisfy(g -> {
            assertThat(g.model()).isEqualTo("A100");
            assertThat(g.memoryMiB()).isEqualTo(81920);
            assertThat(g.nvlinkDomain()).isZero();
        });
        assertThat(d.gpus().stream().map(Gpu::migCapable).toList())
                .containsExactly(true, true, true, true, true, true, false, false);
        // NPS4: 8 NUMA nodes, GPUs on 3, 1, 7, 5 (sysfs numbering kept: nodes without GPUs are sockets too)
        assertThat(field(d.gpus(), Gpu::numaNode)).containsExactly(3, 3, 1, 1, 7, 7, 5, 5);
        assertThat(d.numaCpuMillis()).hasSize(8).containsOnly(32_000);
        // NVLink hides the PCIe path between GPUs: the pair behind one switch shows through their NICs
        assertThat(field(d.gpus(), Gpu::pcieSwitch)).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
        assertThat(d.nics().get(1)).isEqualTo(new RdmaNic("mlx5_1", 3, 0, 0));
    }

    @Test
    void withoutSysfsTheNumaNodesOfTheGpusAreNumberedDenselyInIdOrder() {
        NodeTopology.Discovered d = discover("dgx-a100-mig", Map.of());

        assertThat(field(d.gpus(), Gpu::numaNode)).containsExactly(1, 1, 0, 0, 3, 3, 2, 2);
        assertThat(d.numaCpuMillis()).containsExactly(32_000, 32_000, 32_000, 32_000);
        assertThat(d.numaCpuMillis(96_000)).containsExactly(24_000, 24_000, 24_000, 24_000);
    }

    @Test
    void onlyTheQueryGivesModelsAndOneUnknownDomain() {
        NodeTopology.Discovered d = NodeTopology.discover(NvidiaSmiQuery.parse(sample("pcie-l40s-query.txt")), null,
                Map.of());

        assertThat(d.gpus()).hasSize(8).allSatisfy(g -> {
            assertThat(g.numaNode()).isZero();
            assertThat(g.nvlinkDomain()).isZero();
        });
        assertThat(d.numaCpuMillis()).isEmpty();
        assertThat(d.nics()).isEmpty();
    }

    @Test
    void theQueryReadsNestedSectionsInIndexOrder() {
        List<NvidiaSmiQuery.GpuInfo> gpus = NvidiaSmiQuery.parse(sample("dgx-a100-mig-query.txt"));

        assertThat(gpus).hasSize(8);
        assertThat(gpus.get(0).pciBusId()).isEqualTo("00000000:07:00.0");
        assertThat(gpus.get(0).uuid()).startsWith("GPU-");
        assertThat(gpus.get(0).migMode()).isEqualTo("Enabled");
        assertThat(gpus.get(7).migMode()).isEqualTo("Disabled");
        assertThat(NvidiaSmiQuery.parse(sample("pcie-l40s-query.txt")).get(3).migMode()).isEqualTo("N/A");
    }

    @Test
    void theMatrixIsReadWithSpacesInsteadOfTabs() {
        NvidiaSmiTopo topo = NvidiaSmiTopo.parse(sample("pcie-l40s-topo.txt").replace("\t", "    "));

        assertThat(topo.gpus()).hasSize(8);
        assertThat(topo.link("GPU0", "GPU1")).isEqualTo("PIX");
        assertThat(topo.link("GPU0", "GPU5")).isEqualTo("SYS");
        assertThat(topo.cpuAffinity()).containsEntry("GPU6", "32-63,96-127");
        assertThat(topo.numaAffinity()).containsEntry("GPU6", "1");
    }

    @Test
    void textThatIsNotAMatrixIsRefused() {
        assertThatThrownBy(() -> NvidiaSmiTopo.parse("NVIDIA-SMI has failed because it couldn't communicate"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("GPU0");
        assertThatThrownBy(() -> CpuList.parse("0-x")).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({
            "NVIDIA H100 80GB HBM3, H100",
            "NVIDIA-H100-80GB-HBM3, H100",
            "NVIDIA A100-SXM4-80GB, A100",
            "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb, A100",
            "NVIDIA L40S, L40S",
            "Tesla T4, T4",
            "NVIDIA GeForce RTX 4090, RTX-4090",
            "NVIDIA RTX A6000, RTX-A6000",
            "'', generic"})
    void modelNamesAreShortenedTheWayJobsNameThem(String product, String expected) {
        assertThat(GpuModels.shortName(product)).isEqualTo(expected);
    }
}
