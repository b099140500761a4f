package io.gantry.placement.http;

import io.gantry.placement.http.ClusterController.ClusterBody;
import io.gantry.placement.http.ClusterController.PoolBody;
import io.gantry.placement.http.ClusterController.RackBody;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The cluster summary of several pools (of one instance, or of the instances owning placement's units) as one. */
class ClusterMergeTest {
    private static ClusterBody pool(String name, String placer, int nodes, int gpus, int free, double fragmentation) {
        return new ClusterBody(placer, nodes, nodes, gpus, free, fragmentation, List.of(8),
                List.of(new RackBody("s", name + "-rack", nodes, nodes, gpus, free)), Map.of(),
                List.of(name + "-cordoned"), List.of(),
                List.of(new PoolBody(name, "simulated", placer, nodes, nodes, gpus, free, fragmentation)));
    }

    @Test
    void countsAddUpPoolsKeepTheirConfiguredOrderAndFragmentationIsWeightedByFreeGpus() {
        // the remote pool "default" arrives after the local ones: still second, and its placer is the cluster's
        ClusterBody merged = ClusterController.merge(List.of(pool("a", "binpack", 4, 32, 30, 0.5),
                pool("c", "binpack", 1, 8, 0, 0.0), pool("default", "spread", 2, 16, 10, 0.1)),
                List.of("a", "default", "c"));
        assertThat(merged.pools()).extracting(PoolBody::pool).containsExactly("a", "default", "c");
        assertThat(merged.placer()).isEqualTo("spread");
        assertThat(merged.nodes()).isEqualTo(7);
        assertThat(merged.gpus()).isEqualTo(56);
        assertThat(merged.freeGpus()).isEqualTo(40);
        assertThat(merged.fragmentation()).isCloseTo((0.5 * 30 + 0.1 * 10) / 40, within(1e-9));
        assertThat(merged.racks()).hasSize(3);
        assertThat(merged.cordonedNodes()).containsExactlyInAnyOrder("a-cordoned", "c-cordoned", "default-cordoned");
    }

    @Test
    void onePoolIsItsOwnSummary() {
        ClusterBody only = pool("a", "binpack", 4, 32, 0, 0.0);
        assertThat(ClusterController.merge(List.of(only), List.of("a"))).isSameAs(only);
    }
}
