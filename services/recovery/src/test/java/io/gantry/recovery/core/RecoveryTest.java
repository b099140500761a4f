package io.gantry.recovery.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static io.gantry.recovery.core.RecoveryScenario.aRecovery;
import static io.gantry.recovery.core.RecoveryScenario.at;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class RecoveryTest {

    private static Arguments scenario(String name, UnaryOperator<RecoveryScenario> steps, String... expected) {
        return arguments(named(name, steps), List.of(expected));
    }

    static Stream<Arguments> liveness() {
        return Stream.of(
                scenario("a silent node is declared failed once, when the timeout has passed",
                        s -> s.heartbeat("sim-1", 0).tick(10).tick(12).tick(20).tick(60),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)"),
                scenario("silence exactly as long as the timeout is not yet a failure",
                        s -> s.heartbeat("sim-1", 0).tick(10)),
                scenario("a node that keeps heartbeating within the timeout stays healthy",
                        s -> s.heartbeat("sim-1", 0).tick(9).heartbeat("sim-1", 9.9).tick(19)
                                .heartbeat("sim-1", 19.5).tick(29.5)),
                scenario("a registered node that never heartbeats fails after the timeout",
                        s -> s.heartbeat("sim-1", 0).tick(10.5),
                        "NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)"),
                scenario("only the silent node fails",
                        s -> s.heartbeat("sim-1", 0).heartbeat("sim-2", 0).heartbeat("sim-2", 8).tick(12),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)"),
                scenario("a heartbeat from a failed node recovers it, and it can fail again",
                        s -> s.heartbeat("sim-1", 0).tick(12).heartbeat("sim-1", 15).tick(20).tick(26),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)",
                        "NodeRecovered sim-1",
                        "NodeFailed sim-1: no heartbeat for 11 s (timeout 10 s)"),
                scenario("a re-registration does not recover a failed node (a cordon or drain re-publishes it); "
                                + "its next heartbeat does",
                        s -> s.registration("sim-1", 0).tick(12).registration("sim-1", 13).tick(14)
                                .heartbeat("sim-1", 15),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)",
                        "NodeRecovered sim-1"),
                scenario("a first registration is a sign of life",
                        s -> s.registration("sim-1", 0).tick(9).registration("sim-2", 9).tick(12),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)"),
                scenario("a restart gives every known node a fresh grace period from when it has caught up",
                        s -> s.heartbeat("sim-1", 0).restart(100).caughtUp(100).tick(105).tick(111),
                        "NodeFailed sim-1: no heartbeat for 11 s (timeout 10 s)"),
                scenario("a restarted detector declares nothing failed while it waits for its heartbeat input "
                                + "(a killed member's partitions come back only after the session timeout)",
                        s -> s.heartbeat("sim-1", 0).heartbeat("sim-2", 0).restart(100).tick(115).tick(145)),
                scenario("once caught up, heartbeats read from the backlog keep nodes healthy and silence counts "
                                + "from then on",
                        s -> s.heartbeat("sim-1", 0).heartbeat("sim-2", 0).restart(100).tick(140)
                                .heartbeat("sim-1", 145).caughtUp(145).tick(154).heartbeat("sim-1", 154).tick(156),
                        "NodeFailed sim-2: no heartbeat for 11 s (timeout 10 s)"),
                scenario("a restart alone never fails a node that keeps heartbeating",
                        s -> s.heartbeat("sim-1", 0).restart(100).heartbeat("sim-1", 101).tick(108)),
                scenario("a node failed before a restart stays failed without a second failure",
                        s -> s.heartbeat("sim-1", 0).tick(12).restart(100).tick(200),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)"),
                scenario("a node failed before a restart recovers with its first heartbeat after it",
                        s -> s.heartbeat("sim-1", 0).tick(12).restart(100).heartbeat("sim-1", 101),
                        "NodeFailed sim-1: no heartbeat for 12 s (timeout 10 s)",
                        "NodeRecovered sim-1"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("liveness")
    void liveness(UnaryOperator<RecoveryScenario> steps, List<String> expected) {
        RecoveryScenario s = steps.apply(aRecovery().timeoutSeconds(10).build());
        assertThat(s.published()).containsExactlyElementsOf(expected);
    }

    static Stream<Arguments> requeue() {
        return Stream.of(
                scenario("an interrupted job is requeued up to the restart limit, then abandoned",
                        s -> s.heartbeat("sim-2", 0).tick(12)
                                .nodeFailure("job-1", 1, "sim-1", "sim-2")
                                .nodeFailure("job-1", 2, "sim-2")
                                .nodeFailure("job-1", 3, "sim-2")
                                .nodeFailure("job-1", 4, "sim-2"),
                        "NodeFailed sim-2: no heartbeat for 12 s (timeout 10 s)",
                        "JobRequeued job-1#1: node sim-2 failed; restart 1 of 3",
                        "JobRequeued job-1#2: node sim-2 failed; restart 2 of 3",
                        "JobRequeued job-1#3: node sim-2 failed; restart 3 of 3",
                        "JobRecoveryAbandoned job-1#4: restart limit 3 reached"),
                scenario("a repeated release of the same attempt never requeues twice",
                        s -> s.nodeFailure("job-1", 1, "sim-1").nodeFailure("job-1", 1, "sim-1"),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3"),
                scenario("a late release of an earlier attempt is ignored",
                        s -> s.nodeFailure("job-1", 1).nodeFailure("job-1", 2).nodeFailure("job-1", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3",
                        "JobRequeued job-1#2: a node of the allocation failed; restart 2 of 3"),
                scenario("restart counts are per job",
                        s -> s.nodeFailure("job-1", 1).nodeFailure("job-2", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3",
                        "JobRequeued job-2#1: a node of the allocation failed; restart 1 of 3"),
                scenario("every failed node of the allocation is named",
                        s -> s.heartbeat("sim-1", 0).heartbeat("sim-2", 0).tick(11)
                                .nodeFailure("job-1", 1, "sim-2", "sim-1", "sim-3"),
                        "NodeFailed sim-1: no heartbeat for 11 s (timeout 10 s)",
                        "NodeFailed sim-2: no heartbeat for 11 s (timeout 10 s)",
                        "JobRequeued job-1#1: nodes sim-1, sim-2 failed; restart 1 of 3"),
                scenario("an interrupted job resumes from its newest checkpoint, even one reported out of order",
                        s -> s.checkpoint("job-1", 1, 100, "/c/100").checkpoint("job-1", 1, 200, "/c/200")
                                .checkpoint("job-1", 1, 150, "/c/150").nodeFailure("job-1", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3; resumes from step 200 "
                                + "(/c/200)"),
                scenario("another job's checkpoint is never a resume point",
                        s -> s.checkpoint("job-2", 1, 500, "/c/job-2").nodeFailure("job-1", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3"),
                scenario("a checkpoint of a later attempt is never a resume point for an earlier one",
                        s -> s.checkpoint("job-1", 2, 500, "/c/a2").nodeFailure("job-1", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3"),
                scenario("a run that saved nothing resumes from where the run before it resumed",
                        s -> s.checkpoint("job-1", 1, 100, "/c/100").nodeFailure("job-1", 1).nodeFailure("job-1", 2)
                                .checkpoint("job-1", 3, 300, "/c/300").nodeFailure("job-1", 3),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3; resumes from step 100 "
                                + "(/c/100)",
                        "JobRequeued job-1#2: a node of the allocation failed; restart 2 of 3; resumes from step 100 "
                                + "(/c/100)",
                        "JobRequeued job-1#3: a node of the allocation failed; restart 3 of 3; resumes from step 300 "
                                + "(/c/300)"),
                scenario("checkpoints survive a restart of recovery",
                        s -> s.checkpoint("job-1", 1, 100, "/c/100").restart(50).nodeFailure("job-1", 1),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3; resumes from step 100 "
                                + "(/c/100)"),
                scenario("restart counts survive a restart of recovery",
                        s -> s.nodeFailure("job-1", 1).nodeFailure("job-1", 2).restart(50)
                                .nodeFailure("job-1", 2).nodeFailure("job-1", 3).nodeFailure("job-1", 4),
                        "JobRequeued job-1#1: a node of the allocation failed; restart 1 of 3",
                        "JobRequeued job-1#2: a node of the allocation failed; restart 2 of 3",
                        "JobRequeued job-1#3: a node of the allocation failed; restart 3 of 3",
                        "JobRecoveryAbandoned job-1#4: restart limit 3 reached"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("requeue")
    void requeue(UnaryOperator<RecoveryScenario> steps, List<String> expected) {
        RecoveryScenario s = steps.apply(aRecovery().timeoutSeconds(10).maxRestarts(3).build());
        assertThat(s.published()).containsExactlyElementsOf(expected);
    }

    @Test
    void withNoRestartsAllowedAnInterruptedJobIsAbandonedAtOnce() {
        RecoveryScenario s = aRecovery().maxRestarts(0).build().nodeFailure("job-1", 1, "sim-1");
        assertThat(s.published()).containsExactly("JobRecoveryAbandoned job-1#1: restart limit 0 reached");
    }

    @Test
    void nodeFailedCarriesTheLastHeartbeatReceivedAndHealthShowsTheFailure() {
        RecoveryScenario s = aRecovery().build().heartbeat("sim-1", 0).heartbeat("sim-1", 3).tick(14);
        RecoveryFact.NodeFailed failed = (RecoveryFact.NodeFailed) s.publishedFacts().get(0);
        assertThat(failed.lastHeartbeatAt()).isEqualTo(at(3));
        assertThat(failed.failedAt()).isEqualTo(at(14));
        assertThat(s.core().nodes()).containsExactly(
                new NodeHealth("sim-1", NodeState.FAILED, at(3), at(3), at(14)));
    }

    @Test
    void decisionsDoNotChangeStateUntilReplayed() {
        // a node alone in its pool: without the hold a pool gets when all its nodes fall silent
        Recovery core = new Recovery(RecoveryPolicy.defaults().withDisruptionHold(java.time.Duration.ZERO));
        core.replayAll(core.onSignOfLife("sim-1", at(0)));
        List<RecoveryFact> first = core.tick(at(30));
        List<RecoveryFact> second = core.tick(at(30));
        assertThat(first).hasSize(1).isEqualTo(second);
        assertThat(core.state("sim-1")).isEqualTo(NodeState.HEALTHY);
    }

    @Test
    void aBlankNodeIdOrAnInvalidRunIsRejectedBeforeAnythingChanges() {
        Recovery core = new Recovery(RecoveryPolicy.defaults());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> core.onSignOfLife(" ", at(0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nodeId");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new InterruptedRun("job-1", "vision", 0, List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attempt");
        assertThat(core.nodes()).isEmpty();
    }

    @Test
    void aJobThatEndedForGoodLeavesNoCheckpointOrRestartCountBehind() {
        Recovery core = new Recovery(RecoveryPolicy.defaults());
        core.replayAll(core.onCheckpoint("job-1", 1, 100, "s3://ckpt/100"));
        core.replayAll(core.onCheckpoint("job-2", 1, 50, "s3://ckpt/50"));
        core.replayAll(core.onInfrastructureRelease(new InterruptedRun("job-1", "vision", 1, List.of("sim-1")), false));
        assertThat(core.restarts("job-1")).isEqualTo(1);

        core.replayAll(core.onRunReleased("job-1", 2, true));
        core.replayAll(core.onRunReleased("job-2", 1, false));

        assertThat(core.restarts("job-1")).isZero();
        assertThat(core.resumePoint("job-1", 3)).isNull();
        assertThat(core.resumePoint("job-2", 2)).as("a run that ended, not the job").isNotNull();
    }
}
