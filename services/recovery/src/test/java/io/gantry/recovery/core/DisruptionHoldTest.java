package io.gantry.recovery.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Placement sends every node's heartbeats, so when it restarts or fails over for longer than the heartbeat timeout
 * every node of its pools falls silent at once. Recovery holds such a pool instead of declaring all its nodes failed
 * (which would stop and requeue every run there); a node still silent once the pool's heartbeats come again, or after
 * the hold, is declared failed as before, and a node silent alone is declared failed at the timeout as before.
 */
class DisruptionHoldTest {
    private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");
    private static final List<String> NODES = List.of("n1", "n2", "n3", "n4");

    private final Recovery core = new Recovery(new RecoveryPolicy(Duration.ofSeconds(10), 3));

    private static Instant at(double seconds) {
        return T0.plusMillis(Math.round(seconds * 1000));
    }

    /** The nodes registered in {@code pool} at 0 s, then a heartbeat each every second from 1 s to {@code last}. */
    private void beat(String pool, List<String> nodes, int last) {
        nodes.forEach(n -> core.replayAll(core.onRegistration(n, pool, at(0))));
        for (int t = 1; t <= last; t++) {
            for (String n : nodes) {
                core.replayAll(core.onSignOfLife(n, at(t)));
            }
        }
    }

    private List<String> failedAt(double seconds) {
        List<RecoveryFact> facts = core.tick(at(seconds));
        core.replayAll(facts);
        return facts.stream().map(f -> ((RecoveryFact.NodeFailed) f).nodeId()).toList();
    }

    @Test
    void aPoolWhoseNodesAllFallSilentTogetherIsHeldAndNoneIsDeclaredFailed() {
        beat("gpu", NODES, 20);

        assertThat(failedAt(31)).isEmpty();
        assertThat(core.heldPools(at(31))).containsExactly("gpu");
        assertThat(failedAt(120)).isEmpty();
        assertThat(core.nodes()).allMatch(n -> n.state() == NodeState.HEALTHY);
    }

    @Test
    void whenThePoolsHeartbeatsComeAgainANodeStillSilentFailsATimeoutLaterAndTheOthersNot() {
        beat("gpu", NODES, 20);
        assertThat(failedAt(45)).isEmpty();

        // placement is back: its first heartbeat ends the hold, and the pool's silence counts from it
        core.replayAll(core.onSignOfLife("n1", at(60)));
        assertThat(core.heldPools(at(60))).isEmpty();
        core.replayAll(core.onSignOfLife("n2", at(60.4)));
        core.replayAll(core.onSignOfLife("n3", at(60.8)));
        assertThat(failedAt(65)).as("the others' heartbeats of the round may still be on their way").isEmpty();
        for (int t = 61; t <= 75; t++) {
            for (String n : List.of("n1", "n2", "n3")) {
                core.replayAll(core.onSignOfLife(n, at(t)));
            }
        }
        assertThat(failedAt(70.5)).as("n4 silent since placement came back at 60 s").containsExactly("n4");
        assertThat(failedAt(75)).isEmpty();
    }

    @Test
    void aNodeSilentWhileTheOthersOfItsPoolBeatFailsAtTheTimeoutAsBefore() {
        beat("gpu", NODES, 20);
        for (int t = 21; t <= 40; t++) {
            for (String n : List.of("n1", "n2", "n3")) {
                core.replayAll(core.onSignOfLife(n, at(t)));
            }
        }

        assertThat(failedAt(30.5)).containsExactly("n4");
        assertThat(core.heldPools(at(30.5))).isEmpty();
    }

    @Test
    void afterTheHoldTheSilentPoolsNodesAreDeclaredFailed() {
        beat("gpu", NODES, 20);
        Instant holdEnds = at(20).plus(Duration.ofSeconds(10)).plus(RecoveryPolicy.DEFAULT_DISRUPTION_HOLD);

        assertThat(failedAt(Duration.between(T0, holdEnds).toMillis() / 1000.0 - 1)).isEmpty();
        assertThat(failedAt(Duration.between(T0, holdEnds).toMillis() / 1000.0 + 1)).containsExactlyElementsOf(NODES);
    }

    @Test
    void poolsAreJudgedApart() {
        core.replayAll(core.onRegistration("a1", "a", at(0)));
        core.replayAll(core.onRegistration("a2", "a", at(0)));
        beat("b", List.of("b1", "b2"), 40);
        core.replayAll(core.onSignOfLife("a1", at(5)));
        core.replayAll(core.onSignOfLife("a2", at(5)));

        // pool a fell silent as a whole (its placement instance is away); pool b's nodes beat on
        assertThat(failedAt(20)).isEmpty();
        assertThat(core.heldPools(at(20))).containsExactly("a");
        // within pool b a node silent alone fails as before
        for (int t = 41; t <= 60; t++) {
            core.replayAll(core.onSignOfLife("b1", at(t)));
        }
        assertThat(failedAt(50.5)).containsExactly("b2");
    }

    @Test
    void withAZeroHoldASilentPoolsNodesFailAtTheTimeout() {
        Recovery noHold = new Recovery(new RecoveryPolicy(Duration.ofSeconds(10), 3).withDisruptionHold(Duration.ZERO));
        for (String n : NODES) {
            noHold.replayAll(noHold.onRegistration(n, "gpu", at(0)));
            noHold.replayAll(noHold.onSignOfLife(n, at(20)));
        }
        assertThat(noHold.heldPools(at(31))).isEmpty();
        assertThat(noHold.tick(at(31))).hasSize(4);
    }

    @Test
    void aNegativeHoldIsRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RecoveryPolicy.defaults()
                .withDisruptionHold(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("disruptionHold");
    }
}
