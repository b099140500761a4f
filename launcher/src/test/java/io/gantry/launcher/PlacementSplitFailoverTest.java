package io.gantry.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
class PlacementSplitFailoverTest extends FaultSuite {
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
        Map<String, Map<String, String>> properties = new HashMap<>(serviceProperties());
        Map<String, String> placement = new HashMap<>(properties.get("placement"));
        placement.put("gantry.placement.shard-by-pool", "true");
        placement.put("gantry.placement.pools.a.backend", "simulated");
        placement.put("gantry.placement.pools.b.backend", "simulated");
        placement.put("gantry.placement.pools.b.simulated.cluster-file", poolB.toString());
        properties.put("placement", placement);
        return new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(10), properties, "200m", 1, 2);
    }

    @Override
    void inflictFaults(JobEnds jobEnds, ExecutorService watchers, List<CompletableFuture<Fault>> faults,
                       Map<String, Object> chaos) throws Exception {
        assertThat(holder(group("a"), -1)).as("the two pools are spread over the two instances")
                .isEqualTo(1 - holder(group("b"), -1));
        for (String pool : POOLS) {
            faults.add(failOver("placement", group(pool), jobEnds, watchers));
            // the restarted instance takes its pool back (the holder revokes it, then it restores it) before the
            // next kill, so that kill stops one pool, not a hand-back under way
            long restarted = System.currentTimeMillis();
            await().atMost(FailoverTest.TAKEOVER_BOUND).pollInterval(Duration.ofMillis(200))
                    .until(() -> holder(group("a"), -1) == 1 - holder(group("b"), -1));
            System.out.printf("  pool %s: its restarted instance had it back %d ms after the restart's 3 s pause%n",
                    pool, System.currentTimeMillis() - restarted);
        }
    }

    private static String group(String pool) {
        return "gantry-placement-pool-" + pool;
    }

    @Override
    void checkFaults(List<Fault> measured, long lastSubmission) {
        assertThat(measured).allSatisfy(f -> {
            assertThat(f.consumingAt() - f.hitAt()).as("takeover after " + f.what())
                    .isNotNegative().isLessThanOrEqualTo(FailoverTest.TAKEOVER_BOUND.toMillis());
            assertThat(f.hitAt()).as(f.what() + " while jobs come in").isLessThan(lastSubmission);
        });
        // each restarted instance got its pool back: one pool per instance again
        try {
            assertThat(holder(group("a"), -1)).as("pool a's owner at the end").isEqualTo(1 - holder(group("b"), -1));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void killingTheOwnerOfEachPoolHandsThatPoolToTheOtherInstanceWithinTheBoundLosingAndDoublingNothing()
            throws Exception {
        runSuite(2);
    }
}
