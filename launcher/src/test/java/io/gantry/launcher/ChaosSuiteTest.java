package io.gantry.launcher;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Every fault the system claims to survive, one after another, under one stream of work ({@link FaultSuite}): the
 * whole system on three brokers (replication factor 3, min.insync.replicas 2), one instance of each service, 2,000
 * jobs. One fault at a time, each 3 s after the previous part was back: kill -9 of admission, queue, placement,
 * recovery and billing (each restarted after 2 s, placement after {@link #PLACEMENT_AWAY_FOR}; it takes its group
 * place back at once by its instance id), kill -9 of every PostgreSQL process (started again on its data), and, once
 * every restarted service owns its inputs again, the broker coordinating every transaction stopped for 10 s and
 * restarted. No node fails, so no job may run twice: placement away longer than recovery's heartbeat timeout silences
 * every node's heartbeats at once, which recovery must not take for every node failing. About 5 minutes on 2 cores.
 */
class ChaosSuiteTest extends FaultSuite {
    /** Longer than recovery's heartbeat timeout (10 s, {@link FaultSuite#serviceProperties()}). */
    static final java.time.Duration PLACEMENT_AWAY_FOR = java.time.Duration.ofSeconds(15);

    @Override
    int jobs() {
        return 2000;
    }

    @Override
    String title() {
        return "chaos suite (3 brokers, RF 3, min ISR 2)";
    }

    @Override
    DevCluster.Config config(Path dataDir, Path repo) throws java.io.IOException {
        return new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(5), serviceProperties(), "200m", 3);
    }

    @Override
    void inflictFaults(JobEnds jobEnds, ExecutorService watchers, List<CompletableFuture<Fault>> faults,
                       Map<String, Object> chaos) throws Exception {
        Map<String, Set<String>> killedMembers = new HashMap<>();
        for (String service : DevCluster.SERVICES) {
            faults.add(inflict("kill -9 " + service, "gantry-" + service, jobEnds, watchers, killedMembers,
                    () -> {
                        cluster.service(service).kill();
                        TimeUnit.MILLISECONDS.sleep((service.equals("placement") ? PLACEMENT_AWAY_FOR : KILLED_FOR)
                                .toMillis());
                        cluster.restart(service);
                    }));
        }
        faults.add(inflict("kill -9 PostgreSQL", null, jobEnds, watchers, killedMembers, cluster::restartPostgres));
        // a group coordinator that moves while a killed member is still in its group gives that member a
        // whole new session timeout, so the broker goes once every restarted service owns its inputs again
        for (Map.Entry<String, Set<String>> g : killedMembers.entrySet()) {
            awaitTakenOver(g.getKey(), g.getValue());
        }
        // the transaction coordinator of every transactional id (one partition of the transaction log)
        int victim = kafka.leaderOf("__transaction_state", 0);
        faults.add(inflict("stop broker " + victim, null, jobEnds, watchers, killedMembers, () -> {
            kafka.stop(victim);
            TimeUnit.MILLISECONDS.sleep(BROKER_DOWN_FOR.toMillis());
            kafka.restart(victim);
        }));
        chaos.put("inSyncMs", kafka.awaitFullyReplicated(LONG).toMillis());
    }

    @Override
    void checkRequeued(long requeued) {
        assertThat(requeued).as("jobs run more than once although no node failed (placement was away %s s)",
                PLACEMENT_AWAY_FOR.toSeconds()).isZero();
    }

    @Test
    void everyServicePostgresAndABrokerCrashingInTurnLoseNoJobGrantNoGpuTwiceAndBillExactlyTheAllocations()
            throws Exception {
        runSuite(7);
        // killed mid-stream after snapshots were taken: their restarts read a snapshot and the history after it
        assertThat(restoredFromSnapshots()).contains("queue", "placement", "recovery");
    }
}
