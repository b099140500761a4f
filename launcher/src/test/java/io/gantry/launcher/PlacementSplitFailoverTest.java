package io.gantry.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Placement split by pool ({@code gantry.placement.shard-by-pool}) under kill -9: two instances of every service,
 * two simulated pools of 4 x 8 GPUs ({@code a}, the backend's default nodes, and {@code b}), jobs alternating
 * between them ({@code "pool"} in the job), each pool a unit of placement owned by one instance. One after another,
 * kill -9 of the instance that owns pool {@code a}, then of the one that owns pool {@code b}: each time the other
 * instance takes the pool over (restores its part of the state, keeps its runs) within {@link
 * FailoverTest#TAKEOVER_BOUND}, and the killed instance, restarted, gets its pool back within that bound too (before
 * the next kill). The suite's checks: every job ends once, no GPU held by two runs, billing equals the allocation
 * log. About 2 minutes on 2 cores.
 */
class PlacementSplitFailoverTest extends SplitFailoverSuite {
    static final List<String> POOLS = List.of("a", "b");

    @Override
    int jobs() {
        return 800;
    }

    @Override
    int nodes() {
        return 8;
    }

    @Override
    String jobFields(int n) {
        return "\"pool\":\"" + POOLS.get(n % 2) + "\",";
    }

    @Override
    String title() {
        return "placement split by pool, failover suite (2 instances per service, pools a and b)";
    }

    @Override
    DevCluster.Config config(Path dataDir, Path repo) throws java.io.IOException {
        Path poolB = dataDir.resolve("pool-b.yaml");
        StringBuilder nodes = new StringBuilder("nodes:\n");
        for (int i = 0; i < 4; i++) {
            nodes.append("""
                      - id: b-%d
                        gpus:
                          count: 8
                          model: H100
                          memoryMiB: 81920
                        cpuMillis: 96000
                        memoryMiB: 1048576
                    """.formatted(i));
        }
        Files.writeString(poolB, nodes);
        return twoInstances(dataDir, repo, Map.of("gantry.placement.shard-by-pool", "true",
                "gantry.placement.pools.a.backend", "simulated", "gantry.placement.pools.b.backend", "simulated",
                "gantry.placement.pools.b.simulated.cluster-file", poolB.toString()));
    }

    @Override
    String service() {
        return "placement";
    }

    @Override
    List<String> groups() {
        return POOLS.stream().map(p -> "gantry-placement-pool-" + p).toList();
    }

    @Test
    void killingTheOwnerOfEachPoolHandsThatPoolToTheOtherInstanceWithinTheBoundLosingAndDoublingNothing()
            throws Exception {
        runSuite(2);
    }
}
