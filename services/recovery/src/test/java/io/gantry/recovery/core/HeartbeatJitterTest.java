package io.gantry.recovery.core;

import org.junit.jupiter.api.Test;

import static io.gantry.recovery.core.RecoveryScenario.aRecovery;
import static org.assertj.core.api.Assertions.assertThat;

/** The failure detector under delayed, bunched and reordered heartbeats (timeout 10 s, phi threshold 8). */
class HeartbeatJitterTest {

    /** Heartbeats from {@code from} every {@code every} seconds, {@code count} of them. */
    private static RecoveryScenario steady(RecoveryScenario s, String node, double from, double every, int count) {
        for (int i = 0; i < count; i++) {
            s.heartbeat(node, from + i * every);
        }
        return s;
    }

    @Test
    void aNodeWithSteadyHeartbeatsFailsRightAtTheTimeout() {
        RecoveryScenario s = steady(aRecovery().build(), "sim-1", 0, 1, 20); // last at 19
        s.tick(29).tick(29.5);
        assertThat(s.published()).containsExactly("NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)");
    }

    @Test
    void aNodeWhoseHeartbeatsHaveBeenJitteryIsSuspectedPastTheTimeoutButFailsOnlyWhenTheSilenceIsImprobable() {
        RecoveryScenario s = aRecovery().build();
        double last = 0;
        for (int i = 0; i < 13; i++) { // 12 gaps of 1 s and 9 s: mean 5 s, deviation 4 s
            last = i == 0 ? 0 : last + (i % 2 == 1 ? 1 : 9);
            s.heartbeat("sim-1", last);
        }
        s.tick(last + 10.5).tick(last + 20);
        assertThat(s.published()).isEmpty();
        s.tick(last + 27);
        assertThat(s.published()).singleElement().asString()
                .startsWith("NodeFailed sim-1: no heartbeat for 27 s (timeout 10 s); its heartbeats were irregular "
                        + "(mean gap 5 s)");
    }

    @Test
    void heartbeatsDelayedAndDeliveredTogetherWithinTheTimeoutNeverFailTheNode() {
        RecoveryScenario s = steady(aRecovery().build(), "sim-1", 0, 1, 10); // last at 9
        // three heartbeats held up in the pipe (or reordered) arrive at once, 9.5 s after the last
        s.tick(15).tick(18.5).heartbeat("sim-1", 18.5).heartbeat("sim-1", 18.5).heartbeat("sim-1", 18.5);
        steady(s, "sim-1", 19.5, 1, 5).tick(28).tick(33);
        assertThat(s.published()).isEmpty();
    }

    @Test
    void aSilenceOfThreeTimeoutsFailsANodeHoweverJitteryItsHistory() {
        RecoveryScenario s = aRecovery().build();
        double t = 0;
        for (int i = 0; i < 12; i++) { // gaps of 0.1 s and 9.9 s
            s.heartbeat("sim-1", t);
            t += i % 2 == 0 ? 0.1 : 9.9;
        }
        double last = t - 9.9;
        s.tick(last + 29).tick(last + 30.5);
        assertThat(s.published()).singleElement().asString()
                .contains("no heartbeat for 30.5 s").contains("only once it was 3 timeouts long");
    }

    @Test
    void withThePhiThresholdAtZeroTheTimeoutAloneDecides() {
        RecoveryScenario s = aRecovery().phiThreshold(0).build();
        double t = 0;
        for (int i = 0; i < 12; i++) {
            s.heartbeat("sim-1", t);
            t += i % 2 == 0 ? 1 : 9;
        }
        s.tick(t - 9 + 10.5);
        assertThat(s.published()).containsExactly("NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)");
    }

    @Test
    void anOutageIsNoHeartbeatGapSoTheNextFailureIsDeclaredAtTheTimeoutAgain() {
        RecoveryScenario s = steady(aRecovery().build(), "sim-1", 0, 1, 10).tick(19.5);
        steady(s, "sim-1", 900, 1, 10).tick(918.5).tick(919.5);
        assertThat(s.published()).containsExactly("NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)",
                "NodeRecovered sim-1", "NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)");
    }

    @Test
    void aRestartForgetsTheGapsSoTheDowntimeIsNoHeartbeatGap() {
        RecoveryScenario s = steady(aRecovery().build(), "sim-1", 0, 1, 10).restart(500).caughtUp(500);
        s.tick(510.5);
        assertThat(s.published()).containsExactly("NodeFailed sim-1: no heartbeat for 10.5 s (timeout 10 s)");
    }
}
