package io.gantry.placement.backend;

import io.gantry.placement.backend.SuccessRule.Replica;
import io.gantry.placement.backend.SuccessRule.Verdict;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/** The one rule deciding a gang's outcome from its tasks' ends, and the one numbering of its ranks. */
class SuccessRuleTest {
    /** A launcher and two workers. */
    private static final List<PlacedTask> GANG = List.of(task("launcher", 0, "n1"), task("worker", 0, "n2"),
            task("worker", 1, "n3"));

    private static PlacedTask task(String name, int replica, String node) {
        return new PlacedTask(name, replica, node, null, List.of(), 1000, 256);
    }

    /** Ends as "task/replica=ok" pairs: true when it exited 0. */
    private static Map<Replica, Boolean> ended(Object... taskReplicaOk) {
        Map<Replica, Boolean> m = new LinkedHashMap<>();
        for (int i = 0; i < taskReplicaOk.length; i += 3) {
            m.put(new Replica((String) taskReplicaOk[i], (Integer) taskReplicaOk[i + 1]), (Boolean) taskReplicaOk[i + 2]);
        }
        return m;
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                arguments("nothing ended yet", null, ended(), Verdict.RUNNING),
                arguments("some tasks succeeded, not all", null, ended("launcher", 0, true, "worker", 0, true),
                        Verdict.RUNNING),
                arguments("every task succeeded", null, ended("launcher", 0, true, "worker", 0, true,
                        "worker", 1, true), Verdict.SUCCEEDED),
                arguments("one task failed among successes", null, ended("launcher", 0, true, "worker", 1, false),
                        Verdict.FAILED),
                arguments("the leader succeeded while the workers run", "launcher", ended("launcher", 0, true),
                        Verdict.SUCCEEDED),
                arguments("the workers succeeded but not the leader", "launcher",
                        ended("worker", 0, true, "worker", 1, true), Verdict.RUNNING),
                arguments("a worker failed before the leader ended", "launcher", ended("worker", 1, false),
                        Verdict.FAILED),
                arguments("the leader failed", "launcher", ended("launcher", 0, false), Verdict.FAILED),
                arguments("a failure seen together with the leader's success", "launcher",
                        ended("launcher", 0, true, "worker", 0, false), Verdict.FAILED),
                arguments("a leader group of two with one replica done", "worker", ended("worker", 0, true),
                        Verdict.RUNNING),
                arguments("a leader group of two with both done", "worker",
                        ended("worker", 0, true, "worker", 1, true), Verdict.SUCCEEDED),
                arguments("a leader naming no task counts as none", "ghost", ended("launcher", 0, true),
                        Verdict.RUNNING));
    }

    @ParameterizedTest(name = "{0}: {3}")
    @MethodSource("cases")
    void decidesTheRunsOutcomeFromItsTasksEnds(String description, String leader, Map<Replica, Boolean> ended,
                                               Verdict expected) {
        assertThat(SuccessRule.judge(GANG, leader, ended)).isEqualTo(expected);
    }

    @Test
    void ranksNumberTaskGroupsInSpecOrderThenReplicasWhateverTheOrderOfPlacements() {
        Allocation a = new Allocation("a", "j", "t", 1, List.of(task("launcher", 0, "n1"), task("worker", 1, "n3"),
                task("worker", 0, "n2"), task("ps", 0, "n4")), Instant.EPOCH, "local");

        assertThat(GangRanks.inRankOrder(a)).extracting(p -> p.task() + "-" + p.replica())
                .containsExactly("launcher-0", "worker-0", "worker-1", "ps-0");
        assertThat(GangRanks.rank(a, task("worker", 1, "n3"))).isEqualTo(2);
        assertThat(GangRanks.rank(a, task("nobody", 0, "n3"))).isEqualTo(-1);
    }

    @Test
    void everyTaskOfAGangGetsTheSameRendezvousAndItsOwnRank() {
        Allocation a = new Allocation("a", "j", "t", 1, List.of(task("launcher", 0, "n1"),
                new PlacedTask("worker", 0, "n2", "H100", List.of(0, 1), 1000, 256)), Instant.EPOCH, "slurm");

        Map<String, String> worker = GangEnvironment.rendezvous(a, a.placements().get(1), GangEnvironment.nodeHosts(a),
                29_600);

        assertThat(worker).containsEntry("MASTER_ADDR", "n1").containsEntry("MASTER_PORT", "29600")
                .containsEntry("WORLD_SIZE", "2").containsEntry("RANK", "1").containsEntry("GANTRY_RANK", "1")
                .containsEntry("GANTRY_WORLD_SIZE", "2").containsEntry("GANTRY_HOSTS", "n1,n2")
                .containsEntry("PET_NNODES", "2").containsEntry("PET_NODE_RANK", "1")
                .containsEntry("PET_NPROC_PER_NODE", "2");
        assertThat(GangEnvironment.derivedPort("a")).isEqualTo(GangEnvironment.derivedPort("a"))
                .isBetween(GangEnvironment.PORT_BASE, GangEnvironment.PORT_BASE + GangEnvironment.PORT_SPAN - 1);
    }

    @Test
    void theTenantsVariablesNeverReplaceGantrysButPathAndHomeMayBeTheTenants() {
        Map<String, String> merged = GangEnvironment.merge(Map.of("PATH", "/venv/bin", "RANK", "9", "FOO", "bar"),
                Map.of("PATH", "/usr/bin", "HOME", "/run", "RANK", "0"));

        assertThat(merged).containsEntry("PATH", "/venv/bin").containsEntry("HOME", "/run")
                .containsEntry("RANK", "0").containsEntry("FOO", "bar");
    }
}
