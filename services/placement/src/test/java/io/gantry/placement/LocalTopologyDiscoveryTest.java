package io.gantry.placement;

import io.gantry.placement.backend.topology.HostTopology;
import io.gantry.placement.backend.topology.NodeTopology;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** The local node takes its GPUs from a (recorded) nvidia-smi and sysfs when they answer, else from configuration. */
class LocalTopologyDiscoveryTest {
    @TempDir
    Path dir;

    /** A stand-in for nvidia-smi that prints a recorded server's output for {@code -q} and {@code topo -m}. */
    private String fakeNvidiaSmi(String server) throws IOException {
        Files.write(dir.resolve("query.txt"), resource(server + "-query.txt"));
        Files.write(dir.resolve("topo.txt"), resource(server + "-topo.txt"));
        Path script = dir.resolve("nvidia-smi");
        Files.writeString(script, "#!/bin/sh\nif [ \"$1\" = topo ]; then cat " + dir.resolve("topo.txt")
                + "; else cat " + dir.resolve("query.txt") + "; fi\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        return script.toString();
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = LocalTopologyDiscoveryTest.class.getResourceAsStream("/topology/" + name)) {
            return in.readAllBytes();
        }
    }

    /** {@code node<N>/cpulist} files as sysfs has them, from the recorded NUMA layout. */
    private Path sysfs(String sample) throws IOException {
        Path nodes = dir.resolve("sys-node");
        for (String line : new String(resource(sample)).split("\\R")) {
            if (!line.isBlank()) {
                String[] f = line.trim().split("\\s+");
                Files.createDirectories(nodes.resolve(f[0]));
                Files.writeString(nodes.resolve(f[0]).resolve("cpulist"), f[1] + "\n");
            }
        }
        return nodes;
    }

    @Test
    void aMigEnabledDgxA100RegistersItsDiscoveredTopologyAsTheLocalNode() throws IOException {
        Optional<NodeTopology.Discovered> found = HostTopology.discover(fakeNvidiaSmi("dgx-a100-mig"),
                sysfs("dgx-a100-mig-numa.txt"), Duration.ofSeconds(10));

        NodeSpec node = BackendFactory.localNode(0, "generic", 0, false, 0, 2_000_000, "", found);

        assertThat(node.gpus()).hasSize(8).allSatisfy(g -> assertThat(g.model()).isEqualTo("A100"));
        assertThat(node.sockets()).isEqualTo(8);
        assertThat(node.cpuMillis()).isEqualTo(256_000);
        assertThat(node.gpus().get(0).numaNode()).isEqualTo(3);
        assertThat(node.gpus().get(0).migCapable()).isTrue();
        assertThat(node.gpus().get(7).migCapable()).isFalse();
        assertThat(node.rdmaNics()).hasSize(10);
        assertThat(node.labels()).containsEntry("gpu.product", "NVIDIA A100-SXM4-80GB");
    }

    @Test
    void aPcieL40sServerWithAConfiguredCpuAmountSharesItOverItsSockets() throws IOException {
        Optional<NodeTopology.Discovered> found = HostTopology.discover(fakeNvidiaSmi("pcie-l40s"),
                dir.resolve("no-sysfs"), Duration.ofSeconds(10));

        NodeSpec node = BackendFactory.localNode(0, "generic", 0, false, 32_000, 1024, "mlx5_9:1", found);

        assertThat(node.gpus()).extracting(Gpu::nvlinkDomain).containsOnly(Gpu.NO_NVLINK);
        assertThat(node.gpus()).extracting(Gpu::pcieSwitch).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
        assertThat(node.numaCpuMillis()).containsExactly(16_000, 16_000);
        assertThat(node.rdmaNics()).extracting(n -> n.name()).containsExactly("mlx5_9");
    }

    @Test
    void withoutNvidiaSmiTheConfiguredGpusAreRegistered() {
        Optional<NodeTopology.Discovered> found = HostTopology.discover(dir.resolve("absent").toString(), dir,
                Duration.ofSeconds(5));

        NodeSpec node = BackendFactory.localNode(2, "L4", 24_000, false, 4000, 1024, "", found);

        assertThat(found).isEmpty();
        assertThat(node.gpus()).containsExactly(new Gpu(0, "L4", 24_000), new Gpu(1, "L4", 24_000));
        assertThat(node.sockets()).isEqualTo(1);
    }
}
