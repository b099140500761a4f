package io.gantry.admission.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static io.gantry.admission.core.SpecTrees.gpus;
import static org.assertj.core.api.Assertions.assertThat;

class NodeCatalogTest {
    @Test
    void limitsAreTheBiggestNodeOverallAndPerModel() {
        NodeCatalog catalog = new NodeCatalog();
        catalog.register("a", gpus(8, "H100"));
        catalog.register("b", List.of("A100", "A100", "H100"));

        ClusterLimits limits = catalog.limits();

        assertThat(limits.nodes()).isEqualTo(2);
        assertThat(limits.maxGpusPerNode()).isEqualTo(8);
        assertThat(limits.maxGpusPerNodeByModel()).isEqualTo(Map.of("H100", 8, "A100", 2));
        assertThat(limits.totalGpusByModel()).isEqualTo(Map.of("H100", 9, "A100", 2));
        assertThat(limits.totalGpus()).isEqualTo(11);
    }

    @Test
    void aNodeThatRegistersAgainReplacesItsEarlierHardware() {
        NodeCatalog catalog = new NodeCatalog();
        catalog.register("a", gpus(8, "H100"));
        catalog.register("a", gpus(2, "A100"));

        assertThat(catalog.limits()).isEqualTo(new ClusterLimits(1, 2, Map.of("A100", 2), Map.of("A100", 2)));
    }

    @Test
    void cpuAndMemoryAreTheLargestSocketOfAnyNodeAndEveryNodesTogether() {
        NodeCatalog catalog = new NodeCatalog();
        catalog.register("a", gpus(8, "H100"), 48_000, 262_144, 96_000, 524_288);
        catalog.register("b", gpus(4, "A100"), 64_000, 131_072, 64_000, 131_072);

        assertThat(catalog.limits().maxSocketCpuMillis()).isEqualTo(64_000);
        assertThat(catalog.limits().maxSocketMemoryMiB()).isEqualTo(262_144);
        assertThat(catalog.limits().totalCpuMillis()).isEqualTo(160_000);
        assertThat(catalog.limits().totalMemoryMiB()).isEqualTo(655_360);
    }

    @Test
    void anEmptyCatalogAdmitsNoGpus() {
        assertThat(new NodeCatalog().limits()).isEqualTo(ClusterLimits.none());
    }
}
