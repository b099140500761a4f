package io.gantry.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The queue split by cohort tree ({@code gantry.queue.shards: 2}) under kill -9: two instances of every service, the
 * suite's four tenants on implicit queues (each its own tree: gamma's on shard 0, alpha's, beta's and delta's on
 * shard 1), each shard a unit of the queue owned by one instance. One after another, kill -9 of the instance that
 * owns shard 0, then of the one that owns shard 1: each time the other instance takes the shard over (restores its
 * tenants' part of the state) within {@link FailoverTest#TAKEOVER_BOUND}, and the killed instance, restarted, gets
 * its shard back within that bound too (before the next kill). The suite's checks: every job ends once, no GPU held
 * by two runs, billing equals the allocation log. About 2 minutes on 2 cores.
 */
class QueueSplitFailoverTest extends SplitFailoverSuite {
    @Override
    int jobs() {
        return 800;
    }

    @Override
    String title() {
        return "queue split by cohort tree, failover suite (2 instances per service, 2 shards)";
    }

    @Override
    DevCluster.Config config(Path dataDir, Path repo) throws java.io.IOException {
        return twoInstances(dataDir, repo, Map.of("gantry.queue.shards", "2"));
    }

    @Override
    String service() {
        return "queue";
    }

    @Override
    List<String> groups() {
        return List.of("gantry-queue-shard-0", "gantry-queue-shard-1");
    }

    @Test
    void killingTheOwnerOfEachShardHandsThatShardToTheOtherInstanceWithinTheBoundLosingAndDoublingNothing()
            throws Exception {
        runSuite(2);
    }
}
